// Names tied to the caller through the Worker: allow_token_displayname (the token's display name)
// and allowed_domains_template / allowed_uri_sans_template ({{identity.entity.id}}, the entity's
// name and its aliases' names) with tokens bound to entities, and tokens without an entity, for
// which templated entries match nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { ok } = caller(() => c.root);

interface Token {
  token: string;
  entityId: string;
}
let alice: Token;
let bob: Token;
let plain: Token;

const issue = (t: Token, role: string, body: Record<string, unknown>) => api('POST', `pki/issue/${role}`, { token: t.token, body });

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { default_lease_ttl: '1h', max_lease_ttl: '87600h' } });
  await ok('POST', 'pki/root/generate/internal', { common_name: 'Identity Root', ttl: '8760h' });
  await ok('PUT', 'sys/policies/acl/issuer', { policy: 'path "pki/issue/*" { capabilities = ["update"] }' });
  await ok('POST', 'auth/token/roles/people', { allowed_policies: ['issuer'], allowed_entity_aliases: ['alice', 'bob'] });
  const make = async (body: Record<string, unknown>, path = 'auth/token/create/people'): Promise<Token> => {
    const auth = (await ok('POST', path, { policies: ['issuer'], ...body })).body.auth;
    return { token: auth.client_token, entityId: auth.entity_id };
  };
  alice = await make({ entity_alias: 'alice', display_name: 'alice' });
  bob = await make({ entity_alias: 'bob' });
  plain = await make({ display_name: 'svc' }, 'auth/token/create');
  await ok('POST', 'pki/roles/per-entity', {
    allowed_domains: '{{identity.entity.id}}.users.example.com',
    allowed_domains_template: true,
    allow_bare_domains: true,
    allow_subdomains: true,
    allowed_uri_sans: 'spiffe://corp/{{identity.entity.id}}/*',
    allowed_uri_sans_template: true,
  });
  await ok('POST', 'pki/roles/by-display-name', { allow_token_displayname: true });
});

describe('templated allowed_domains and allowed_uri_sans', () => {
  it("lets an entity's token issue for its own entity id only", async () => {
    expect(alice.entityId).toMatch(/^[0-9a-f-]{36}$/);
    const own = await issue(alice, 'per-entity', {
      common_name: `${alice.entityId}.users.example.com`,
      alt_names: `api.${alice.entityId}.users.example.com`,
      uri_sans: `spiffe://corp/${alice.entityId}/svc`,
    });
    expect(own.body.errors ?? []).toEqual([]);
    expect(own.status).toBe(200);
    const cert = new x509.X509Certificate(own.body.data.certificate);
    expect(cert.subjectName.getField('CN')).toEqual([`${alice.entityId}.users.example.com`]);
    const foreign = await issue(bob, 'per-entity', { common_name: `${alice.entityId}.users.example.com` });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors).toEqual([`common name ${alice.entityId}.users.example.com not allowed by this role`]);
    const foreignUri = await issue(bob, 'per-entity', { common_name: `${bob.entityId}.users.example.com`, uri_sans: `spiffe://corp/${alice.entityId}/svc` });
    expect(foreignUri.status).toBe(400);
    expect(foreignUri.body.errors).toEqual(['URI Subject Alternative Names were provided via the API which are not valid for this role']);
  });

  it("fills the entity's name and its alias names from the identity store", async () => {
    const tokenAccessor = (await ok('GET', 'sys/auth')).body.data['token/'].accessor;
    // Generated entity names (entity_…) are no host names; give alice's entity one.
    await ok('POST', `identity/entity/id/${alice.entityId}`, { name: 'alice-ent' });
    const aliceName = (await ok('GET', `identity/entity/id/${alice.entityId}`)).body.data.name;
    expect(aliceName).toBe('alice-ent');
    await ok('POST', 'pki/roles/per-name', {
      allowed_domains: `{{identity.entity.name}}.names.example.com,{{identity.entity.aliases.${tokenAccessor}.name}}.people.example.com`,
      allowed_domains_template: true,
      allow_bare_domains: true,
    });
    expect((await issue(alice, 'per-name', { common_name: 'alice.people.example.com' })).status).toBe(200);
    expect((await issue(alice, 'per-name', { common_name: `${aliceName}.names.example.com` })).status).toBe(200);
    const foreign = await issue(bob, 'per-name', { common_name: 'alice.people.example.com' });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors).toEqual(['common name alice.people.example.com not allowed by this role']);
    expect((await issue(bob, 'per-name', { common_name: 'bob.people.example.com' })).status).toBe(200);
    // A renamed entity is seen at once (identity changes clear the mount's entity views).
    await ok('POST', `identity/entity/id/${alice.entityId}`, { name: 'alice-renamed' });
    expect((await issue(alice, 'per-name', { common_name: 'alice-renamed.names.example.com' })).status).toBe(200);
    expect((await issue(alice, 'per-name', { common_name: `${aliceName}.names.example.com` })).status).toBe(400);
  });

  it('matches nothing for a token without an entity (the template is not taken literally)', async () => {
    const r = await issue(plain, 'per-entity', { common_name: '{{identity.entity.id}}.users.example.com', exclude_cn_from_sans: true });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['common name {{identity.entity.id}}.users.example.com not allowed by this role']);
  });
});

describe('allow_token_displayname', () => {
  it("allows exactly the token's display name", async () => {
    const self = await api('GET', 'auth/token/lookup-self', { token: plain.token });
    expect(self.body.data.display_name).toBe('token-svc');
    const r = await issue(plain, 'by-display-name', { common_name: 'token-svc' });
    expect(r.body.errors ?? []).toEqual([]);
    expect(r.status).toBe(200);
    expect(new x509.X509Certificate(r.body.data.certificate).subjectName.getField('CN')).toEqual(['token-svc']);
    const other = await issue(plain, 'by-display-name', { common_name: 'token-alice' });
    expect(other.status).toBe(400);
    expect(other.body.errors).toEqual(['common name token-alice not allowed by this role']);
    expect((await issue(alice, 'by-display-name', { common_name: 'token-alice' })).status).toBe(200);
  });
});
