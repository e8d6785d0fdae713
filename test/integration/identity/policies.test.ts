// Identity at request time: tokens tied to entities (auth/token/create/:role with entity_alias)
// get their entity's and groups' policies on every object, templated paths resolve against the
// entity, disabled or deleted entities make their tokens unusable, and identity changes apply at
// once (no cache outlives the change's announcement).
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
let tokenAccessor = '';
const { call: root, ok } = caller(() => c.root);
const putPolicy = (name: string, policy: string) => ok('PUT', `sys/policies/acl/${name}`, { policy });

/** A token of role "people" tied to the entity behind entity alias `alias`. */
async function tokenFor(alias: string, extra: Record<string, unknown> = {}) {
  const auth = (await ok('POST', 'auth/token/create/people', { entity_alias: alias, policies: ['base'], ...extra })).body.auth;
  return { token: auth.client_token as string, accessor: auth.accessor as string, entityId: auth.entity_id as string };
}
const read = (token: string, path: string) => api('GET', path, { token });

beforeAll(async () => {
  c = await initCluster();
  tokenAccessor = (await root('GET', 'sys/auth')).body.data['token/'].accessor;
  await ok('POST', 'sys/mounts/secret', { type: 'kv' });
  for (const path of ['base', 'entity-only', 'group-only', 'parent-only', 'users/alice/notes', 'users/bob/notes', 'logins/alice', 'meta/blue']) {
    await ok('PUT', `secret/${path}`, { value: path });
  }
  await putPolicy('base', 'path "secret/base" { capabilities = ["read"] }');
  await putPolicy('creator', 'path "auth/token/create" { capabilities = ["update"] }');
  await putPolicy('entity-read', 'path "secret/entity-only" { capabilities = ["read"] }');
  await putPolicy('group-read', 'path "secret/group-only" { capabilities = ["read"] }');
  await putPolicy('parent-read', 'path "secret/parent-only" { capabilities = ["read"] }');
  await putPolicy(
    'templated',
    `path "secret/users/{{identity.entity.name}}/*" { capabilities = ["read"] }
     path "secret/by-id/{{identity.entity.id}}" { capabilities = ["create", "read"] }
     path "secret/meta/{{identity.entity.metadata.team}}" { capabilities = ["read"] }
     path "secret/logins/{{identity.entity.aliases.${tokenAccessor}.name}}" { capabilities = ["read"] }
     path "secret/teams/{{identity.groups.names.blue-team.id}}" { capabilities = ["read"] }`,
  );
  await ok('POST', 'auth/token/roles/people', { allowed_policies: ['base', 'creator'], allowed_entity_aliases: ['alice', 'bob', 'carol-*', 'dan', 'erin', 'frank', 'gail'] });
});

describe('tokens with entities (entity_alias)', () => {
  it('creates the entity and its alias on the token mount, and reuses them', async () => {
    const first = await tokenFor('alice');
    expect(first.entityId).toMatch(/^[0-9a-f-]{36}$/);
    const entity = (await root('GET', `identity/entity/id/${first.entityId}`)).body.data;
    expect(entity.aliases).toHaveLength(1);
    expect(entity.aliases[0]).toMatchObject({ name: 'alice', mount_accessor: tokenAccessor, mount_type: 'token', mount_path: 'auth/token/' });
    // The alias name keeps its case; matching is case-insensitive.
    expect((await tokenFor('ALICE')).entityId).toBe(first.entityId);
    expect((await tokenFor('carol-1')).entityId).not.toBe(first.entityId);
    const lookup = (await api('GET', 'auth/token/lookup-self', { token: first.token })).body.data;
    expect(lookup.entity_id).toBe(first.entityId);
  });

  it('children inherit the entity', async () => {
    const parent = await tokenFor('alice', { policies: ['base', 'creator'] });
    await ok('POST', `identity/entity/id/${parent.entityId}`, { policies: ['entity-read'] });
    const child = (await api('POST', 'auth/token/create', { token: parent.token, body: { policies: ['base'] } })).body.auth;
    expect(child.entity_id).toBe(parent.entityId);
    expect((await read(child.client_token, 'secret/entity-only')).status).toBe(200);
    await ok('POST', `identity/entity/id/${parent.entityId}`, { policies: [] });
  });

  it.each([
    ['without a role', 'auth/token/create', { entity_alias: 'alice' }, "'entity_alias' is only allowed in combination with token role"],
    ['not allowed by the role', 'auth/token/create/people', { entity_alias: 'mallory' }, "invalid 'entity_alias' value"],
    ['matching no glob', 'auth/token/create/people', { entity_alias: 'carol' }, "invalid 'entity_alias' value"],
  ])('refuses entity_alias %s, creating no entity', async (_name, path, body, message) => {
    const before = (await root('GET', 'identity/entity/id?list=true')).body.data.keys;
    const r = await root('POST', path, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await root('GET', 'identity/entity/id?list=true')).body.data.keys).toEqual(before);
  });

  it('refuses a token for a disabled entity (403)', async () => {
    const { entityId } = await tokenFor('bob');
    await ok('POST', `identity/entity/id/${entityId}`, { disabled: true });
    const r = await root('POST', 'auth/token/create/people', { entity_alias: 'bob' });
    expect(r.status).toBe(403);
    expect(r.body.errors).toEqual(['entity from given entity alias is disabled']);
    await ok('POST', `identity/entity/id/${entityId}`, { disabled: false });
  });
});

