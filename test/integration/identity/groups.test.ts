// identity/group*, identity/group-alias* and identity/lookup/* through the Worker: shapes,
// nested groups, external groups and their aliases, lookups, and bad input refused cleanly.
import { beforeAll, describe, expect, it } from 'vitest';
import { identityState } from '../../helpers/identity';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
let tokenAccessor = '';
let kvAccessor = '';
const { call: root, ok } = caller(() => c.root);
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const newEntity = async (body: Record<string, unknown> = {}) => (await ok('POST', 'identity/entity', body)).body.data as { id: string; name: string };
const newGroup = async (body: Record<string, unknown> = {}) => (await ok('POST', 'identity/group', body)).body.data as { id: string; name: string };
const readGroup = async (id: string) => (await root('GET', `identity/group/id/${id}`)).body.data;

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/secret', { type: 'kv' });
  tokenAccessor = (await root('GET', 'sys/auth')).body.data['token/'].accessor;
  kvAccessor = (await root('GET', 'sys/mounts')).body.data['secret/'].accessor;
});

describe('groups', () => {
  it('lists nothing (404) before any group exists', async () => {
    expect((await root('GET', 'identity/group/id?list=true')).status).toBe(404);
    expect((await root('GET', 'identity/group/name?list=true')).status).toBe(404);
    expect((await root('GET', 'identity/group-alias/id?list=true')).status).toBe(404);
  });

  it('creates an internal group and reads it in Vault\'s shape', async () => {
    const e = await newEntity();
    const r = await root('POST', 'identity/group', { metadata: { hello: 'world' }, policies: ['GroupPolicy1', 'grouppolicy2'], member_entity_ids: [e.id] });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: expect.stringMatching(/^group_[0-9a-f]{8}$/) });
    const g = await readGroup(r.body.data.id);
    expect(Object.keys(g)).toEqual([
      'alias', 'creation_time', 'id', 'last_update_time', 'member_entity_ids', 'member_group_ids', 'metadata', 'modify_index',
      'name', 'namespace_id', 'parent_group_ids', 'policies', 'type',
    ]);
    expect(g).toMatchObject({
      alias: {},
      member_entity_ids: [e.id],
      member_group_ids: null,
      metadata: { hello: 'world' },
      modify_index: 1,
      namespace_id: 'root',
      parent_group_ids: null,
      policies: ['grouppolicy1', 'grouppolicy2'],
      type: 'internal',
    });
    expect(g.creation_time).toMatch(TIME);
    expect((await root('GET', `identity/group/name/${g.name.toUpperCase()}`)).body.data).toEqual(g);
    expect((await root('GET', 'identity/group/id/ghost')).status).toBe(404);
    expect((await root('GET', 'identity/group/name/ghost')).status).toBe(404);
  });

  it('updates by id (204, modify_index grows) and creates or updates by name', async () => {
    const { id } = await newGroup({ name: 'ops' });
    expect((await root('POST', `identity/group/id/${id}`, { policies: 'a,b' })).status).toBe(204);
    expect(await readGroup(id)).toMatchObject({ policies: ['a', 'b'], modify_index: 2 });
    expect((await root('POST', 'identity/group', { id, name: 'operations' })).status).toBe(204);
    expect((await root('GET', 'identity/group/name/ops')).status).toBe(404);
    expect((await root('POST', 'identity/group/name/operations', { metadata: { tier: '1' } })).status).toBe(204);
    expect(await readGroup(id)).toMatchObject({ name: 'operations', metadata: { tier: '1' }, modify_index: 4 });
    const created = await root('POST', 'identity/group/name/brand-new', { type: 'external' });
    expect(created.status).toBe(200);
    expect(created.body.data.name).toBe('brand-new');
    expect((await readGroup(created.body.data.id)).type).toBe('external');
  });

  it('nests groups: members on one side, parents on the other, inherited by entities', async () => {
    const e = await newEntity({ name: 'nested-member' });
    const leaf = await newGroup({ name: 'leaf', member_entity_ids: [e.id] });
    const mid = await newGroup({ name: 'mid', member_group_ids: [leaf.id] });
    const top = await newGroup({ name: 'top', member_group_ids: [mid.id] });
    expect((await readGroup(leaf.id)).parent_group_ids).toEqual([mid.id]);
    expect((await readGroup(mid.id)).member_group_ids).toEqual([leaf.id]);
    expect((await readGroup(mid.id)).parent_group_ids).toEqual([top.id]);
    const entity = (await root('GET', `identity/entity/id/${e.id}`)).body.data;
    expect(entity.direct_group_ids).toEqual([leaf.id]);
    expect([...entity.inherited_group_ids].sort()).toEqual([mid.id, top.id].sort());
    expect(entity.group_ids).toEqual([...entity.direct_group_ids, ...entity.inherited_group_ids]);

    // Emptying member_group_ids detaches the child.
    expect((await root('POST', `identity/group/id/${mid.id}`, { member_group_ids: [] })).status).toBe(204);
    expect((await readGroup(leaf.id)).parent_group_ids).toBeNull();
    expect((await root('GET', `identity/entity/id/${e.id}`)).body.data.inherited_group_ids).toEqual([]);
  });

  it('lists by id and by name with key_info', async () => {
    const { id } = await newGroup({ name: 'listed-group', member_entity_ids: [(await newEntity()).id] });
    const byId = (await root('GET', 'identity/group/id?list=true')).body.data;
    expect(byId.keys).toContain(id);
    expect(byId.key_info[id]).toEqual({ name: 'listed-group', num_member_entities: 1, num_parent_groups: 0 });
    expect((await root('GET', 'identity/group/name?list=true')).body.data.keys).toContain('listed-group');
  });

  it('deletes by id and by name, detaching members and parents', async () => {
    const e = await newEntity();
    const child = await newGroup({ name: 'del-child' });
    const g = await newGroup({ name: 'del-me', member_entity_ids: [e.id], member_group_ids: [child.id] });
    const parent = await newGroup({ name: 'del-parent', member_group_ids: [g.id] });
    expect((await root('DELETE', `identity/group/id/${g.id}`)).status).toBe(204);
    expect((await root('GET', `identity/group/id/${g.id}`)).status).toBe(404);
    expect((await readGroup(child.id)).parent_group_ids).toBeNull();
    expect((await readGroup(parent.id)).member_group_ids).toBeNull();
    expect((await root('GET', `identity/entity/id/${e.id}`)).body.data.direct_group_ids).toEqual([]);
    expect((await root('DELETE', 'identity/group/name/DEL-CHILD')).status).toBe(204);
    expect((await root('GET', `identity/group/id/${child.id}`)).status).toBe(404);
    expect((await root('DELETE', 'identity/group/name/never-was')).status).toBe(204);
  });

  describe('refuses bad input without writing anything', () => {
    let ids: Record<string, string> = {};
    beforeAll(async () => {
      const a = await newGroup({ name: 'cyc-a' });
      const b = await newGroup({ name: 'cyc-b', member_group_ids: [a.id] });
      const top = await newGroup({ name: 'cyc-top', member_group_ids: [b.id] });
      const ext = await newGroup({ name: 'external-one', type: 'external' });
      ids = { a: a.id, b: b.id, top: top.id, ext: ext.id, entity: (await newEntity()).id };
    });
    const cases: [string, () => [string, unknown], string | (() => string)][] = [
      ['the root policy', () => ['identity/group', { name: 'wants-root', policies: ['root'] }], 'policies cannot contain root'],
      ['root on an existing group', () => [`identity/group/id/${ids.a}`, { policies: ['web', 'Root'] }], 'policies cannot contain root'],
      ['root by name', () => ['identity/group/name/cyc-a', { policies: 'root' }], 'policies cannot contain root'],
      ['an unknown type', () => ['identity/group', { type: 'federated' }], 'invalid group type "federated"'],
      ['a type change', () => [`identity/group/id/${ids.ext}`, { type: 'internal' }], 'group type cannot be changed'],
      ['members of an external group', () => [`identity/group/id/${ids.ext}`, { member_entity_ids: [ids.entity] }], "member entities can't be set manually for external groups"],
      ['subgroups of an external group', () => ['identity/group', { type: 'external', member_group_ids: [ids.a] }], "member groups can't be set for external groups"],
      ['an unknown member entity', () => [`identity/group/id/${ids.a}`, { member_entity_ids: [ids.entity, 'ghost'] }], 'invalid entity ID "ghost"'],
      ['an unknown member group', () => [`identity/group/id/${ids.top}`, { member_group_ids: [ids.b, 'ghost'] }], 'invalid member group ID "ghost"'],
      ['itself as member', () => [`identity/group/id/${ids.a}`, { member_group_ids: [ids.a] }], () => `member group ID "${ids.a}" is same as the ID of the group`],
      ['a loop through two groups', () => [`identity/group/id/${ids.a}`, { member_group_ids: [ids.b] }], () => `cyclic relationship detected for member group ID "${ids.b}"`],
      ['a loop through three groups', () => [`identity/group/id/${ids.a}`, { member_group_ids: [ids.top] }], () => `cyclic relationship detected for member group ID "${ids.top}"`],
      ['a taken name', () => [`identity/group/id/${ids.a}`, { name: 'CYC-B' }], 'group name is already in use'],
      ['an unknown id', () => ['identity/group/id/ghost', { policies: ['p'] }], 'invalid group ID'],
      ['bad metadata', () => ['identity/group', { metadata: { 'sp ace': 'x' } }], 'invalid group metadata: failed to load metadata pair ("sp ace", "x"): key contains invalid characters'],
      ['a non-list of members', () => ['identity/group', { member_entity_ids: { a: 1 } }], 'error converting input {"a":1} for field "member_entity_ids"'],
    ];
    it.each(cases)('%s', async (_name, request, message) => {
      const before = await identityState(c.root);
      const [path, body] = request();
      const r = await root('POST', path, body);
      expect(r.status).toBe(400);
      expect(r.body.errors[0]).toContain(typeof message === 'function' ? message() : message);
      expect(await identityState(c.root)).toEqual(before);
    });
  });
});

