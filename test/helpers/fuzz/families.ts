// The path families the fuzzer covers: every engine and method Coffer serves, each with a valid
// body to break and, where it stores what it is given, a check that it reads back exactly (or,
// after a refusal, that nothing was written). Left out on purpose: sys/seal, sys/generate-root and
// enabling audit devices, which would change what every later case meets (a sealed cluster, or a
// device at a dead address that fails every request closed); their own tests cover bad input.

import { canonical, canonicalAt } from './exact-json';
import type { MutatedBody, Template } from './values';

export interface Reply {
  status: number;
  text: string;
}

export interface FuzzContext {
  /** A request as the root token (or `token`), body as JSON text. */
  send(method: string, path: string, body?: string, token?: string): Promise<Reply>;
}

export interface Family {
  name: string;
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'GET';
  /** The path a case writes, for the name it owns. */
  path(name: string): string;
  template(name: string): Template;
  contentType?: string;
  /** Headers every request of the family carries. */
  headers?: Record<string, string>;
  /**
   * After the request: a failure message, or null. `fresh` is true when the case's name is its
   * own (nothing else wrote it), so a refused write must have left nothing behind.
   */
  check?(ctx: FuzzContext, name: string, sent: MutatedBody, reply: Reply, fresh: boolean): Promise<string | null>;
}

const str = (s: string): string => JSON.stringify(s);
const ok = (r: Reply): boolean => r.status >= 200 && r.status < 300;

/** The field's JSON text when the case sent it as a JSON object. */
const sentObject = (sent: MutatedBody, field: string): string | undefined => {
  const v = sent.fields?.[field];
  return v !== undefined && v.trimStart().startsWith('{') ? v : undefined;
};

/**
 * The field's JSON text when it is an object of strings: a typed map (token meta, entity metadata,
 * custom_metadata) converts other values (1 becomes "1", as Vault's weak decoding does), so only
 * string maps are compared as sent; an empty one reads back as null, as Vault shows it.
 */
const sentStringMap = (sent: MutatedBody, field: string): string | undefined => {
  const text = sentObject(sent, field);
  if (text === undefined) return undefined;
  const value = JSON.parse(text) as Record<string, unknown>;
  const values = Object.values(value);
  return values.length > 0 && values.every((v) => typeof v === 'string') ? text : undefined;
};

/** Reads `readPath`: on success the value at `at` must equal `expected`; after a refusal of a fresh name, a 404. */
async function readBack(ctx: FuzzContext, readPath: string, at: string[], expected: string | undefined, reply: Reply, fresh: boolean): Promise<string | null> {
  const read = await ctx.send('GET', readPath);
  if (ok(reply)) {
    if (expected === undefined) return null;
    if (read.status !== 200) return `written (${reply.status}) but reading ${readPath} answered ${read.status}: ${read.text.slice(0, 300)}`;
    const got = canonicalAt(read.text, at);
    const want = canonical(expected);
    return got === want ? null : `read back ${readPath} differs:\n  sent ${want.slice(0, 400)}\n  got  ${String(got).slice(0, 400)}`;
  }
  if (fresh && read.status !== 404) return `refused (${reply.status}) but ${readPath} now exists (${read.status}): ${read.text.slice(0, 300)}`;
  return null;
}

/** Arbitrary user data (KV, cubbyhole): the whole body is the secret. */
const DATA_TEMPLATE: Template = {
  user: '"alice"',
  count: '42',
  ratio: '0.5',
  nested: '{"list":[1,2,3],"flag":true}',
  empty: 'null',
};