describe('identity policies at request time', () => {
  it('entity policies apply at once, on every kind of object, and show in lookups and capabilities', async () => {
    const { token, accessor, entityId } = await tokenFor('dan');
    expect((await read(token, 'secret/entity-only')).status).toBe(403);
    expect((await api('GET', 'auth/token/lookup-self', { token })).body.data.identity_policies).toBeUndefined();

    await ok('POST', `identity/entity/id/${entityId}`, { policies: ['entity-read', 'group-read'] });
    expect((await read(token, 'secret/entity-only')).status).toBe(200);
    expect((await read(token, 'secret/base')).status).toBe(200);
    const self = (await api('GET', 'auth/token/lookup-self', { token })).body.data;
    expect(self.identity_policies).toEqual(['entity-read', 'group-read']);
    expect(self.policies).toEqual(['base', 'default']);
    expect((await root('POST', 'auth/token/lookup', { token })).body.data.identity_policies).toEqual(['entity-read', 'group-read']);
    expect((await root('POST', 'auth/token/lookup-accessor', { accessor })).body.data.identity_policies).toEqual(['entity-read', 'group-read']);

    const paths = ['secret/entity-only', 'secret/parent-only'];
    const expected = { 'secret/entity-only': ['read'], 'secret/parent-only': ['deny'] };
    expect((await api('POST', 'sys/capabilities-self', { token, body: { paths } })).body.data).toMatchObject(expected);
    expect((await root('POST', 'sys/capabilities', { token, paths })).body.data).toMatchObject(expected);
    expect((await root('POST', 'sys/capabilities-accessor', { accessor, paths })).body.data).toMatchObject(expected);

    await ok('POST', `identity/entity/id/${entityId}`, { policies: [] });
    expect((await read(token, 'secret/entity-only')).status).toBe(403);
    expect((await api('POST', 'sys/capabilities-self', { token, body: { paths: ['secret/entity-only'] } })).body.data.capabilities).toEqual(['deny']);
  });

  it('a group grants, and a group change revokes, without waiting', async () => {
    const { token, entityId } = await tokenFor('erin');
    const group = (await ok('POST', 'identity/group', { name: 'readers', policies: ['group-read'] })).body.data;
    expect((await read(token, 'secret/group-only')).status).toBe(403);
    await ok('POST', `identity/group/id/${group.id}`, { member_entity_ids: [entityId] });
    expect((await read(token, 'secret/group-only')).status).toBe(200);
    // Changing the group's policies applies at once too.
    await ok('POST', `identity/group/id/${group.id}`, { policies: ['entity-read'] });
    expect((await read(token, 'secret/group-only')).status).toBe(403);
    expect((await read(token, 'secret/entity-only')).status).toBe(200);
    await ok('POST', `identity/group/id/${group.id}`, { member_entity_ids: [] });
    expect((await read(token, 'secret/entity-only')).status).toBe(403);
    await ok('POST', `identity/group/id/${group.id}`, { member_entity_ids: [entityId] });
    expect((await read(token, 'secret/entity-only')).status).toBe(200);
    await ok('DELETE', `identity/group/id/${group.id}`);
    expect((await read(token, 'secret/entity-only')).status).toBe(403);
  });

  it('members of a nested group inherit the parent groups\' policies', async () => {
    const { token, entityId } = await tokenFor('frank');
    const child = (await ok('POST', 'identity/group', { name: 'child-team', member_entity_ids: [entityId] })).body.data;
    const parent = (await ok('POST', 'identity/group', { name: 'parent-team', policies: ['parent-read'], member_group_ids: [child.id] })).body.data;
    await ok('POST', 'identity/group', { name: 'grandparent-team', policies: ['group-read'], member_group_ids: [parent.id] });
    expect((await read(token, 'secret/parent-only')).status).toBe(200);
    expect((await read(token, 'secret/group-only')).status).toBe(200);
    expect((await api('GET', 'auth/token/lookup-self', { token })).body.data.identity_policies).toEqual(['group-read', 'parent-read']);
    await ok('POST', `identity/group/id/${parent.id}`, { member_group_ids: [] });
    expect((await read(token, 'secret/parent-only')).status).toBe(403);
    expect((await read(token, 'secret/group-only')).status).toBe(403);
  });

  it('templated paths resolve against the entity, its aliases, metadata and groups', async () => {
    const { token, entityId } = await tokenFor('alice');
    await ok('POST', `identity/entity/id/${entityId}`, { name: 'alice', policies: ['templated'], metadata: { team: 'blue' } });
    expect((await read(token, 'secret/users/alice/notes')).status).toBe(200);
    expect((await read(token, 'secret/users/bob/notes')).status).toBe(403);
    expect((await read(token, 'secret/meta/blue')).status).toBe(200);
    expect((await read(token, 'secret/logins/alice')).status).toBe(200);
    expect((await api('PUT', `secret/by-id/${entityId}`, { token, body: { mine: true } })).status).toBe(204);
    expect((await api('PUT', 'secret/by-id/someone-else', { token, body: { mine: true } })).status).toBe(403);
    const team = (await ok('POST', 'identity/group', { name: 'blue-team' })).body.data;
    await ok('PUT', `secret/teams/${team.id}`, { value: 'team' });
    expect((await read(token, `secret/teams/${team.id}`)).status).toBe(403);
    await ok('POST', `identity/group/id/${team.id}`, { member_entity_ids: [entityId] });
    expect((await read(token, `secret/teams/${team.id}`)).status).toBe(200);
    // A rename moves the templated path with it, at once.
    await ok('POST', `identity/entity/id/${entityId}`, { name: 'bob' });
    expect((await read(token, 'secret/users/bob/notes')).status).toBe(200);
    expect((await read(token, 'secret/users/alice/notes')).status).toBe(403);
    await ok('POST', `identity/entity/id/${entityId}`, { name: 'alice', policies: [] });
  });

  it('the default policy lets a token read its own entity, and no other', async () => {
    const mine = await tokenFor('gail');
    const other = await tokenFor('dan');
    const name = (await root('GET', `identity/entity/id/${mine.entityId}`)).body.data.name;
    expect((await read(mine.token, `identity/entity/id/${mine.entityId}`)).status).toBe(200);
    expect((await read(mine.token, `identity/entity/name/${name}`)).body.data.id).toBe(mine.entityId);
    expect((await read(mine.token, `identity/entity/id/${other.entityId}`)).status).toBe(403);
    expect((await read(mine.token, 'identity/entity/id?list=true')).status).toBe(403);
    // A token without an entity resolves no template: nothing there for it.
    const plain = (await ok('POST', 'auth/token/create', { policies: ['base'] })).body.auth.client_token;
    expect((await read(plain, `identity/entity/id/${mine.entityId}`)).status).toBe(403);
  });

  it('a disabled entity\'s tokens are refused everywhere until it is enabled again', async () => {
    const { token, entityId } = await tokenFor('carol-2');
    expect((await read(token, 'secret/base')).status).toBe(200);
    await ok('POST', `identity/entity/id/${entityId}`, { disabled: true });
    for (const r of [
      await read(token, 'secret/base'),
      await api('GET', 'auth/token/lookup-self', { token }),
      await api('POST', 'sys/capabilities-self', { token, body: { paths: ['secret/base'] } }),
      await read(token, 'cubbyhole/x'),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body.errors).toEqual([PERMISSION_DENIED]);
    }
    const caps = await root('POST', 'sys/capabilities', { token, paths: ['secret/base'] });
    expect(caps.status).toBe(403);
    await ok('POST', `identity/entity/id/${entityId}`, { disabled: false });
    expect((await read(token, 'secret/base')).status).toBe(200);
  });

  it('a deleted entity\'s tokens are refused', async () => {
    const { token, entityId } = await tokenFor('carol-3');
    expect((await read(token, 'secret/base')).status).toBe(200);
    await ok('DELETE', `identity/entity/id/${entityId}`);
    expect((await read(token, 'secret/base')).status).toBe(403);
    expect((await api('GET', 'auth/token/lookup-self', { token })).status).toBe(403);
  });
});
