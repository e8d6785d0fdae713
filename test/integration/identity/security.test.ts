// Privilege escalation through the identity store (the CVE-2021-41802 and CVE-2024-9180 classes).
// An operator who may create, read, update, delete and list under identity/ (but holds no sudo)
// tries to gain root, or a victim's policies, through entity and group policies, merges, alias
// creation and alias re-pointing: every attempt is refused and nothing changes. With sudo, Vault
// allows merges and re-pointing (still never root, never two aliases on one mount for an entity).
import { beforeAll, describe, expect, it } from 'vitest';
import { identityState } from '../../helpers/identity';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
let tokenAccessor = '';
const { call: root, ok } = caller(() => c.root);

/** A token of role "login" tied to the entity behind entity alias `alias`. */
async function login(alias: string, policies: string[]) {
  const auth = (await ok('POST', 'auth/token/create/login', { entity_alias: alias, policies })).body.auth;
  return { token: auth.client_token as string, entityId: auth.entity_id as string };
}

/** A victim: an entity with a token login, its own policy, and a group granting the same. */
async function victim(name: string) {
  const alias = (await ok('POST', 'identity/entity-alias', { name, mount_accessor: tokenAccessor })).body.data;
  await ok('POST', `identity/entity/id/${alias.canonical_id}`, { name, policies: ['victim-secrets'] });
  const group = (await ok('POST', 'identity/group', { name: `${name}-group`, policies: ['victim-secrets'], member_entity_ids: [alias.canonical_id] })).body.data;
  return { entityId: alias.canonical_id as string, aliasId: alias.id as string, groupId: group.id as string };
}

const entityAliasOf = async (entityId: string) => (await root('GET', `identity/entity/id/${entityId}`)).body.data.aliases[0].id as string;

/** What a token may do on the victim's secret and on a root-only path. */
async function reach(token: string) {
  const caps = (await api('POST', 'sys/capabilities-self', { token, body: { paths: ['secret/victim/x', 'sys/mounts'] } })).body.data;
  return { caps: [caps['secret/victim/x'], caps['sys/mounts']], read: (await api('GET', 'secret/victim/x', { token })).status };
}

beforeAll(async () => {
  c = await initCluster();
  tokenAccessor = (await root('GET', 'sys/auth')).body.data['token/'].accessor;
  await ok('POST', 'sys/mounts/secret', { type: 'kv' });
  await ok('PUT', 'secret/victim/x', { value: 'the victim\'s secret' });
  await ok('PUT', 'sys/policies/acl/victim-secrets', { policy: 'path "secret/victim/*" { capabilities = ["read"] }' });
  await ok('PUT', 'sys/policies/acl/identity-operator', { policy: 'path "identity/*" { capabilities = ["create", "read", "update", "delete", "list"] }' });
  await ok('PUT', 'sys/policies/acl/identity-sudo', { policy: 'path "identity/*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }' });
  await ok('POST', 'auth/token/roles/login', { allowed_entity_aliases: ['*'], allowed_policies: ['identity-operator', 'identity-sudo'] });
});

describe('an identity operator without sudo', () => {
  let operator = { token: '', entityId: '' };
  let ids: Record<string, string> = {};
  beforeAll(async () => {
    operator = await login('operator', ['identity-operator']);
    const v = await victim('victim');
    ids = {
      operator: operator.entityId,
      operatorAlias: await entityAliasOf(operator.entityId),
      operatorName: (await root('GET', `identity/entity/id/${operator.entityId}`)).body.data.name,
      victim: v.entityId,
      victimAlias: v.aliasId,
      victimGroup: v.groupId,
    };
  });

  const sudoNeeded = 'root or sudo privileges required to move an alias to another entity';
  const noRoot = 'policies cannot contain root';
  const attempts: [string, string, (ids: Record<string, string>) => unknown, number, string][] = [
    // (identity/entity/id/<own id> itself is read-only for it: the default policy's exact rule wins.)
    ['root on its own entity', 'identity/entity', (i) => ({ id: i.operator, policies: ['root'] }), 400, noRoot],
    ['root spelled otherwise', 'identity/entity', (i) => ({ id: i.operator, policies: 'default,ROOT' }), 400, noRoot],
    ['root on a new entity', 'identity/entity', () => ({ name: 'evil', policies: ['root'] }), 400, noRoot],
    ['root through its entity\'s name', 'identity/entity', (i) => ({ name: i.operatorName, policies: [' root '] }), 400, noRoot],
    ['root through another entity\'s name', 'identity/entity/name/victim', () => ({ policies: ['root'] }), 400, noRoot],
    ['a root group around itself', 'identity/group', (i) => ({ name: 'evil-group', policies: ['root'], member_entity_ids: [i.operator] }), 400, noRoot],
    ['root on an existing group it belongs to', 'identity/group/id/{victimGroup}', () => ({ policies: ['victim-secrets', 'root'] }), 400, noRoot],
    ['root through a group name', 'identity/group/name/victim-group', () => ({ policies: ['Root'] }), 400, noRoot],
    ['merging the victim into itself', 'identity/entity/merge', (i) => ({ to_entity_id: i.operator, from_entity_ids: [i.victim] }), 403, PERMISSION_DENIED],
    ['merging itself into the victim', 'identity/entity/merge', (i) => ({ to_entity_id: i.victim, from_entity_ids: [i.operator] }), 403, PERMISSION_DENIED],
    ['re-pointing its alias at the victim', 'identity/entity-alias/id/{operatorAlias}', (i) => ({ canonical_id: i.victim }), 400, sudoNeeded],
    ['re-pointing with the deprecated entity_id', 'identity/entity-alias/id/{operatorAlias}', (i) => ({ entity_id: i.victim }), 400, sudoNeeded],
    ['re-pointing by mount accessor and name', 'identity/entity-alias', (i) => ({ name: 'operator', mount_accessor: tokenAccessor, canonical_id: i.victim }), 400, sudoNeeded],
    ['taking over the victim\'s alias', 'identity/entity-alias/id/{victimAlias}', (i) => ({ canonical_id: i.operator }), 400, sudoNeeded],
    [
      'a second login alias on the victim',
      'identity/entity-alias',
      (i) => ({ name: 'operator-2', mount_accessor: tokenAccessor, canonical_id: i.victim }),
      400,
      'Alias already exists for requested entity and mount accessor',
    ],
  ];

  it.each(attempts)('is refused %s, and nothing changes', async (_name, pathTemplate, body, status, message) => {
    const before = await identityState(c.root);
    const path = pathTemplate.replace(/\{(\w+)\}/g, (_m, k: string) => ids[k]);
    const r = await api('POST', path, { token: operator.token, body: body(ids) });
    expect(r.status).toBe(status);
    expect(r.body.errors).toEqual([message]);
    expect(await identityState(c.root)).toEqual(before);
    expect(await reach(operator.token)).toEqual({ caps: [['deny'], ['deny']], read: 403 });
    // Its login still lands on its own entity.
    expect((await login('operator', ['identity-operator'])).entityId).toBe(ids.operator);
  });
});