export const FAMILIES: Family[] = [
  // ---- secrets that store what they are given
  {
    name: 'kv v1 write',
    method: 'PUT',
    path: (n) => `fuzz-kv1/${n}`,
    template: () => DATA_TEMPLATE,
    check: async (ctx, n, sent, reply, fresh) => readBack(ctx, `fuzz-kv1/${n}`, ['data'], sent.fields ? sent.body as string : undefined, reply, fresh),
  },
  {
    name: 'cubbyhole write',
    method: 'POST',
    path: (n) => `cubbyhole/${n}`,
    template: () => DATA_TEMPLATE,
    check: async (ctx, n, sent, reply, fresh) => readBack(ctx, `cubbyhole/${n}`, ['data'], sent.fields ? sent.body as string : undefined, reply, fresh),
  },
  {
    name: 'kv v2 data write',
    method: 'POST',
    path: (n) => `fuzz-kv2/data/${n}`,
    template: () => ({ data: '{"user":"alice","count":42,"deep":{"a":[1.0,2]}}', options: '{"cas":0}' }),
    check: async (ctx, n, sent, reply, fresh) => readBack(ctx, `fuzz-kv2/data/${n}`, ['data', 'data'], sentObject(sent, 'data'), reply, fresh),
  },
  {
    name: 'kv v2 data patch',
    method: 'PATCH',
    contentType: 'application/merge-patch+json',
    path: () => 'fuzz-kv2/data/patched',
    template: () => ({ data: '{"added":1,"user":null}', options: '{}' }),
  },
  {
    name: 'kv v2 metadata write',
    method: 'POST',
    path: (n) => `fuzz-kv2/metadata/${n}`,
    template: () => ({ max_versions: '5', cas_required: 'false', delete_version_after: '"1h"', custom_metadata: '{"owner":"team-a","tier":"1"}' }),
    check: async (ctx, n, sent, reply, fresh) => readBack(ctx, `fuzz-kv2/metadata/${n}`, ['data', 'custom_metadata'], sentStringMap(sent, 'custom_metadata'), reply, fresh),
  },
  {
    name: 'kv v2 metadata patch',
    method: 'PATCH',
    contentType: 'application/merge-patch+json',
    path: () => 'fuzz-kv2/metadata/patched',
    template: () => ({ max_versions: '3', custom_metadata: '{"owner":null,"x":"y"}' }),
  },
  {
    name: 'kv v2 config',
    method: 'POST',
    path: () => 'fuzz-kv2-config/config',
    template: () => ({ max_versions: '10', cas_required: 'false', delete_version_after: '"0s"' }),
  },
  {
    name: 'kv v2 delete versions',
    method: 'POST',
    path: () => 'fuzz-kv2/delete/patched',
    template: () => ({ versions: '[1]' }),
  },
  {
    name: 'kv v2 destroy versions',
    method: 'PUT',
    path: () => 'fuzz-kv2/destroy/never-written',
    template: () => ({ versions: '[1,2]' }),
  },
  {
    name: 'response wrapping',
    method: 'POST',
    path: () => 'sys/wrapping/wrap',
    headers: { 'X-Vault-Wrap-TTL': '5m' },
    template: () => DATA_TEMPLATE,
    check: async (ctx, _n, sent, reply) => {
      if (!ok(reply) || !sent.fields) return null;
      const token = (JSON.parse(reply.text) as { wrap_info?: { token?: string } }).wrap_info?.token;
      if (!token) return `wrap answered ${reply.status} without a wrapping token: ${reply.text.slice(0, 200)}`;
      const unwrapped = await ctx.send('POST', 'sys/wrapping/unwrap', undefined, token);
      if (unwrapped.status !== 200) return `unwrap answered ${unwrapped.status}: ${unwrapped.text.slice(0, 200)}`;
      const got = canonicalAt(unwrapped.text, ['data']);
      return got === canonical(sent.body as string) ? null : `unwrapped data differs: sent ${canonical(sent.body as string).slice(0, 300)} got ${String(got).slice(0, 300)}`;
    },
  },
  {
    name: 'wrapping lookup/unwrap/rewrap',
    method: 'POST',
    path: () => 'sys/wrapping/lookup',
    template: () => ({ token: '"hvs.notawrappingtoken"' }),
  },
  // ---- system
  {
    name: 'enable a secrets engine',
    method: 'POST',
    path: (n) => `sys/mounts/fuzz-m-${n}`,
    template: () => ({
      type: '"kv"',
      description: '"a mount"',
      config: '{"default_lease_ttl":"1h","max_lease_ttl":"2h","force_no_cache":false}',
      options: '{"version":"2"}',
      local: 'false',
      seal_wrap: 'false',
      plugin_name: '""',
    }),
    check: async (ctx, n, sent, reply, fresh) => {
      if (!ok(reply)) {
        if (!fresh) return null;
        const mounts = await ctx.send('GET', 'sys/mounts');
        return Object.hasOwn((JSON.parse(mounts.text) as { data: object }).data, `fuzz-m-${n}/`) ? `refused (${reply.status}) but the mount exists` : null;
      }
      const description = sent.fields?.description;
      return readBack(ctx, `sys/mounts/fuzz-m-${n}`, ['data', 'description'], description?.startsWith('"') ? description : undefined, reply, false);
    },
  },
  {
    name: 'enable an auth method',
    method: 'POST',
    path: (n) => `sys/auth/fuzz-a-${n}`,
    template: () => ({ type: '"jwt"', description: '"logins"', config: '{"default_lease_ttl":"1h"}', local: 'false' }),
  },
  {
    name: 'tune a mount',
    method: 'POST',
    path: () => 'sys/mounts/fuzz-tune/tune',
    template: () => ({
      default_lease_ttl: '"1h"',
      max_lease_ttl: '"2h"',
      description: '"tuned"',
      audit_non_hmac_request_keys: '["a"]',
      listing_visibility: '"hidden"',
      passthrough_request_headers: '["X-Custom"]',
      allowed_response_headers: '["X-Custom"]',
    }),
  },
  {
    name: 'move a mount',
    method: 'POST',
    path: () => 'sys/remount',
    template: (n) => ({ from: str(`fuzz-nothing-${n}`), to: str(`fuzz-moved-${n}`) }),
  },
  {
    name: 'write an ACL policy',
    method: 'PUT',
    path: (n) => `sys/policies/acl/fuzz-p-${n}`,
    template: () => ({ policy: str('path "secret/*" {\n  capabilities = ["read", "list"]\n  allowed_parameters = { "a" = [] }\n}') }),
    check: async (ctx, n, sent, reply, fresh) => {
      const policy = sent.fields?.policy;
      return readBack(ctx, `sys/policies/acl/fuzz-p-${n}`, ['data', 'policy'], policy?.startsWith('"') ? policy : undefined, reply, fresh);
    },
  },
  {
    name: 'capabilities',
    method: 'POST',
    path: () => 'sys/capabilities-self',
    template: () => ({ paths: '["secret/a","sys/mounts"]', path: '"secret/a"' }),
  },
  {
    name: 'leases',
    method: 'PUT',
    path: () => 'sys/leases/lookup',
    template: () => ({ lease_id: '"fuzz-kv1/none/abc"' }),
  },
  {
    name: 'lease renew',
    method: 'PUT',
    path: () => 'sys/leases/renew',
    template: () => ({ lease_id: '"fuzz-kv1/none/abc"', increment: '"1h"' }),
  },
  {
    name: 'tools: hash',
    method: 'POST',
    path: () => 'sys/tools/hash',
    template: () => ({ input: '"aGVsbG8="', algorithm: '"sha2-512"', format: '"hex"' }),
  },
  {
    name: 'tools: random',
    method: 'POST',
    path: () => 'sys/tools/random',
    template: () => ({ bytes: '32', format: '"base64"', source: '"platform"' }),
  },
  {
    name: 'unseal (already unsealed)',
    method: 'POST',
    path: () => 'sys/unseal',
    template: () => ({ key: '"abc"', reset: 'false', migrate: 'false' }),
  },
  {
    name: 'client counts config',
    method: 'POST',
    path: () => 'sys/internal/counters/config',
    template: () => ({ retention_months: '48', enabled: '"default"' }),
  },
  // ---- tokens and identity
  {
    name: 'create a token',
    method: 'POST',
    path: () => 'auth/token/create',
    template: () => ({
      policies: '["default"]',
      ttl: '"1h"',
      explicit_max_ttl: '"2h"',
      meta: '{"team":"a","user":"alice"}',
      renewable: 'true',
      num_uses: '0',
      display_name: '"fuzz"',
      no_parent: 'false',
      type: '"service"',
    }),
    check: async (ctx, _n, sent, reply) => {
      const meta = sentStringMap(sent, 'meta');
      if (!ok(reply) || !meta) return null;
      const token = (JSON.parse(reply.text) as { auth?: { client_token?: string } }).auth?.client_token;
      if (!token) return `token create answered ${reply.status} without a token`;
      const looked = await ctx.send('POST', 'auth/token/lookup', JSON.stringify({ token }));
      if (looked.status !== 200) return `lookup of the new token answered ${looked.status}`;
      const got = canonicalAt(looked.text, ['data', 'meta']);
      return got === canonical(meta) ? null : `token meta differs: sent ${canonical(meta)} got ${got}`;
    },
  },
  {
    name: 'token role',
    method: 'POST',
    path: (n) => `auth/token/roles/fuzz-r-${n}`,
    template: () => ({
      allowed_policies: '["a","b"]',
      disallowed_policies: '["root"]',
      token_ttl: '"1h"',
      token_max_ttl: '"2h"',
      token_period: '"0"',
      orphan: 'false',
      path_suffix: '"suffix"',
      token_bound_cidrs: '["127.0.0.1/32"]',
      token_type: '"service"',
    }),
    check: async (ctx, n, _sent, reply, fresh) => readBack(ctx, `auth/token/roles/fuzz-r-${n}`, [], undefined, reply, fresh),
  },
  {
    name: 'token lookup / renew / revoke',
    method: 'POST',
    path: () => 'auth/token/lookup-accessor',
    template: () => ({ accessor: '"notanaccessor"' }),
  },
  {
    name: 'identity entity',
    method: 'POST',
    path: () => 'identity/entity',
    template: (n) => ({ name: str(`fuzz-e-${n}`), metadata: '{"team":"a"}', policies: '["p1"]', disabled: 'false' }),
    check: async (ctx, n, sent, reply) => {
      const metadata = sentStringMap(sent, 'metadata');
      // Read back by name only where the name is one path segment.
      if (!ok(reply) || !metadata || sent.fields?.name !== str(`fuzz-e-${n}`) || n.includes('/')) return null;
      return readBack(ctx, `identity/entity/name/${encodeURIComponent(`fuzz-e-${n}`)}`, ['data', 'metadata'], metadata, reply, false);
    },
  },
  {
    name: 'identity group',
    method: 'POST',
    path: () => 'identity/group',
    template: (n) => ({ name: str(`fuzz-g-${n}`), type: '"internal"', policies: '["p1"]', member_entity_ids: '[]', metadata: '{"a":"b"}' }),
  },
  {
    name: 'identity lookup',
    method: 'POST',
    path: () => 'identity/lookup/entity',
    template: () => ({ name: '"nobody"' }),
  },
  // ---- transit
  {
    name: 'transit key create',
    method: 'POST',
    path: (n) => `fuzz-transit/keys/k-${n}`,
    template: () => ({
      type: '"aes256-gcm96"',
      derived: 'false',
      exportable: 'false',
      allow_plaintext_backup: 'false',
      auto_rotate_period: '"0"',
      key_size: '0',
      convergent_encryption: 'false',
    }),
    check: async (ctx, n, _sent, reply, fresh) => readBack(ctx, `fuzz-transit/keys/k-${n}`, [], undefined, reply, fresh),
  },
  {
    name: 'transit key config',
    method: 'POST',
    path: () => 'fuzz-transit/keys/configured/config',
    template: () => ({ min_decryption_version: '1', min_encryption_version: '0', deletion_allowed: 'false', exportable: 'false', auto_rotate_period: '"24h"' }),
  },
  {
    name: 'transit encrypt',
    method: 'POST',
    path: () => 'fuzz-transit/encrypt/aes',
    template: () => ({ plaintext: '"aGVsbG8gd29ybGQ="', associated_data: '""', key_version: '0', partial_failure_response_code: '0' }),
    check: async (ctx, _n, sent, reply) => {
      const plaintext = sent.fields?.plaintext;
      if (!ok(reply) || !plaintext?.startsWith('"') || sent.fields?.batch_input !== undefined) return null;
      const ciphertext = (JSON.parse(reply.text) as { data?: { ciphertext?: string } }).data?.ciphertext;
      // The associated data goes back exactly as it was sent (a number's text is its string form).
      const decrypted = await ctx.send('POST', 'fuzz-transit/decrypt/aes', `{"ciphertext":${JSON.stringify(ciphertext)},"associated_data":${sent.fields?.associated_data ?? '""'}}`);
      if (decrypted.status !== 200) return `decrypting what encrypt returned answered ${decrypted.status}: ${decrypted.text.slice(0, 200)}`;
      const got = (JSON.parse(decrypted.text) as { data: { plaintext: string } }).data.plaintext;
      const bytes = (b64: string) => Array.from(atob(b64), (c) => c.charCodeAt(0)).join(',');
      return bytes(got) === bytes(JSON.parse(plaintext) as string) ? null : `decrypted ${got}, encrypted ${plaintext}`;
    },
  },
  {
    name: 'transit encrypt batch',
    method: 'POST',
    path: () => 'fuzz-transit/encrypt/aes',
    template: () => ({ batch_input: '[{"plaintext":"aGVsbG8=","reference":"a"},{"plaintext":"d29ybGQ=","reference":"b"}]' }),
  },
  {
    name: 'transit decrypt',
    method: 'POST',
    path: () => 'fuzz-transit/decrypt/aes',
    template: () => ({ ciphertext: '"vault:v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAA"', batch_input: 'null' }),
  },
  {
    name: 'transit rewrap and datakey',
    method: 'POST',
    path: () => 'fuzz-transit/datakey/plaintext/aes',
    template: () => ({ bits: '256', context: '""' }),
  },
  {
    name: 'transit sign',
    method: 'POST',
    path: () => 'fuzz-transit/sign/ec',
    template: () => ({ input: '"aGVsbG8="', hash_algorithm: '"sha2-256"', marshaling_algorithm: '"asn1"', prehashed: 'false', key_version: '0' }),
  },
  {
    name: 'transit verify',
    method: 'POST',
    path: () => 'fuzz-transit/verify/ec',
    template: () => ({ input: '"aGVsbG8="', signature: '"vault:v1:MEUCIQ=="', hash_algorithm: '"sha2-256"' }),
  },
  {
    name: 'transit hmac',
    method: 'POST',
    path: () => 'fuzz-transit/hmac/aes',
    template: () => ({ input: '"aGVsbG8="', algorithm: '"sha2-256"', batch_input: '[{"input":"aGVsbG8="}]' }),
  },
  {
    name: 'transit restore',
    method: 'POST',
    path: (n) => `fuzz-transit/restore/r-${n}`,
    template: () => ({ backup: '"eyJwb2xpY3kiOnt9fQ=="', force: 'false' }),
    check: async (ctx, n, _sent, reply, fresh) => readBack(ctx, `fuzz-transit/keys/r-${n}`, [], undefined, reply, fresh),
  },
  {
    name: 'transit import',
    method: 'POST',
    path: (n) => `fuzz-transit/keys/i-${n}/import`,
    template: () => ({ ciphertext: '"AAAA"', type: '"aes256-gcm96"', hash_function: '"SHA256"' }),
    check: async (ctx, n, _sent, reply, fresh) => readBack(ctx, `fuzz-transit/keys/i-${n}`, [], undefined, reply, fresh),
  },
  // ---- PKI
  {
    name: 'pki role',
    method: 'POST',
    path: (n) => `fuzz-pki/roles/r-${n}`,
    template: () => ({
      allowed_domains: '["example.com"]',
      allow_subdomains: 'true',
      max_ttl: '"1h"',
      ttl: '"30m"',
      key_type: '"ec"',
      key_bits: '256',
      not_before_duration: '"30s"',
      allowed_uri_sans: '["spiffe://x/*"]',
      ou: '["a"]',
    }),
    check: async (ctx, n, _sent, reply, fresh) => readBack(ctx, `fuzz-pki/roles/r-${n}`, [], undefined, reply, fresh),
  },
  {
    name: 'pki issue',
    method: 'POST',
    path: () => 'fuzz-pki/issue/web',
    template: () => ({
      common_name: '"a.example.com"',
      alt_names: '"b.example.com"',
      ip_sans: '"127.0.0.1"',
      ttl: '"10m"',
      format: '"pem"',
      private_key_format: '"der"',
      exclude_cn_from_sans: 'false',
    }),
  },
  {
    name: 'pki sign',
    method: 'POST',
    path: () => 'fuzz-pki/sign/web',
    template: () => ({ csr: '"-----BEGIN CERTIFICATE REQUEST-----\\nMIIB\\n-----END CERTIFICATE REQUEST-----"', common_name: '"a.example.com"' }),
  },
  {
    name: 'pki generate root',
    method: 'POST',
    path: () => 'fuzz-pki/issuers/generate/root/internal',
    template: (n) => ({ common_name: '"Fuzz Root"', key_type: '"ec"', key_bits: '256', ttl: '"8760h"', issuer_name: str(`root-${n}`), max_path_length: '-1' }),
  },
  {
    name: 'pki revoke',
    method: 'POST',
    path: () => 'fuzz-pki/revoke',
    template: () => ({ serial_number: '"01:02:03"' }),
  },
  {
    name: 'pki crl config and tidy',
    method: 'POST',
    path: () => 'fuzz-pki/tidy',
    template: () => ({ tidy_cert_store: 'true', tidy_revoked_certs: 'true', safety_buffer: '"72h"' }),
  },
  {
    name: 'pki crl config',
    method: 'POST',
    path: () => 'fuzz-pki/config/crl',
    template: () => ({ expiry: '"72h"', disable: 'false', auto_rebuild: 'false', enable_delta: 'false' }),
  },
  // ---- JWT/OIDC
  {
    name: 'jwt role',
    method: 'POST',
    path: (n) => `auth/fuzz-jwt/role/r-${n}`,
    template: () => ({
      role_type: '"jwt"',
      user_claim: '"sub"',
      bound_audiences: '["coffer"]',
      bound_claims: '{"groups":["a","b"]}',
      claim_mappings: '{"email":"email"}',
      token_ttl: '"1h"',
      token_policies: '["default"]',
      clock_skew_leeway: '60',
    }),
    check: async (ctx, n, _sent, reply, fresh) => readBack(ctx, `auth/fuzz-jwt/role/r-${n}`, [], undefined, reply, fresh),
  },
  {
    name: 'jwt login',
    method: 'POST',
    path: () => 'auth/fuzz-jwt/login',
    template: () => ({ role: '"login"', jwt: '"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."' }),
  },
  {
    name: 'oidc auth url',
    method: 'POST',
    path: () => 'auth/fuzz-jwt/oidc/auth_url',
    template: () => ({ role: '"login"', redirect_uri: '"http://localhost/cb"', client_nonce: '"n"' }),
  },
];

