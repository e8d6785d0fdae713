// auth/<mount>/config: where signing keys come from (exactly one of PEM keys, a JWKS URL, JWKS
// pairs or an OIDC discovery URL), the OIDC client, and defaults. Remote URLs are fetched when
// the config is written, so a typo fails the write rather than every login. The client secret is
// stored (behind the barrier) but never returned.

import { pemBlocks } from '../../../crypto/pem';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import type { PathDef } from '../../../framework/backend';
import { badRequest, notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { putJSON } from '../../../framework/storage';
import { randomUUID } from '../../../crypto/random';
import { checkProviderKeys, configuredProvider, ProviderConfigError, providerConfigView } from '../providers';
import { ASYMMETRIC_ALGS, fetchDiscovery, fetchKeySet, pemToJwk, primeCache, type DiscoveryDocument, type KeySet } from '../keysource';
import { CONFIG_KEY, hasResponseType, loadConfig, type JwksPair, type JwtConfig } from '../config';

const configFields: FieldSchemas = {
  oidc_discovery_url: { type: 'string', description: 'OIDC Discovery URL, without any .well-known component (base path).' },
  oidc_discovery_ca_pem: { type: 'string', description: 'CA certificate or chain (PEM) for connections to the OIDC Discovery URL.' },
  oidc_client_id: { type: 'string', description: 'The OAuth Client ID configured with your OIDC provider.' },
  oidc_client_secret: { type: 'string', description: 'The OAuth Client Secret configured with your OIDC provider.' },
  oidc_response_mode: { type: 'string', description: "The response mode of the OAuth2 request: 'query' or 'form_post'." },
  oidc_response_types: { type: 'comma-string-list', description: "The response types to request: 'code' and 'id_token'. Defaults to 'code'." },
  jwks_url: { type: 'string', description: 'JWKS URL to use to authenticate signatures.' },
  jwks_ca_pem: { type: 'string', description: 'CA certificate or chain (PEM) for connections to the JWKS URL.' },
  jwks_pairs: { type: 'any', description: 'List of {jwks_url, jwks_ca_pem} objects, for several JWKS URLs.' },
  default_role: { type: 'lowercase-string', description: 'The role used when a login names none.' },
  jwt_validation_pubkeys: { type: 'comma-string-list', description: 'PEM-encoded public keys to authenticate signatures locally.' },
  jwt_supported_algs: { type: 'comma-string-list', description: 'Supported signing algorithms.' },
  bound_issuer: { type: 'string', description: "The value against which to match the 'iss' claim in a JWT." },
  provider_config: { type: 'map', description: 'Provider-specific configuration.' },
  namespace_in_state: { type: 'bool', description: 'Pass the namespace in the OIDC state parameter. Defaults to true for new configs.' },
  unsupported_critical_cert_extensions: { type: 'comma-string-list', description: 'ASN.1 OIDs of critical certificate extensions to ignore.' },
};

function configView(c: JwtConfig): Record<string, unknown> {
  return {
    oidc_discovery_url: c.oidcDiscoveryUrl,
    oidc_discovery_ca_pem: c.oidcDiscoveryCaPem,
    oidc_client_id: c.oidcClientId,
    oidc_response_mode: c.oidcResponseMode,
    oidc_response_types: c.oidcResponseTypes,
    default_role: c.defaultRole,
    jwt_validation_pubkeys: c.jwtValidationPubkeys,
    jwt_supported_algs: c.jwtSupportedAlgs,
    jwks_url: c.jwksUrl,
    jwks_pairs: c.jwksPairs.map((p) => ({ jwks_url: p.jwksUrl, jwks_ca_pem: p.jwksCaPem })),
    jwks_ca_pem: c.jwksCaPem,
    bound_issuer: c.boundIssuer,
    provider_config: providerConfigView(c.providerConfig),
    namespace_in_state: c.namespaceInState,
    unsupported_critical_cert_extensions: c.unsupportedCriticalCertExtensions,
  };
}

/** True when the text holds at least one parseable PEM certificate (Go's AppendCertsFromPEM). */
function parsesAsCertificates(pem: string): boolean {
  let ok = false;
  for (const { der } of pemBlocks(pem, 'CERTIFICATE')) {
    try {
      AsnConvert.parse(der, Certificate);
      ok = true;
    } catch {
      // Go skips blocks it cannot parse.
    }
  }
  return ok;
}

function parseJwksPairs(raw: unknown): JwksPair[] {
  if (raw === undefined || raw === null || raw === '') return [];
  if (!Array.isArray(raw)) throw badRequest('invalid jwks_pairs: expected a list of objects');
  return raw.map((item) => {
    const obj = typeof item === 'string' ? safeJSON(item) : item;
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw badRequest('invalid jwks_pairs: each pair must be an object');
    const { jwks_url: url, jwks_ca_pem: ca } = obj as Record<string, unknown>;
    if (typeof url !== 'string' || url === '') throw badRequest("invalid jwks_pairs: 'jwks_url' is required in each pair");
    if (ca !== undefined && typeof ca !== 'string') throw badRequest("invalid jwks_pairs: 'jwks_ca_pem' must be a string");
    return { jwksUrl: url, jwksCaPem: ca ?? '' };
  });
}

function safeJSON(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}

const OID_RE = /^[0-2](\.(0|[1-9]\d*))+$/;

/** Vault's %v of a string list: [a b]. */
const goList = (list: string[]): string => `[${list.join(' ')}]`;

/** Fetches a JWKS URL at write time: Vault's "error checking jwks URL" and "error checking jwks_ca_pem". */
async function checkJwks(url: string, caPem: string, fetched: Map<string, KeySet>): Promise<void> {
  if (caPem && !parsesAsCertificates(caPem)) throw badRequest('error checking jwks_ca_pem');
  try {
    fetched.set(url, await fetchKeySet(url));
  } catch {
    throw badRequest(`error checking jwks URL ${url}`);
  }
}

async function buildConfig(f: FieldData, existing: JwtConfig | null): Promise<{ config: JwtConfig; discovery?: DiscoveryDocument; keySets: Map<string, KeySet> }> {
  const c: JwtConfig = {
    oidcDiscoveryUrl: f.get('oidc_discovery_url'),
    oidcDiscoveryCaPem: f.get('oidc_discovery_ca_pem'),
    oidcClientId: f.get('oidc_client_id'),
    oidcClientSecret: f.get('oidc_client_secret'),
    oidcResponseMode: f.get('oidc_response_mode'),
    oidcResponseTypes: f.get('oidc_response_types'),
    jwksUrl: f.get('jwks_url'),
    jwksCaPem: f.get('jwks_ca_pem'),
    jwksPairs: parseJwksPairs(f.get('jwks_pairs')),
    jwtValidationPubkeys: f.get('jwt_validation_pubkeys'),
    jwtSupportedAlgs: f.get('jwt_supported_algs'),
    boundIssuer: f.get('bound_issuer'),
    defaultRole: f.get('default_role'),
    providerConfig: f.get('provider_config'),
    // New configs default to true; an update without the field keeps the stored value.
    namespaceInState: f.has('namespace_in_state') ? f.get('namespace_in_state') : existing ? existing.namespaceInState : true,
    unsupportedCriticalCertExtensions: f.get('unsupported_critical_cert_extensions'),
    version: randomUUID(),
  };
  const keySets = new Map<string, KeySet>();
  let discovery: DiscoveryDocument | undefined;

  // Vault's checks, in its order (the first that applies decides).
  const methods = [c.oidcDiscoveryUrl !== '', c.jwtValidationPubkeys.length > 0, c.jwksUrl !== '', c.jwksPairs.length > 0].filter(Boolean).length;
  if (methods !== 1) throw badRequest("exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set");
  if ((c.oidcClientId !== '') !== (c.oidcClientSecret !== '')) throw badRequest("both 'oidc_client_id' and 'oidc_client_secret' must be set for OIDC");
  if (c.oidcDiscoveryUrl) {
    if (c.oidcDiscoveryCaPem && !parsesAsCertificates(c.oidcDiscoveryCaPem)) throw badRequest('error checking oidc discovery URL');
    try {
      discovery = await fetchDiscovery(c.oidcDiscoveryUrl);
      keySets.set(discovery.jwks_uri, await fetchKeySet(discovery.jwks_uri));
    } catch {
      throw badRequest('error checking oidc discovery URL');
    }
  } else if (c.oidcClientId) {
    throw badRequest("'oidc_discovery_url' must be set for OIDC");
  } else if (c.jwksCaPem && c.jwksPairs.length > 0) {
    throw badRequest("CA PEMs must be provided as part of the 'jwks_pairs' when using multiple JWKS URLs");
  } else if (c.jwksPairs.length > 0 && c.boundIssuer) {
    throw badRequest("Bound issuer is not supported for use with 'jwks_pairs'");
  } else if (c.jwksUrl) {
    await checkJwks(c.jwksUrl, c.jwksCaPem, keySets);
  } else if (c.jwksPairs.length > 0) {
    for (const p of c.jwksPairs) await checkJwks(p.jwksUrl, p.jwksCaPem, keySets);
  } else {
    for (const pem of c.jwtValidationPubkeys) {
      try {
        await pemToJwk(pem);
      } catch (e) {
        throw badRequest(`error parsing public key: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
  for (const oid of c.unsupportedCriticalCertExtensions) {
    if (!OID_RE.test(oid)) throw badRequest(`error parsing extension OID: invalid OID ${JSON.stringify(oid)}`);
  }

  const badAlg = c.jwtSupportedAlgs.find((a) => !ASYMMETRIC_ALGS.includes(a));
  if (badAlg !== undefined) throw badRequest(`invalid jwt_supported_algs: unsupported signing algorithm ${JSON.stringify(badAlg)}`);
  if (!c.oidcResponseTypes.every((t) => t === 'code' || t === 'id_token')) {
    throw badRequest(`invalid response_types ${goList(c.oidcResponseTypes)}. 'code' and 'id_token' are allowed`);
  }
  if (c.oidcResponseMode === '' || c.oidcResponseMode === 'query') {
    if (hasResponseType(c, 'id_token')) throw badRequest('query response_mode may not be used with an id_token response_type');
  } else if (c.oidcResponseMode !== 'form_post') {
    throw badRequest(`invalid response_mode: ${JSON.stringify(c.oidcResponseMode)}`);
  }
  try {
    await checkProviderKeys(configuredProvider(c.providerConfig, c.oidcDiscoveryUrl));
  } catch (e) {
    if (e instanceof ProviderConfigError) throw badRequest(`invalid provider_config: ${e.message}`);
    throw e;
  }
  return { config: c, discovery, keySets };
}

export function configPaths(): PathDef[] {
  return [
    {
      pattern: 'config',
      fields: configFields,
      summary: 'Configure the JWT authentication backend.',
      operations: {
        read: async (req) => {
          const config = await loadConfig(req.storage);
          if (!config) throw notFound();
          return { data: configView(config) };
        },
        update: async (req, f) => {
          const { config, discovery, keySets } = await buildConfig(f, await loadConfig(req.storage));
          await putJSON(req.storage, CONFIG_KEY, config);
          primeCache(config.version, { discovery, keySets });
          return null;
        },
      },
    },
  ];
}
