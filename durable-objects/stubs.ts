// Addressing of the cluster's Durable Objects, shared by the Worker and the objects themselves.
import type { Env } from '../src/env';
import { tokenShardCount } from '../src/env';
import { tokenShardName } from '../src/core/tokens';

export const SYSTEM_OBJECT_NAME = 'system';

export const systemStub = (env: Env) => env.SYSTEM.get(env.SYSTEM.idFromName(SYSTEM_OBJECT_NAME));
export const tokenShardStub = (env: Env, shard: number) => env.TOKENS.get(env.TOKENS.idFromName(tokenShardName(shard)));
export const mountStub = (env: Env, uuid: string) => env.MOUNTS.get(env.MOUNTS.idFromName(uuid));

export function allTokenShards(env: Env) {
  return Array.from({ length: tokenShardCount(env) }, (_, i) => tokenShardStub(env, i));
}
