// Reads served from memory answer at once in their object (src/framework/steps.ts): the object's
// method returns the result itself, not a promise. KV v1 and v2 reads and lists on a mount's object,
// and lookup-self on the token's shard. The first read of a caller the object does not know yet
// waits (its token lease), and so does whatever must wait on the way; the answers are the same.
import { env, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { shardFor } from '../../../src/core/tokens/entry';
import type { WireRequest } from '../../../src/pipeline/dispatch';
import type { WireResult } from '../../../src/pipeline/result';
import { tokenShardCount } from '../../../src/rpc/env';
import { mountStub, systemStub, tokenShardStub } from '../../../src/rpc/stubs';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { ok } = caller(() => c.root);

const wireFor = (operation: WireRequest['operation'], path: string, data: Record<string, unknown> = {}): WireRequest => ({
  id: crypto.randomUUID(),
  operation,
  path,
  data,
  auth: null,
  clientIP: '127.0.0.1',
  headers: {},
  wrapTTL: 0,
});

interface Handled {
  atOnce: boolean;
  result: WireResult;
}

/** What the mount's object returned: the result itself, or a promise of it. */
async function inMount(prefix: string, wire: WireRequest, token: string): Promise<Handled> {
  const routes = await systemStub(env).routes();
  if (!Array.isArray(routes)) throw new Error('no routes');
  const route = routes.find((r) => r.prefix === prefix)!;
  return await runInDurableObject(mountStub(env, route.uuid), async (instance) => {
    const returned = (instance as unknown as { handle(p: string, r: number, w: WireRequest, t: string): WireResult | Promise<WireResult> }).handle(route.prefix, route.revision, wire, token);
    return { atOnce: !(returned instanceof Promise), result: await returned };
  });
}

/** The same at the token's shard, for auth/token/ paths. */
async function inShard(wire: WireRequest, token: string): Promise<Handled> {
  return await runInDurableObject(tokenShardStub(env, shardFor(token, tokenShardCount(env))), async (instance) => {
    const returned = (instance as unknown as { handle(t: string, p: string, w: WireRequest): WireResult | Promise<WireResult> }).handle(token, 'auth/token/', wire);
    return { atOnce: !(returned instanceof Promise), result: await returned };
  });
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } });
  await ok('PUT', 'kv1/app/db', { password: 'hunter2' });
  await ok('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
  await ok('PUT', 'secret/data/app/db', { data: { password: 'hunter3' } });
  await ok('PUT', 'sys/policies/acl/reader', { policy: 'path "kv1/*" { capabilities = ["read", "list"] }' });
});

describe('reads answered at once', () => {
  it('KV v1: read and list, for root and for a token through its ACL, once the caller is known', async () => {
    const reader = (await ok('POST', 'auth/token/create', { policies: ['reader'] })).body.auth.client_token as string;
    // The reader's first request waits for its token lease from the shard.
    const first = await inMount('kv1/', wireFor('read', 'kv1/app/db'), reader);
    expect(first).toMatchObject({ atOnce: false, result: { kind: 'ok', response: { data: { password: 'hunter2' } } } });
    for (const token of [c.root, reader]) {
      await inMount('kv1/', wireFor('read', 'kv1/app/db'), token);
      expect(await inMount('kv1/', wireFor('read', 'kv1/app/db'), token)).toMatchObject({ atOnce: true, result: { kind: 'ok', response: { data: { password: 'hunter2' } } } });
      await inMount('kv1/', wireFor('list', 'kv1/app/'), token);
      expect(await inMount('kv1/', wireFor('list', 'kv1/app/'), token)).toMatchObject({ atOnce: true, result: { kind: 'ok', response: { data: { keys: ['db'] } } } });
    }
    // Refused by the ACL: at once too, and still refused.
    expect(await inMount('kv1/', wireFor('delete', 'kv1/app/db'), reader)).toMatchObject({ result: { kind: 'error', status: 403 } });
  });

  it('KV v2: a version read and a metadata list; a list that must look further (exclude_deleted) waits', async () => {
    await inMount('secret/', wireFor('read', 'secret/data/app/db'), c.root);
    expect(await inMount('secret/', wireFor('read', 'secret/data/app/db'), c.root)).toMatchObject({ atOnce: true, result: { kind: 'ok', response: { data: { data: { password: 'hunter3' } } } } });
    await inMount('secret/', wireFor('list', 'secret/metadata/app/'), c.root);
    expect(await inMount('secret/', wireFor('list', 'secret/metadata/app/'), c.root)).toMatchObject({ atOnce: true, result: { kind: 'ok', response: { data: { keys: ['db'] } } } });
    const filtered = await inMount('secret/', wireFor('list', 'secret/metadata/app/', { exclude_deleted: 'true' }), c.root);
    expect(filtered).toMatchObject({ atOnce: false, result: { kind: 'ok', response: { data: { keys: ['db'] } } } });
  });

  it('a value just written is read back at once, and never the old one', async () => {
    await ok('PUT', 'kv1/app/db', { password: 'changed' });
    await inMount('kv1/', wireFor('read', 'kv1/app/db'), c.root);
    expect(await inMount('kv1/', wireFor('read', 'kv1/app/db'), c.root)).toMatchObject({ atOnce: true, result: { response: { data: { password: 'changed' } } } });
  });

  it('lookup-self at the token shard, for a token it holds in memory; one with an entity asks the identity store', async () => {
    await inShard(wireFor('read', 'auth/token/lookup-self'), c.root);
    expect(await inShard(wireFor('read', 'auth/token/lookup-self'), c.root)).toMatchObject({ atOnce: true, result: { kind: 'ok', response: { data: { policies: ['root'] } } } });
    const entity = (await ok('POST', 'identity/entity', { name: 'ada', policies: ['reader'] })).body.data.id as string;
    const accessor = (await ok('GET', 'sys/auth')).body.data['token/'].accessor as string;
    await ok('POST', 'identity/entity-alias', { name: 'ada-token', canonical_id: entity, mount_accessor: accessor });
    await ok('POST', 'auth/token/roles/ada', { allowed_entity_aliases: ['ada-token'] });
    const ada = (await ok('POST', 'auth/token/create/ada', { entity_alias: 'ada-token' })).body.auth.client_token as string;
    await inShard(wireFor('read', 'auth/token/lookup-self'), ada);
    expect(await inShard(wireFor('read', 'auth/token/lookup-self'), ada)).toMatchObject({ atOnce: false, result: { kind: 'ok', response: { data: { entity_id: entity, identity_policies: ['reader'] } } } });
  });
});
