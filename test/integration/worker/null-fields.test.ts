// JSON null is a field's zero value, and the field counts as present (Vault's FieldData decodes
// with mapstructure): one case per body parser, each sending what hvac sends for the arguments
// a caller left out. A field Vault decodes into a pointer (token create's `renewable`) keeps its
// default instead.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';
import { makeKey } from '../../helpers/jwt';

let c: Cluster;
const { call, ok } = caller(() => c.root);

beforeAll(async () => {
  c = await initCluster();
});

describe('sys/mounts and sys/auth', () => {
  it('enables a mount with every optional field null, as hvac sends it', async () => {
    await ok('POST', 'sys/mounts/nulled', { type: 'kv', description: null, config: null, options: null, plugin_name: null, local: null, seal_wrap: null, external_entropy_access: null, plugin_version: null });
    const info = (await ok('GET', 'sys/mounts/nulled')).body.data;
    expect(info).toMatchObject({ type: 'kv', description: '', local: false, seal_wrap: false, options: null });
  });

  it('takes null inside config and options as the zero value', async () => {
    await ok('POST', 'sys/mounts/nulled-inner', {
      type: 'kv',
      config: { default_lease_ttl: null, max_lease_ttl: null, force_no_cache: null, listing_visibility: null, audit_non_hmac_request_keys: null, passthrough_request_headers: null },
      options: { version: null },
    });
    const info = (await ok('GET', 'sys/mounts/nulled-inner')).body.data;
    expect(info.config).toEqual({ default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false });
    // An empty version is version 1, as in Vault.
    expect((await ok('POST', 'nulled-inner/k', { a: 1 })).status).toBe(204);
  });

  it('tunes with null fields: each resets its setting to the zero value', async () => {
    await ok('POST', 'sys/mounts/tuned', { type: 'kv', description: 'before', config: { default_lease_ttl: '1h', max_lease_ttl: '2h' } });
    await ok('POST', 'sys/mounts/tuned/tune', {
      description: null,
      default_lease_ttl: null,
      max_lease_ttl: null,
      audit_non_hmac_request_keys: null,
      audit_non_hmac_response_keys: null,
      listing_visibility: null,
      passthrough_request_headers: null,
      options: null,
      force_no_cache: null,
    });
    const tuned = (await ok('GET', 'sys/mounts/tuned/tune')).body.data;
    expect(tuned).toMatchObject({ description: '', default_lease_ttl: 2764800, max_lease_ttl: 2764800, force_no_cache: false });
  });

  it('enables and tunes an auth method with null fields', async () => {
    await ok('POST', 'sys/auth/nulled-jwt', { type: 'jwt', description: null, config: null, plugin_name: null, local: null, seal_wrap: null, options: null });
    await ok('POST', 'sys/auth/nulled-jwt/tune', { default_lease_ttl: null, max_lease_ttl: null, description: null, token_type: null });
    expect((await ok('GET', 'sys/auth/nulled-jwt/tune')).body.data).toMatchObject({ description: '', default_lease_ttl: 2764800 });
  });

  it('refuses a null type with the missing-type message', async () => {
    const r = await call('POST', 'sys/mounts/typeless', { type: null });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).not.toContain('null');
  });
});

describe('tokens', () => {
  it('creates a token from every field null: renewable, named "token", with the parent\'s policies', async () => {
    const body = Object.fromEntries(
      ['id', 'role_name', 'policies', 'meta', 'no_parent', 'no_default_policy', 'renewable', 'ttl', 'lease', 'type', 'explicit_max_ttl', 'display_name', 'num_uses', 'period', 'entity_alias'].map((k) => [k, null]),
    );
    const auth = (await ok('POST', 'auth/token/create', body)).body.auth;
    expect(auth.policies).toEqual(['root']);
    expect(auth.renewable).toBe(false); // a root token without a TTL never expires, so it cannot renew
    const child = (await ok('POST', 'auth/token/create', { ...body, policies: ['default'], ttl: '1h' })).body.auth;
    expect(child.renewable).toBe(true);
    const looked = (await ok('POST', 'auth/token/lookup', { token: child.client_token })).body.data;
    expect(looked.display_name).toBe('token');
    expect(looked.meta).toBeNull();
  });

  it('inherits the parent\'s policies for an empty list too', async () => {
    const parent = (await ok('POST', 'auth/token/create', { policies: ['default', 'extra'], ttl: '1h' })).body.auth.client_token;
    await ok('PUT', 'sys/policies/acl/extra', { policy: 'path "auth/token/create" { capabilities = ["update"] }' });
    const child = (await caller(() => parent).ok('POST', 'auth/token/create', { policies: [] })).body.auth;
    expect(child.policies).toEqual(['default', 'extra']);
  });

  it('writes a token role with null fields', async () => {
    await ok('POST', 'auth/token/roles/nulled', { allowed_policies: null, disallowed_policies: null, orphan: null, renewable: null, path_suffix: null, explicit_max_ttl: null, period: null });
    expect((await ok('GET', 'auth/token/roles/nulled')).body.data).toMatchObject({ allowed_policies: [], orphan: false, renewable: false, path_suffix: '' });
  });
});

