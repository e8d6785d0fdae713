// Addressing of the cluster's Durable Objects, shared by the Worker and the objects themselves.
import type { Env } from './env';
import { tokenShardCount } from './env';
import { shardFor, tokenShardName } from '../core/tokens/entry';
import type { WrapStore } from '../pipeline/wrapping';

export const SYSTEM_OBJECT_NAME = 'system';

// Ids are cached per isolate (deriving one per request shows on the hot path). Stubs cannot be:
// workerd binds a stub to the request that created it.
const ids = new WeakMap<object, Map<string, DurableObjectId>>();

function stubFor<T extends Rpc.DurableObjectBranded | undefined>(ns: DurableObjectNamespace<T>, name: string): DurableObjectStub<T> {
  let byName = ids.get(ns);
  if (!byName) ids.set(ns, (byName = new Map()));
  let id = byName.get(name);
  if (!id) {
    id = ns.idFromName(name);
    byName.set(name, id);
  }
  return ns.get(id);
}

export const systemStub = (env: Env) => stubFor(env.SYSTEM, SYSTEM_OBJECT_NAME);
export const tokenShardStub = (env: Env, shard: number) => stubFor(env.TOKENS, tokenShardName(shard));
export const mountStub = (env: Env, uuid: string) => stubFor(env.MOUNTS, uuid);
export const auditStub = (env: Env, uuid: string) => stubFor(env.AUDIT, uuid);

export function allTokenShards(env: Env) {
  return Array.from({ length: tokenShardCount(env) }, (_, i) => tokenShardStub(env, i));
}

/** Where response-wrapping tokens are stored: the shard each new token belongs to. */
export function wrapStore(env: Env): WrapStore {
  return (token, record) => tokenShardStub(env, shardFor(token, tokenShardCount(env))).wrap(token, record);
}
