// The OIDC flow against the scriptable provider (test/global/oidc-stub.ts), for engine-level
// tests: a mount configured for the code flow with role "web", and the calls a browser would make.
import { expect } from 'vitest';
import type { LogicalResponse } from '../../../../src/framework/backend';
import { getJSON } from '../../../../src/framework/storage';
import { bareState } from '../../../../src/auth/jwt/oidc-redirect';
import type { PendingRequest } from '../../../../src/auth/jwt/oidc-state';
import { script, stubIssuer } from '../../../helpers/oidc-stub';
import { engine, type Engine } from './harness';

export const CLIENT = { oidc_client_id: 'coffer', oidc_client_secret: 'coffer-secret' };
export const REDIRECT = 'https://vault.example.com:8200/ui/vault/auth/oidc/oidc/callback';
export const CLI_REDIRECT = 'http://localhost:8250/oidc/callback';
export const API_REDIRECT = 'https://vault.example.com:8200/v1/auth/oidc/oidc/callback';
export const ROLE = {
  role_type: 'oidc',
  user_claim: 'email',
  groups_claim: 'groups',
  claim_mappings: { name: 'full_name' },
  oidc_scopes: 'email,groups',
  allowed_redirect_uris: [REDIRECT, CLI_REDIRECT, API_REDIRECT],
  token_policies: 'dev',
  token_ttl: '1h',
};
export const LOGIN_FAILED = 'Vault login failed.';
export const now = () => Math.floor(Date.now() / 1000);

let providers = 0;

/** A provider name no other test uses. */
export const newProviderName = (): string => `p${++providers}`;

export interface Flow {
  e: Engine;
  /** The stub provider's name (each test gets its own). */
  idp: string;
  /** Starts a login; returns the auth_url parsed, with its state and nonce. */
  start(data?: Record<string, unknown>): Promise<{ url: URL; state: string; nonce: string }>;
  callback(data: Record<string, unknown>, opts?: { clientIP?: string }): Promise<LogicalResponse>;
  post(data: Record<string, unknown>): Promise<LogicalResponse>;
  pending(state: string): Promise<PendingRequest | null>;
}

/** `apis`: where the engine's providers find the APIs they call (emulators). */
export async function flow(config: Record<string, unknown> = {}, role: Record<string, unknown> = {}, idpScript: Parameters<typeof script>[1] = {}, apis: Parameters<typeof engine>[0] = {}): Promise<Flow> {
  const idp = newProviderName();
  await script(idp, idpScript);
  const e = engine(apis);
  const w = await e.call('write', 'config', { oidc_discovery_url: stubIssuer(idp), ...CLIENT, ...config });
  expect(w).toEqual({});
  await e.call('write', 'role/web', { ...ROLE, ...role });
  return {
    e,
    idp,
    start: async (data = {}) => {
      const r = await e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: REDIRECT, ...data });
      const url = new URL(r.data!.auth_url as string);
      return { url, state: bareState(url.searchParams.get('state')!), nonce: url.searchParams.get('nonce')! };
    },
    callback: (data, opts) => e.call('read', 'oidc/callback', data, opts),
    post: (data) => e.call('write', 'oidc/callback', data),
    pending: (state) => getJSON<PendingRequest>(e.storage, `oidc/state/${state}`),
  };
}

/** A refusal the callback answers (rather than throws, so the consumed state stays deleted). */
export function expectAnswered(r: LogicalResponse, status: number, message: string): void {
  expect(r.raw).toEqual({ status, body: { errors: [message] } });
}

/** The claims a well-behaved provider puts in the ID token for `nonce`. */
export const idClaims = (nonce: string, extra: Record<string, unknown> = {}) => ({ sub: 'alice', nonce, email: 'alice@example.com', groups: ['eng'], name: 'Alice', ...extra });
