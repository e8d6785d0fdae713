// identity/entity*, identity/entity-alias* and identity/entity/merge through the Worker: Vault's
// parameters and response shapes, every bad input refused with a 4xx that leaves nothing behind.
import { beforeAll, describe, expect, it } from 'vitest';
import { identityState } from '../../helpers/identity';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
let tokenAccessor = '';
let kvAccessor = '';
const { call: root, ok } = caller(() => c.root);
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const newEntity = async (body: Record<string, unknown> = {}) => (await ok('POST', 'identity/entity', body)).body.data as { id: string; name: string };
const newAlias = async (body: Record<string, unknown>) =>
  (await ok('POST', 'identity/entity-alias', { mount_accessor: tokenAccessor, ...body })).body.data as { id: string; canonical_id: string };

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/secret', { type: 'kv' });
  tokenAccessor = (await root('GET', 'sys/auth')).body.data['token/'].accessor;
  kvAccessor = (await root('GET', 'sys/mounts')).body.data['secret/'].accessor;
});

describe('entities', () => {
  it('lists nothing (404) before any entity exists', async () => {
    expect((await root('GET', 'identity/entity/id?list=true')).status).toBe(404);
    expect((await root('GET', 'identity/entity/name?list=true')).status).toBe(404);
    expect((await root('GET', 'identity/entity-alias/id?list=true')).status).toBe(404);
  });

  it('creates an entity with a generated name and answers with its id', async () => {
    const r = await root('POST', 'identity/entity', {});
    expect(r.status).toBe(200);
    expect(r.body.mount_type).toBe('identity');
    expect(Object.keys(r.body.data)).toEqual(['aliases', 'id', 'name']);
    expect(r.body.data.aliases).toBeNull();
    expect(r.body.data.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.data.name).toMatch(/^entity_[0-9a-f]{8}$/);
  });

  it('reads an entity by id and by name (case-insensitively) in Vault\'s shape', async () => {
    const { id } = await newEntity({ name: 'Alice', policies: 'web,db,web', metadata: { team: 'blue' } });
    const r = await root('GET', `identity/entity/id/${id}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.data)).toEqual([
      'aliases', 'creation_time', 'direct_group_ids', 'disabled', 'group_ids', 'id', 'inherited_group_ids',
      'last_update_time', 'merged_entity_ids', 'metadata', 'name', 'namespace_id', 'policies',
    ]);
    expect(r.body.data).toMatchObject({
      aliases: [],
      direct_group_ids: [],
      group_ids: [],
      inherited_group_ids: [],
      disabled: false,
      id,
      merged_entity_ids: null,
      metadata: { team: 'blue' },
      name: 'Alice',
      namespace_id: 'root',
      policies: ['db', 'web'],
    });
    expect(r.body.data.creation_time).toMatch(TIME);
    expect(r.body.data.last_update_time).toBe(r.body.data.creation_time);
    expect((await root('GET', 'identity/entity/name/alice')).body.data).toEqual(r.body.data);
    expect((await root('GET', 'identity/entity/id/no-such-entity')).status).toBe(404);
    expect((await root('GET', 'identity/entity/name/nobody')).status).toBe(404);
  });

  it('updates by id (204) and by name; POST with a taken name updates that entity', async () => {
    const { id } = await newEntity({ name: 'bob' });
    const upd = await root('POST', `identity/entity/id/${id}`, { name: 'Bobby', metadata: ['k=v', 'x=y'], disabled: 'true' });
    expect(upd.status).toBe(204);
    let e = (await root('GET', `identity/entity/id/${id}`)).body.data;
    expect(e).toMatchObject({ name: 'Bobby', metadata: { k: 'v', x: 'y' }, disabled: true });
    expect((await root('GET', 'identity/entity/name/bob')).status).toBe(404);
    expect((await root('POST', 'identity/entity', { name: 'BOBBY', disabled: false })).status).toBe(204);
    expect((await root('POST', 'identity/entity/name/bobby', { policies: ['p1'] })).status).toBe(204);
    e = (await root('GET', `identity/entity/id/${id}`)).body.data;
    expect(e).toMatchObject({ name: 'bobby', disabled: false, policies: ['p1'], metadata: { k: 'v', x: 'y' } });
    expect(Date.parse(e.last_update_time)).toBeGreaterThanOrEqual(Date.parse(e.creation_time));
  });

  it('creates by name through identity/entity/name/:name, then updates there', async () => {
    const created = await root('POST', 'identity/entity/name/carol', { policies: ['a'] });
    expect(created.status).toBe(200);
    expect(created.body.data.name).toBe('carol');
    expect((await root('POST', 'identity/entity/name/carol', { policies: ['b'] })).status).toBe(204);
    expect((await root('GET', 'identity/entity/name/carol')).body.data.policies).toEqual(['b']);
  });

  it('lists by id and by name with key_info', async () => {
    const { id } = await newEntity({ name: 'listed' });
    const alias = await newAlias({ name: 'listed-login', canonical_id: id });
    const byId = await root('GET', 'identity/entity/id?list=true');
    expect(byId.status).toBe(200);
    expect(byId.body.data.keys).toContain(id);
    expect([...byId.body.data.keys].sort()).toEqual(byId.body.data.keys);
    expect(byId.body.data.key_info[id]).toEqual({
      name: 'listed',
      aliases: [{ id: alias.id, name: 'listed-login', mount_accessor: tokenAccessor, mount_path: 'auth/token/', mount_type: 'token' }],
    });
    const byName = await root('GET', 'identity/entity/name?list=true');
    expect(byName.body.data.keys).toContain('listed');
    expect(byName.body.data.key_info[id].name).toBe('listed');
  });

  it('deletes by id and by name, with their aliases; deleting nothing is fine', async () => {
    const a = await newEntity({ name: 'doomed-a' });
    const alias = await newAlias({ name: 'doomed-login', canonical_id: a.id });
    const b = await newEntity({ name: 'doomed-b' });
    expect((await root('DELETE', `identity/entity/id/${a.id}`)).status).toBe(204);
    expect((await root('GET', `identity/entity/id/${a.id}`)).status).toBe(404);
    expect((await root('GET', `identity/entity-alias/id/${alias.id}`)).status).toBe(404);
    expect((await root('DELETE', 'identity/entity/name/DOOMED-B')).status).toBe(204);
    expect((await root('GET', `identity/entity/id/${b.id}`)).status).toBe(404);
    expect((await root('DELETE', 'identity/entity/id/never-was')).status).toBe(204);
    // The alias's mount accessor + name is free again.
    expect((await root('POST', 'identity/entity-alias', { name: 'doomed-login', mount_accessor: tokenAccessor })).status).toBe(200);
  });

  it('batch-deletes', async () => {
    const a = await newEntity();
    const b = await newEntity();
    const keep = await newEntity();
    expect((await root('POST', 'identity/entity/batch-delete', { entity_ids: [a.id, b.id, 'unknown'] })).status).toBe(204);
    expect((await root('GET', `identity/entity/id/${a.id}`)).status).toBe(404);
    expect((await root('GET', `identity/entity/id/${b.id}`)).status).toBe(404);
    expect((await root('GET', `identity/entity/id/${keep.id}`)).status).toBe(200);
  });

  describe('refuses bad input without writing anything', () => {
    let existing = { id: '', name: '' };
    beforeAll(async () => {
      existing = await newEntity({ name: 'existing' });
      await newEntity({ name: 'other' });
    });
    const cases: [string, () => [string, string, unknown], string][] = [
      ['an unknown id', () => ['POST', 'identity/entity', { id: 'no-such-entity', name: 'x' }], 'entity not found from id'],
      ['an unknown id in the path', () => ['POST', 'identity/entity/id/no-such-entity', { policies: ['p'] }], 'entity not found from id'],
      ['the root policy', () => ['POST', 'identity/entity', { name: 'wants-root', policies: ['root'] }], 'policies cannot contain root'],
      ['root among others, any case', () => ['POST', `identity/entity/id/${existing.id}`, { policies: 'web,ROOT' }], 'policies cannot contain root'],
      ['root by name', () => ['POST', 'identity/entity/name/existing', { policies: [' root '] }], 'policies cannot contain root'],
      ['a rename onto a taken name', () => ['POST', `identity/entity/id/${existing.id}`, { name: 'OTHER' }], 'entity name is already in use'],
      ['bad metadata keys', () => ['POST', 'identity/entity', { metadata: { 'bad key': 'v' } }], 'invalid entity metadata: failed to load metadata pair ("bad key", "v"): key contains invalid characters'],
      ['reserved metadata keys', () => ['POST', `identity/entity/id/${existing.id}`, { metadata: { 'vault-x': '1' } }], 'key prefix "vault-" is reserved for internal use'],
      ['a non-boolean disabled', () => ['POST', 'identity/entity', { disabled: 'maybe' }], 'error converting input "maybe" for field "disabled"'],
      ['metadata that is not a map', () => ['POST', 'identity/entity', { metadata: 'novalue' }], 'error converting input "novalue" for field "metadata"'],
      ['a batch delete of nothing', () => ['POST', 'identity/entity/batch-delete', {}], 'missing entity ids to delete'],
      ['a name that is not valid Unicode', () => ['POST', 'identity/entity', { name: 'bad\ud800' }], 'not valid Unicode'],
    ];
    it.each(cases)('%s', async (_name, request, message) => {
      const before = await identityState(c.root);
      const [method, path, body] = request();
      const r = await root(method, path, body);
      expect(r.status).toBe(400);
      expect(r.body.errors[0]).toContain(message);
      expect(await identityState(c.root)).toEqual(before);
    });
  });
});

describe('entity aliases', () => {
  it('creates an alias on an entity and reads it in Vault\'s shape', async () => {
    const { id } = await newEntity({ name: 'dora' });
    const r = await root('POST', 'identity/entity-alias', { name: 'Dora', mount_accessor: tokenAccessor, canonical_id: id, custom_metadata: { email: 'd@example.com' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ canonical_id: id, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const alias = (await root('GET', `identity/entity-alias/id/${r.body.data.id}`)).body.data;
    expect(Object.keys(alias)).toEqual([
      'canonical_id', 'creation_time', 'custom_metadata', 'id', 'last_update_time', 'local', 'merged_from_canonical_ids',
      'metadata', 'mount_accessor', 'mount_path', 'mount_type', 'name', 'namespace_id',
    ]);
    expect(alias).toMatchObject({
      canonical_id: id,
      custom_metadata: { email: 'd@example.com' },
      local: false,
      merged_from_canonical_ids: null,
      metadata: null,
      mount_accessor: tokenAccessor,
      mount_path: 'auth/token/',
      mount_type: 'token',
      name: 'Dora',
      namespace_id: 'root',
    });
    expect(alias.creation_time).toMatch(TIME);
    const entity = (await root('GET', `identity/entity/id/${id}`)).body.data;
    expect(entity.aliases).toHaveLength(1);
    expect(entity.aliases[0]).toMatchObject({ id: r.body.data.id, name: 'Dora', mount_path: 'auth/token/', mount_type: 'token' });
    expect(entity.aliases[0].namespace_id).toBeUndefined();
  });

  it('creates an entity for an alias given no canonical_id', async () => {
    const r = await root('POST', 'identity/entity-alias', { name: 'fresh-login', mount_accessor: tokenAccessor });
    expect(r.status).toBe(200);
    const entity = (await root('GET', `identity/entity/id/${r.body.data.canonical_id}`)).body.data;
    expect(entity.name).toMatch(/^entity_[0-9a-f]{8}$/);
    expect(entity.aliases.map((a: { id: string }) => a.id)).toEqual([r.body.data.id]);
  });

  it('updates by id (custom metadata, name), 204 when nothing changes, and lists with key_info', async () => {
    const { id } = await newEntity();
    const alias = await newAlias({ name: 'edna', canonical_id: id });
    expect((await root('POST', `identity/entity-alias/id/${alias.id}`, {})).status).toBe(204);
    const upd = await root('POST', `identity/entity-alias/id/${alias.id}`, { custom_metadata: { k: 'v' }, name: 'edna2' });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toEqual({ canonical_id: id, id: alias.id });
    expect((await root('GET', `identity/entity-alias/id/${alias.id}`)).body.data).toMatchObject({ name: 'edna2', custom_metadata: { k: 'v' } });
    // The same alias found by mount accessor + name.
    expect((await root('POST', 'identity/entity-alias', { name: 'edna2', mount_accessor: tokenAccessor, custom_metadata: { k: 'w' } })).body.data.id).toBe(alias.id);
    const list = (await root('GET', 'identity/entity-alias/id?list=true')).body.data;
    expect(list.keys).toContain(alias.id);
    expect(list.key_info[alias.id]).toEqual({
      name: 'edna2', canonical_id: id, mount_accessor: tokenAccessor, custom_metadata: { k: 'w' }, metadata: null, local: false,
      mount_path: 'auth/token/', mount_type: 'token',
    });
  });

  it('deletes an alias, detaching it from its entity', async () => {
    const { id } = await newEntity();
    const alias = await newAlias({ name: 'fred', canonical_id: id });
    expect((await root('DELETE', `identity/entity-alias/id/${alias.id}`)).status).toBe(204);
    expect((await root('GET', `identity/entity-alias/id/${alias.id}`)).status).toBe(404);
    expect((await root('GET', `identity/entity/id/${id}`)).body.data.aliases).toEqual([]);
  });

  describe('refuses bad input without writing anything', () => {
    let ids = { entity: '', alias: '', other: '' };
    beforeAll(async () => {
      const { id } = await newEntity({ name: 'has-alias' });
      const alias = await newAlias({ name: 'gus', canonical_id: id });
      await newAlias({ name: 'taken-login' });
      ids = { entity: id, alias: alias.id, other: (await newEntity()).id };
    });
    const cases: [string, () => [string, unknown], string | (() => string)][] = [
      ['no name', () => ['identity/entity-alias', { mount_accessor: tokenAccessor }], "'id' or 'mount_accessor' and 'name' must be provided"],
      ['no mount accessor', () => ['identity/entity-alias', { name: 'x' }], "'id' or 'mount_accessor' and 'name' must be provided"],
      ['a secrets mount\'s accessor', () => ['identity/entity-alias', { name: 'x', mount_accessor: kvAccessor }], () => `invalid mount accessor "${kvAccessor}"`],
      ['an unknown accessor', () => ['identity/entity-alias', { name: 'x', mount_accessor: 'auth_nope_1234' }], 'invalid mount accessor "auth_nope_1234"'],
      ['an unknown entity', () => ['identity/entity-alias', { name: 'x', mount_accessor: tokenAccessor, canonical_id: 'ghost' }], 'invalid canonical ID'],
      [
        'a second alias on one mount for an entity',
        () => ['identity/entity-alias', { name: 'gus-2', mount_accessor: tokenAccessor, canonical_id: ids.entity }],
        'Alias already exists for requested entity and mount accessor',
      ],
      ['an unknown alias id', () => ['identity/entity-alias/id/ghost', { name: 'x' }], 'invalid alias ID provided'],
      ['a rename onto a taken login', () => [`identity/entity-alias/id/${ids.alias}`, { name: 'TAKEN-LOGIN' }], 'alias with combination of mount accessor and name already exists'],
      [
        'moving to a secrets mount',
        () => [`identity/entity-alias/id/${ids.alias}`, { mount_accessor: kvAccessor }],
        () => `invalid mount accessor "${kvAccessor}"`,
      ],
      ['bad custom metadata', () => [`identity/entity-alias/id/${ids.alias}`, { custom_metadata: { '': 'x' } }], 'custom_metadata keys cannot be empty'],
      ['a name that is not valid Unicode', () => ['identity/entity-alias', { name: '\udfff', mount_accessor: tokenAccessor }], 'invalid text "\\udfff": not valid Unicode'],
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

describe('merging entities', () => {
  it('needs sudo: a token with identity/* but no sudo is refused', async () => {
    await ok('PUT', 'sys/policies/acl/identity-admin', { policy: 'path "identity/*" { capabilities = ["create", "read", "update", "delete", "list"] }' });
    const token = (await ok('POST', 'auth/token/create', { policies: ['identity-admin'] })).body.auth.client_token;
    const a = await newEntity();
    const b = await newEntity();
    const r = await api('POST', 'identity/entity/merge', { token, body: { to_entity_id: a.id, from_entity_ids: [b.id] } });
    expect(r.status).toBe(403);
    expect(r.body.errors).toEqual([PERMISSION_DENIED]);
    expect((await root('GET', `identity/entity/id/${b.id}`)).status).toBe(200);
  });

  it('moves aliases and group memberships to the target and deletes the sources', async () => {
    const to = await newEntity({ name: 'merge-to', policies: ['to'] });
    const from = await newEntity({ name: 'merge-from', policies: ['from'] });
    const alias = await newAlias({ name: 'merge-from-login', canonical_id: from.id });
    const group = (await ok('POST', 'identity/group', { name: 'merge-group', member_entity_ids: [from.id] })).body.data;
    expect((await root('POST', 'identity/entity/merge', { to_entity_id: to.id, from_entity_ids: [from.id] })).status).toBe(204);
    expect((await root('GET', `identity/entity/id/${from.id}`)).status).toBe(404);
    const merged = (await root('GET', `identity/entity/id/${to.id}`)).body.data;
    expect(merged).toMatchObject({ merged_entity_ids: [from.id], policies: ['to'], direct_group_ids: [group.id] });
    expect(merged.aliases.map((a: { id: string }) => a.id)).toEqual([alias.id]);
    expect((await root('GET', `identity/entity-alias/id/${alias.id}`)).body.data).toMatchObject({ canonical_id: to.id, merged_from_canonical_ids: [from.id] });
    expect((await root('GET', `identity/group/id/${group.id}`)).body.data.member_entity_ids).toEqual([to.id]);
  });

  it('refuses aliases clashing on a mount accessor, unless told which to keep', async () => {
    const to = await newEntity();
    const from = await newEntity();
    const toAlias = await newAlias({ name: 'clash-to', canonical_id: to.id });
    const fromAlias = await newAlias({ name: 'clash-from', canonical_id: from.id });
    const before = await identityState(c.root);
    const r = await root('POST', 'identity/entity/merge', { to_entity_id: to.id, from_entity_ids: [from.id] });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain('toEntity and at least one fromEntity have aliases with the same mount accessor');
    expect(r.body.data.data).toHaveLength(2);
    expect(await identityState(c.root)).toEqual(before);

    const keep = await root('POST', 'identity/entity/merge', { to_entity_id: to.id, from_entity_ids: [from.id], conflicting_alias_ids_to_keep: [fromAlias.id] });
    expect(keep.status).toBe(204);
    expect((await root('GET', `identity/entity-alias/id/${toAlias.id}`)).status).toBe(404);
    expect((await root('GET', `identity/entity/id/${to.id}`)).body.data.aliases.map((a: { id: string }) => a.id)).toEqual([fromAlias.id]);
  });

  it.each([
    [{ from_entity_ids: ['x'] }, 'missing entity id to merge to'],
    [{ to_entity_id: 'x' }, 'missing entity ids to merge from'],
    [{ to_entity_id: 'ghost', from_entity_ids: ['also-ghost'] }, 'entity id to merge to is invalid'],
  ])('refuses %j', async (body, message) => {
    const before = await identityState(c.root);
    const r = await root('POST', 'identity/entity/merge', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect(await identityState(c.root)).toEqual(before);
  });
});