describe('group aliases', () => {
  it('ties a name on an auth mount to an external group, shown in both reads', async () => {
    const ext = await newGroup({ name: 'gh-admins', type: 'external', policies: ['admin'] });
    const r = await root('POST', 'identity/group-alias', { name: 'admins', mount_accessor: tokenAccessor, canonical_id: ext.id });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ canonical_id: ext.id, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const alias = (await root('GET', `identity/group-alias/id/${r.body.data.id}`)).body.data;
    expect(alias).toMatchObject({
      canonical_id: ext.id,
      mount_accessor: tokenAccessor,
      mount_path: 'auth/token/',
      mount_type: 'token',
      name: 'admins',
      namespace_id: 'root',
      local: false,
      metadata: null,
      custom_metadata: null,
      merged_from_canonical_ids: null,
    });
    expect(alias.creation_time).toMatch(TIME);
    expect((await readGroup(ext.id)).alias).toMatchObject({ id: r.body.data.id, name: 'admins', mount_path: 'auth/token/', mount_type: 'token', canonical_id: ext.id });
    const list = (await root('GET', 'identity/group-alias/id?list=true')).body.data;
    expect(list.key_info[r.body.data.id]).toMatchObject({ name: 'admins', canonical_id: ext.id, mount_accessor: tokenAccessor, mount_type: 'token' });
    expect((await root('GET', 'identity/group/id?list=true')).body.data.key_info[ext.id].alias).toMatchObject({ id: r.body.data.id, name: 'admins' });
  });

  it('creates an external group for an alias given no canonical_id; updates and deletes by id', async () => {
    const r = await root('POST', 'identity/group-alias', { name: 'auto-group', mount_accessor: tokenAccessor });
    expect(r.status).toBe(200);
    const g = await readGroup(r.body.data.canonical_id);
    expect(g).toMatchObject({ type: 'external', alias: { id: r.body.data.id } });
    expect(g.name).toMatch(/^group_[0-9a-f]{8}$/);
    expect((await root('POST', `identity/group-alias/id/${r.body.data.id}`, { name: 'auto-group', mount_accessor: tokenAccessor })).status).toBe(204);
    const renamed = await root('POST', 'identity/group-alias', { id: r.body.data.id, name: 'renamed-group', mount_accessor: tokenAccessor });
    expect(renamed.status).toBe(200);
    expect((await root('GET', `identity/group-alias/id/${r.body.data.id}`)).body.data.name).toBe('renamed-group');
    expect((await root('DELETE', `identity/group-alias/id/${r.body.data.id}`)).status).toBe(204);
    expect((await root('GET', `identity/group-alias/id/${r.body.data.id}`)).status).toBe(404);
    expect((await readGroup(r.body.data.canonical_id)).alias).toEqual({});
  });

  describe('refuses bad input without writing anything', () => {
    let ids: Record<string, string> = {};
    beforeAll(async () => {
      const internal = await newGroup({ name: 'plain-internal' });
      const taken = (await ok('POST', 'identity/group-alias', { name: 'taken-alias', mount_accessor: tokenAccessor })).body.data;
      ids = { internal: internal.id, taken: taken.id };
    });
    const cases: [string, () => [string, unknown], string | (() => string)][] = [
      ['no name', () => ['identity/group-alias', { mount_accessor: tokenAccessor }], 'missing alias name'],
      ['no mount accessor', () => ['identity/group-alias', { name: 'x' }], 'missing mount_accessor'],
      ['a secrets mount\'s accessor', () => ['identity/group-alias', { name: 'x', mount_accessor: kvAccessor }], () => `invalid mount accessor "${kvAccessor}"`],
      ['an internal group', () => ['identity/group-alias', { name: 'x', mount_accessor: tokenAccessor, canonical_id: ids.internal }], "alias can't be set on an internal group"],
      ['an unknown group', () => ['identity/group-alias', { name: 'x', mount_accessor: tokenAccessor, canonical_id: 'ghost' }], "invalid group ID given in 'canonical_id'"],
      ['a taken name', () => ['identity/group-alias', { name: 'TAKEN-ALIAS', mount_accessor: tokenAccessor }], 'combination of mount and group alias name is already in use'],
      ['an unknown id', () => ['identity/group-alias/id/ghost', { name: 'x', mount_accessor: tokenAccessor }], 'invalid group alias ID'],
    ];
    it.each(cases)('%s', async (_name, request, message) => {
      const before = await identityState(c.root);
      const [path, body] = request();
      const r = await root('POST', path, body);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([typeof message === 'function' ? message() : message]);
      expect(await identityState(c.root)).toEqual(before);
    });
  });
});

