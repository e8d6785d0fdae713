// The scriptable OpenID provider (test/global/oidc-stub.ts) as tests see it.
import { inject } from 'vitest';
import type { Script, TokenRequest } from '../global/oidc-stub';

export type { Script, TokenRequest };

const base = (): string => `http://127.0.0.1:${inject('oidcStubPort')}`;

/** The issuer (and discovery base URL) of provider `name`. */
export const stubIssuer = (name: string): string => `${base()}/${name}`;

/** Sets what provider `name` does next (and forgets the requests it saw). */
export async function script(name: string, s: Script): Promise<void> {
  const res = await fetch(`${stubIssuer(name)}/script`, { method: 'PUT', body: JSON.stringify(s) });
  if (res.status !== 200) throw new Error(`oidc stub script: ${res.status}`);
}

/** What the token endpoint received since the last script, and how often userinfo was asked. */
export async function seen(name: string): Promise<{ requests: TokenRequest[]; userinfoCalls: number }> {
  return (await (await fetch(`${stubIssuer(name)}/requests`)).json()) as { requests: TokenRequest[]; userinfoCalls: number };
}

/** An ID token signed by provider `name` (iss filled in), for the id_token response type. */
export async function signedIdToken(name: string, claims: Record<string, unknown>, signer?: Script['signer']): Promise<string> {
  const res = await fetch(`${stubIssuer(name)}/sign`, { method: 'POST', body: JSON.stringify({ claims, signer }) });
  return ((await res.json()) as { token: string }).token;
}