describe('policies and audit', () => {
  it('takes a null rules beside the policy text', async () => {
    await ok('PUT', 'sys/policy/nulled', { policy: 'path "a/*" { capabilities = ["read"] }', rules: null });
    expect((await ok('GET', 'sys/policy/nulled')).body.data.rules).toContain('a/*');
    const r = await call('PUT', 'sys/policies/acl/empty', { policy: null });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(["'policy' parameter not supplied or empty"]);
  });

  it('enables an audit device with null description, options values and local', async () => {
    await ok('PUT', 'sys/audit/nulled', { type: 'file', description: null, options: { file_path: 'discard', prefix: null }, local: null });
    expect((await ok('GET', 'sys/audit')).body.data['nulled/']).toMatchObject({ type: 'file', description: '', local: false });
    await ok('DELETE', 'sys/audit/nulled');
  });

  it('answers capabilities with a null token as the caller\'s own', async () => {
    const r = await ok('POST', 'sys/capabilities-self', { paths: ['sys/mounts'], token: null });
    expect(r.body.capabilities).toEqual(['root']);
  });
});

describe('identity', () => {
  it('creates entities and groups with null fields', async () => {
    const entity = (await ok('POST', 'identity/entity', { name: 'nulled', id: null, metadata: null, policies: null, disabled: null })).body.data;
    expect((await ok('GET', `identity/entity/id/${entity.id}`)).body.data).toMatchObject({ metadata: {}, policies: [], disabled: false });
    const group = (await ok('POST', 'identity/group', { name: 'nulled-group', id: null, type: null, metadata: null, policies: null, member_entity_ids: null, member_group_ids: null })).body.data;
    expect((await ok('GET', `identity/group/id/${group.id}`)).body.data).toMatchObject({ type: 'internal', policies: [], member_entity_ids: [] });
  });
});

