// The JWT auth method's config as stored: where signing keys come from, the OIDC client and
// defaults (written by paths/config.ts).

import { getJSON, type Storage } from '../../framework/storage';

export interface JwksPair {
  jwksUrl: string;
  jwksCaPem: string;
}

export interface JwtConfig {
  oidcDiscoveryUrl: string;
  oidcDiscoveryCaPem: string;
  oidcClientId: string;
  oidcClientSecret: string;
  /** '' (query), 'query' or 'form_post'. */
  oidcResponseMode: string;
  /** Empty means ['code']. */
  oidcResponseTypes: string[];
  jwksUrl: string;
  jwksCaPem: string;
  jwksPairs: JwksPair[];
  jwtValidationPubkeys: string[];
  jwtSupportedAlgs: string[];
  boundIssuer: string;
  defaultRole: string;
  providerConfig: Record<string, unknown>;
  namespaceInState: boolean;
  unsupportedCriticalCertExtensions: string[];
  /** Changes on every write: key and discovery caches are keyed by it. */
  version: string;
}

/** Vault's classification of a config (jwtConfig.authType). */
export type AuthType = 'static' | 'jwks' | 'multi-jwks' | 'discovery' | 'oidc-flow';

export function authType(c: JwtConfig): AuthType {
  if (c.jwtValidationPubkeys.length > 0) return 'static';
  if (c.jwksUrl) return 'jwks';
  if (c.jwksPairs.length > 0) return 'multi-jwks';
  return c.oidcClientId && c.oidcClientSecret ? 'oidc-flow' : 'discovery';
}

/** Whether the config allows a response type ('code' when none are configured). */
export function hasResponseType(c: JwtConfig, type: string): boolean {
  return c.oidcResponseTypes.length === 0 ? type === 'code' : c.oidcResponseTypes.includes(type);
}

export const CONFIG_KEY = 'config';

export async function loadConfig(storage: Storage): Promise<JwtConfig | null> {
  return getJSON<JwtConfig>(storage, CONFIG_KEY);
}