describe('lookups', () => {
  let ids: Record<string, string> = {};
  beforeAll(async () => {
    const e = await newEntity({ name: 'Lookup-Me' });
    const alias = (await ok('POST', 'identity/entity-alias', { name: 'lookup-login', mount_accessor: tokenAccessor, canonical_id: e.id })).body.data;
    const g = await newGroup({ name: 'lookup-group', type: 'external' });
    const ga = (await ok('POST', 'identity/group-alias', { name: 'lookup-team', mount_accessor: tokenAccessor, canonical_id: g.id })).body.data;
    ids = { entity: e.id, alias: alias.id, group: g.id, groupAlias: ga.id };
  });

  it('finds an entity by id, name, alias id, or alias name and mount accessor', async () => {
    const expected = (await root('GET', `identity/entity/id/${ids.entity}`)).body.data;
    for (const body of [
      { id: ids.entity },
      { name: 'lookup-me' },
      { alias_id: ids.alias },
      { alias_name: 'LOOKUP-LOGIN', alias_mount_accessor: tokenAccessor },
    ]) {
      const r = await root('POST', 'identity/lookup/entity', body);
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual(expected);
    }
  });

  it('finds a group the same ways', async () => {
    const expected = await readGroup(ids.group);
    for (const body of [{ id: ids.group }, { name: 'LOOKUP-GROUP' }, { alias_id: ids.groupAlias }, { alias_name: 'lookup-team', alias_mount_accessor: tokenAccessor }]) {
      const r = await root('POST', 'identity/lookup/group', body);
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual(expected);
    }
  });

  it('answers 204 when nothing matches', async () => {
    for (const what of ['entity', 'group']) {
      for (const body of [{ id: 'ghost' }, { name: 'ghost' }, { alias_id: 'ghost' }, { alias_name: 'ghost', alias_mount_accessor: tokenAccessor }]) {
        const r = await root('POST', `identity/lookup/${what}`, body);
        expect(r.status).toBe(204);
        expect(r.text).toBe('');
      }
    }
  });

  it.each([
    [{}, 'query parameter not supplied'],
    [{ id: 'a', name: 'b' }, 'query parameter conflict; please supply distinct set of query parameters'],
    [{ alias_id: 'a', alias_name: 'b', alias_mount_accessor: 'c' }, 'query parameter conflict; please supply distinct set of query parameters'],
    [{ alias_name: 'b' }, "both 'alias_name' and 'alias_mount_accessor' needs to be set"],
    [{ alias_mount_accessor: 'c' }, "both 'alias_name' and 'alias_mount_accessor' needs to be set"],
  ])('refuses %j', async (body, message) => {
    for (const what of ['entity', 'group']) {
      const r = await root('POST', `identity/lookup/${what}`, body);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
  });
});