describe('engines', () => {
  beforeAll(async () => {
    await ok('POST', 'sys/mounts/kv2', { type: 'kv', options: { version: '2' } });
    await ok('POST', 'sys/mounts/transit', { type: 'transit' });
    await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
    await ok('POST', 'sys/auth/jwt', { type: 'jwt' });
  });

  it('kv v2: null options, config and metadata fields', async () => {
    expect((await ok('POST', 'kv2/data/a', { data: { k: 'v' }, options: null })).body.data.version).toBe(1);
    await ok('POST', 'kv2/config', { max_versions: null, cas_required: null, delete_version_after: null });
    expect((await ok('GET', 'kv2/config')).body.data).toEqual({ max_versions: 0, cas_required: false, delete_version_after: '0s' });
    await ok('POST', 'kv2/metadata/a', { max_versions: null, cas_required: null, delete_version_after: null, custom_metadata: null });
    expect((await ok('GET', 'kv2/metadata/a')).body.data).toMatchObject({ max_versions: 0, cas_required: false, custom_metadata: null });
    const noData = await call('POST', 'kv2/data/b', { data: null });
    expect(noData.status).toBe(400);
  });

  it('transit: null key options, encrypt and sign fields', async () => {
    // As in Vault, a null type is the empty type, which names no key type.
    expect((await call('POST', 'transit/keys/typeless', { type: null })).body.errors).toEqual(['unknown key type ']);
    await ok('POST', 'transit/keys/k', { derived: null, convergent_encryption: null, exportable: null, allow_plaintext_backup: null, auto_rotate_period: null, key_size: null });
    expect((await ok('GET', 'transit/keys/k')).body.data).toMatchObject({ type: 'aes256-gcm96', derived: false, exportable: false, auto_rotate_period: 0 });
    const enc = await ok('POST', 'transit/encrypt/k', { plaintext: btoa('x'), context: null, key_version: null, nonce: null, batch_input: null, type: null, convergent_encryption: null, associated_data: null });
    const dec = await ok('POST', 'transit/decrypt/k', { ciphertext: enc.body.data.ciphertext, context: null, nonce: null, batch_input: null });
    expect(dec.body.data.plaintext).toBe(btoa('x'));
    const batch = await ok('POST', 'transit/encrypt/k', { batch_input: [{ plaintext: btoa('y'), context: null, key_version: null, reference: null }] });
    expect(batch.body.data.batch_results[0].reference).toBe('');
    await ok('POST', 'transit/keys/s', { type: 'ecdsa-p256' });
    const sig = await ok('POST', 'transit/sign/s', { input: btoa('m'), key_version: null, hash_algorithm: null, context: null, prehashed: null, signature_algorithm: null, marshaling_algorithm: null });
    const verified = await ok('POST', 'transit/verify/s', { input: btoa('m'), signature: sig.body.data.signature, hmac: null, hash_algorithm: null, context: null, prehashed: null, signature_algorithm: null, marshaling_algorithm: null });
    expect(verified.body.data.valid).toBe(true);
    await ok('POST', 'transit/keys/k/config', { min_decryption_version: null, min_encryption_version: null, deletion_allowed: null, exportable: null, allow_plaintext_backup: null, auto_rotate_period: null });
  });

  it('pki: null generation, role and issue fields', async () => {
    // As in Vault, a null issuer_name is an empty one, which is refused.
    expect((await call('POST', 'pki/root/generate/internal', { common_name: 'x', issuer_name: null })).body.errors).toEqual(['expected non-empty issuer name']);
    const root = await ok('POST', 'pki/root/generate/internal', { common_name: 'Null Root', ttl: '8760h', key_bits: null, alt_names: null, ip_sans: null, uri_sans: null, exclude_cn_from_sans: null, permitted_dns_domains: null });
    expect(root.body.data.certificate).toContain('BEGIN CERTIFICATE');
    await ok('POST', 'pki/roles/r', { allowed_domains: ['example.com'], allow_subdomains: true, ttl: null, max_ttl: null, key_bits: null, key_usage: null, ext_key_usage: null, policy_identifiers: null, ou: null, organization: null });
    const issued = await ok('POST', 'pki/issue/r', { common_name: 'a.example.com', alt_names: null, ip_sans: null, uri_sans: null, other_sans: null, ttl: null, private_key_format: null, exclude_cn_from_sans: null });
    expect(issued.body.data.certificate).toContain('BEGIN CERTIFICATE');
    // As in Vault, where the zero value itself is refused (a null format is the empty format), so is null.
    expect((await call('POST', 'pki/issue/r', { common_name: 'b.example.com', format: null })).status).toBe(400);
    await ok('POST', 'pki/config/urls', { issuing_certificates: null, crl_distribution_points: null, ocsp_servers: null });
    await ok('POST', 'pki/config/crl', { expiry: null, disable: null });
  });

  it('jwt: null config and role fields', async () => {
    const { pem } = await makeKey('ES256');
    await ok('POST', 'auth/jwt/config', {
      jwt_validation_pubkeys: [pem],
      oidc_discovery_url: null,
      oidc_discovery_ca_pem: null,
      oidc_client_id: null,
      oidc_client_secret: null,
      oidc_response_mode: null,
      oidc_response_types: null,
      jwks_url: null,
      jwks_ca_pem: null,
      bound_issuer: null,
      jwt_supported_algs: null,
      default_role: null,
      provider_config: null,
    });
    await ok('POST', 'auth/jwt/role/r', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['a'], bound_subject: null, bound_claims: null, groups_claim: null, claim_mappings: null, oidc_scopes: null, allowed_redirect_uris: null, token_policies: null, token_ttl: null });
    const role = (await ok('GET', 'auth/jwt/role/r')).body.data;
    expect(role).toMatchObject({ bound_subject: '', bound_claims: {}, groups_claim: '', token_policies: [], token_ttl: 0, expiration_leeway: 150 });
  });
});
