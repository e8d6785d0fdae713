// The JWKS/discovery server (test/global/jwks-server.ts) as tests see it.
import { inject } from 'vitest';

export const jwksBase = (): string => `http://127.0.0.1:${inject('jwksServerPort')}`;
export const jwksURL = (name: string): string => `${jwksBase()}/jwks/${name}`;
/** The discovery base URL (the issuer); the document is served at its well-known suffix. */
export const discoveryURL = (name: string): string => `${jwksBase()}/discovery/${name}`;

async function put(path: string, body: string): Promise<void> {
  const res = await fetch(`${jwksBase()}${path}`, { method: 'PUT', body });
  if (res.status !== 204) throw new Error(`jwks server PUT ${path}: ${res.status}`);
}

/** Serves `jwks` (an object, or a raw string for malformed documents) at jwksURL(name). */
export async function putJwks(name: string, jwks: { keys: unknown[] } | string): Promise<void> {
  await put(`/jwks/${name}`, typeof jwks === 'string' ? jwks : JSON.stringify(jwks));
}

/** Serves a discovery document whose issuer is discoveryURL(name) unless `doc` overrides it. */
export async function putDiscovery(name: string, doc: Record<string, unknown>): Promise<void> {
  await put(`/discovery/${name}`, JSON.stringify({ issuer: discoveryURL(name), ...doc }));
}

export async function removeDoc(kind: 'jwks' | 'discovery', name: string): Promise<void> {
  await fetch(`${jwksBase()}/${kind}/${name}`, { method: 'DELETE' });
}

/** GETs the server answered for a document so far. */
export async function hits(kind: 'jwks' | 'discovery', name: string): Promise<number> {
  const path = kind === 'jwks' ? `/jwks/${name}` : `/discovery/${name}/.well-known/openid-configuration`;
  const res = await fetch(`${jwksBase()}/hits?path=${encodeURIComponent(path)}`);
  return ((await res.json()) as { hits: number }).hits;
}