/** Reads, lists and deletes with odd names and query strings, per engine. */
export const READ_PATHS: readonly ((name: string) => string)[] = [
  (n) => `fuzz-kv1/${n}`,
  (n) => `fuzz-kv2/data/${n}`,
  (n) => `fuzz-kv2/metadata/${n}`,
  (n) => `fuzz-kv2/subkeys/${n}`,
  (n) => `cubbyhole/${n}`,
  (n) => `fuzz-transit/keys/${n}`,
  (n) => `fuzz-transit/export/encryption-key/${n}`,
  (n) => `fuzz-transit/backup/${n}`,
  (n) => `fuzz-pki/cert/${n}`,
  (n) => `fuzz-pki/issuer/${n}`,
  (n) => `fuzz-pki/roles/${n}`,
  (n) => `identity/entity/name/${n}`,
  (n) => `identity/entity/id/${n}`,
  (n) => `identity/group/name/${n}`,
  (n) => `auth/token/roles/${n}`,
  (n) => `auth/fuzz-jwt/role/${n}`,
  (n) => `sys/policies/acl/${n}`,
  (n) => `sys/mounts/${n}`,
  (n) => `sys/internal/ui/mounts/${n}`,
  (n) => `sys/internal/counters/activity?start_time=${encodeURIComponent(n)}&end_time=1e999`,
  (n) => `sys/metrics?format=${encodeURIComponent(n)}`,
  (n) => `sys/leases/lookup/${n}`,
  (n) => `sys/capabilities-self?paths=${encodeURIComponent(n)}`,
];

export const QUERIES: readonly string[] = [
  '',
  '?list=true',
  '?list=maybe',
  '?version=-1',
  '?version=1e999',
  '?version=abc',
  '?help=1',
  '?depth=99999999999',
  '?limit=-5&after=%FF',
  '?context=!!',
  '?list=true&list=false',
];