describe('an identity operator with sudo', () => {
  let operator = { token: '', entityId: '' };
  beforeAll(async () => {
    operator = await login('sudo-operator', ['identity-sudo']);
  });

  it('still cannot give root to an entity or a group', async () => {
    const before = await identityState(c.root);
    for (const [path, body] of [
      ['identity/entity', { id: operator.entityId, policies: ['root'] }],
      ['identity/group', { policies: ['root'], member_entity_ids: [operator.entityId] }],
    ] as const) {
      const r = await api('POST', path, { token: operator.token, body });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['policies cannot contain root']);
    }
    expect(await identityState(c.root)).toEqual(before);
    expect((await reach(operator.token)).caps[1]).toEqual(['deny']);
  });

  it('still cannot give an entity two aliases on one mount, by creation or by moving', async () => {
    const v = await victim('victim-two-aliases');
    const before = await identityState(c.root);
    const create = await api('POST', 'identity/entity-alias', { token: operator.token, body: { name: 'sudo-op-2', mount_accessor: tokenAccessor, canonical_id: v.entityId } });
    expect(create.status).toBe(400);
    expect(create.body.errors).toEqual(['Alias already exists for requested entity and mount accessor']);
    const move = await api('POST', `identity/entity-alias/id/${v.aliasId}`, { token: operator.token, body: { canonical_id: operator.entityId } });
    expect(move.status).toBe(400);
    expect(move.body.errors).toEqual(['Alias cannot be updated as the given entity already has an alias for this mount']);
    expect(await identityState(c.root)).toEqual(before);
  });

  it('may merge, which hands it the merged entity\'s logins and groups (as Vault allows)', async () => {
    const v = await victim('victim-merged');
    expect((await reach(operator.token)).read).toBe(403);
    // Both have a token-mount alias: the operator must say which one to keep.
    const clash = await api('POST', 'identity/entity/merge', { token: operator.token, body: { to_entity_id: operator.entityId, from_entity_ids: [v.entityId] } });
    expect(clash.status).toBe(400);
    const keep = await entityAliasOf(operator.entityId);
    const merged = await api('POST', 'identity/entity/merge', {
      token: operator.token,
      body: { to_entity_id: operator.entityId, from_entity_ids: [v.entityId], conflicting_alias_ids_to_keep: [keep] },
    });
    expect(merged.status).toBe(204);
    expect((await root('GET', `identity/entity/id/${v.entityId}`)).status).toBe(404);
    // The victim's group now holds the operator: its policy applies at once.
    expect(await reach(operator.token)).toEqual({ caps: [['read'], ['deny']], read: 200 });
  });

  it('may re-point an alias to another entity (as Vault allows)', async () => {
    const v = await victim('victim-repointed');
    const target = (await ok('POST', 'identity/entity', { name: 'alias-target' })).body.data;
    const r = await api('POST', `identity/entity-alias/id/${v.aliasId}`, { token: operator.token, body: { canonical_id: target.id } });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ canonical_id: target.id, id: v.aliasId });
    expect((await login('victim-repointed', ['identity-operator'])).entityId).toBe(target.id);
  });
});
