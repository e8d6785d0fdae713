// Mount objects validate tokens under leases from the token's shard; revoking a token at its shard
// makes every holder forget it before the revocation returns.
import { env, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { shardFor, tokenShardName } from '../../../src/core/tokens/entry';
import { api, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const shardStub = (token: string) => env.TOKENS.get(env.TOKENS.idFromName(tokenShardName(shardFor(token, 3))));

async function mintRoot(): Promise<string> {
  const s = await api('PUT', 'sys/generate-root/attempt', { token: c.root, body: {} });
  await api('PUT', 'sys/generate-root/update', { body: { nonce: s.body.nonce, key: c.recoveryKeys[0] } });
  const d = await api('PUT', 'sys/generate-root/update', { body: { nonce: s.body.nonce, key: c.recoveryKeys[1] } });
  return (await api('PUT', 'sys/decode-token', { body: { encoded_token: d.body.encoded_token, otp: s.body.otp } })).body.data.token;
}

async function accessorOf(token: string): Promise<string> {
  return (await api('GET', 'auth/token/lookup-self', { token })).body.data.accessor;
}

async function holderKeys(token: string, accessor: string): Promise<string[]> {
  return runInDurableObject(shardStub(token), (_o, state) =>
    state.storage.sql
      .exec<{ key: string }>('SELECT key FROM coffer_kv WHERE key LIKE ? ORDER BY key', `holders/${accessor}/%`)
      .toArray()
      .map((r) => r.key),
  );
}

beforeAll(async () => {
  c = await initCluster();
  await api('POST', 'sys/mounts/one', { token: c.root, body: { type: 'kv' } });
  await api('POST', 'sys/mounts/two', { token: c.root, body: { type: 'kv' } });
});

describe('token leases', () => {
  it('records each mount that holds a lease on a token', async () => {
    const token = await mintRoot();
    const accessor = await accessorOf(token);
    await api('PUT', 'one/x', { token, body: { v: 1 } });
    await api('PUT', 'two/x', { token, body: { v: 2 } });
    const uuids = await Promise.all(['one', 'two'].map(async (m) => (await api('GET', `sys/mounts/${m}`, { token: c.root })).body.data.uuid));
    expect(await holderKeys(token, accessor)).toEqual(uuids.map((u) => `holders/${accessor}/mount:${u}`).sort());
  });

  it('a revoked token stops working on every mount at once, leases notwithstanding', async () => {
    const token = await mintRoot();
    const accessor = await accessorOf(token);
    for (const m of ['one', 'two']) expect((await api('GET', `${m}/x`, { token })).status).toBe(200);
    await shardStub(token).revokeToken(token);
    for (const m of ['one', 'two']) {
      const r = await api('GET', `${m}/x`, { token });
      expect(r.status).toBe(403);
      expect(r.body.errors).toEqual(['2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n']);
    }
    expect((await api('GET', 'auth/token/lookup-self', { token })).status).toBe(403);
    expect(await holderKeys(token, accessor)).toEqual([]);
    // The cluster's other tokens are untouched.
    expect((await api('GET', 'one/x', { token: c.root })).status).toBe(200);
  });

  it('holders that could not be told are told by auth/token/tidy', async () => {
    const token = await mintRoot();
    const accessor = await accessorOf(token);
    await api('GET', 'one/x', { token });
    const stub = shardStub(token);
    // Delete the token without telling the holders, as if every notification had failed.
    await runInDurableObject(stub, async (instance) => {
      const shard = (instance as unknown as { shard: { tokens: { lookup(t: string): Promise<unknown>; remove(s: unknown): Promise<void> } } }).shard;
      await shard.tokens.remove(await shard.tokens.lookup(token));
    });
    expect(await holderKeys(token, accessor)).toHaveLength(1);
    expect((await api('GET', 'one/x', { token })).status).toBe(200); // the lease still stands
    // The shard's alarm no longer sweeps every tick (only an instance's first, or when flagged).
    expect((await api('POST', 'auth/token/tidy', { token: c.root })).status).toBe(200);
    expect((await api('GET', 'one/x', { token })).status).toBe(403);
    expect(await holderKeys(token, accessor)).toEqual([]);
  });

  it('leases end with a seal: the cluster answers 503, and after unsealing tokens work again', async () => {
    await api('PUT', 'sys/seal', { token: c.root });
    expect((await api('GET', 'one/x', { token: c.root })).status).toBe(503);
    await api('PUT', 'sys/unseal', { body: { key: c.recoveryKeys[0] } });
    await api('PUT', 'sys/unseal', { body: { key: c.recoveryKeys[1] } });
    expect((await api('GET', 'one/x', { token: c.root })).status).toBe(200);
  });
});
