// A DR secondary's rounds (src/core/replication/follower.ts) against this cluster as the primary,
// through its real internal HTTP endpoints, into fresh objects standing in for the secondary's:
// the first rounds repair every object by Merkle comparison, later ones follow the log; writes of
// every kind arrive; a disabled mount is dropped; a secondary that fell behind the trimmed log is
// repaired, never left diverging.
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { followOnce, type FollowerPorts } from '../../../src/core/replication/follower';
import type { ActivationPayload } from '../../../src/core/replication/state';
import type { ObjectName, ReplicaMerkle } from '../../../src/core/replication/stream';
import type { ReplicaContract, ReplicaReply } from '../../../src/rpc/contracts';
import { replicaValue } from '../../../durable-objects/replica-ops';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { ok } = caller(() => c.root);
const v = async <T,>(p: Promise<ReplicaReply<T>>): Promise<T> => replicaValue(await p);
let a: ActivationPayload;

/** The secondary's objects: one fresh object per primary object name. */
const copies = new Map<ObjectName, ReplicaContract>();
const copy = (name: ObjectName): ReplicaContract => {
  let stub = copies.get(name);
  if (!stub) copies.set(name, (stub = env.MOUNTS.get(env.MOUNTS.newUniqueId()) as unknown as ReplicaContract));
  return stub;
};

async function internal<T>(path: string, body: Record<string, unknown>): Promise<T> {
  const res = await SELF.fetch(`http://coffer.test/v1/sys/replication/dr/internal/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ secondary_id: a.secondary_id, credential: a.credential, ...body }),
  });
  const reply = (await res.json()) as { data: T; errors?: string[] };
  if (!res.ok) throw new Error(`${path}: ${res.status} ${reply.errors}`);
  return reply.data;
}

const ports: FollowerPorts = {
  pull: (positions, limit) => internal('pull', { positions, limit }),
  remoteMerkle: (object, buckets) => internal<ReplicaMerkle>('merkle', { object, ...(buckets ? { buckets } : {}) }),
  remoteValues: async (object, keys) => (await internal<{ values: Record<string, string | null> }>('values', { object, keys })).values,
  position: (name) => v(copy(name).replicaPosition(name)),
  apply: (name, page) => v(copy(name).replicaApply(name, page)),
  merkle: (name, buckets) => v(copy(name).replicaMerkle(buckets)),
  repair: async (name, values, resumeAfter) => void (await v(copy(name).replicaRepair(name, values, resumeAfter))),
  wipe: async (name) => void (await v(copy(name).replicaWipe())),
};

let known: ObjectName[] = [];
/** Rounds until one finds nothing new; the kinds of work each did. */
async function catchUp(): Promise<string[]> {
  const log: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await followOnce(ports, known, 7);
    known = r.objects;
    log.push(`${r.applied}/${r.repaired}/${r.dropped}`);
    if (r.applied === 0 && r.repaired === 0 && r.dropped === 0) return log;
  }
  throw new Error(`did not catch up: ${log.join(' ')}`);
}

/** Every primary object's root equals its copy's. */
async function expectIdentical(): Promise<void> {
  for (const name of known) {
    const primary = await internal<{ root: string }>('merkle', { object: name });
    const secondary = (await v(copy(name).replicaMerkle())) as { root: string };
    expect(secondary.root, name).toBe(primary.root);
  }
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
  await ok('POST', 'secret/data/old', { data: { v: 'before DR' } });
  await ok('POST', 'sys/replication/dr/primary/enable', { primary_cluster_addr: 'http://coffer.test' });
  const wrapped = (await ok('POST', 'sys/replication/dr/primary/secondary-token', { id: 'follower' })).body.wrap_info.token;
  a = (await api('POST', 'sys/wrapping/unwrap', { token: wrapped })).body.data;
});

describe('following a primary', () => {
  it('first repairs every object by Merkle comparison, then has nothing left to do', async () => {
    const rounds = await catchUp();
    expect(rounds[0]).toMatch(/^0\/\d+\/0$/);
    expect(Number(rounds[0].split('/')[1])).toBe(known.length);
    expect(known).toContain('system');
    await expectIdentical();
  });

  it('follows writes of every kind by the log', async () => {
    await ok('POST', 'secret/data/new', { data: { v: 1 } });
    await ok('POST', 'secret/data/new', { data: { v: 2 } });
    await ok('DELETE', 'secret/metadata/old');
    await ok('PUT', 'sys/policies/acl/followed', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    await ok('POST', 'auth/token/create', { policies: ['followed'] });
    await ok('POST', 'sys/mounts/transit', { type: 'transit' });
    await ok('POST', 'transit/keys/k', {});
    await ok('POST', 'transit/keys/k/rotate', {});
    const rounds = await catchUp();
    // The new transit mount is repaired once (never synced); the rest arrives by the log.
    expect(rounds.some((r) => Number(r.split('/')[0]) > 0)).toBe(true);
    expect(known.filter((o) => o.startsWith('mount/')).length).toBeGreaterThanOrEqual(2);
    await expectIdentical();
  });

  it('drops a mount the primary disabled', async () => {
    const uuid = (await ok('GET', 'sys/mounts')).body.data['transit/'].uuid as string;
    const name = `mount/${uuid}`;
    expect(known).toContain(name);
    await ok('DELETE', 'sys/mounts/transit');
    const rounds = await catchUp();
    expect(rounds.some((r) => r.endsWith('/1'))).toBe(true);
    expect(known).not.toContain(name);
    const left = (await v(copy(name).replicaMerkle([...Array(256).keys()]))) as { entries: Record<string, string> };
    expect(left.entries).toEqual({});
  });

  it('a secondary that fell behind a trimmed log is repaired, not left diverging', async () => {
    // Another secondary's pulls trim the log past this one's positions.
    const wrapped = (await ok('POST', 'sys/replication/dr/primary/secondary-token', { id: 'fast' })).body.wrap_info.token;
    const fast = (await api('POST', 'sys/wrapping/unwrap', { token: wrapped })).body.data as ActivationPayload;
    for (let i = 0; i < 10; i++) await ok('POST', `secret/data/burst/${i}`, { data: { i } });
    await ok('POST', 'sys/replication/dr/primary/revoke-secondary', { id: 'follower' });
    // With "follower" revoked, only "fast" holds the log back; it reports being at the end.
    const pull = async (positions: Record<string, number>) =>
      (await api('POST', 'sys/replication/dr/internal/pull', { body: { secondary_id: fast.secondary_id, credential: fast.credential, positions, limit: 1 } })).body.data;
    const ends = Object.fromEntries(Object.entries((await pull({})).pages as Record<string, { last: number }>).map(([k, p]) => [k, p.last]));
    await pull(ends);
    // "follower" comes back with a new token and the same objects: the log no longer reaches its positions.
    const again = (await ok('POST', 'sys/replication/dr/primary/secondary-token', { id: 'follower' })).body.wrap_info.token;
    a = (await api('POST', 'sys/wrapping/unwrap', { token: again })).body.data;
    const rounds = await catchUp();
    expect(Number(rounds[0].split('/')[1])).toBeGreaterThan(0);
    await expectIdentical();
  });

  it('a reindex (every object compared by Merkle tree) finds and repairs a corrupted entry', async () => {
    await catchUp();
    const uuid = (await ok('GET', 'sys/mounts')).body.data['secret/'].uuid as string;
    const name = `mount/${uuid}`;
    const entries = ((await v(copy(name).replicaMerkle([...Array(256).keys()]))) as { entries: Record<string, string> }).entries;
    const [victim, donor] = Object.keys(entries);
    // Damage behind the log's back: one stored value replaced by another's ciphertext.
    const stolen = await v(copy(name).replicaValues([donor]));
    const position = (await v(copy(name).replicaPosition(name)))!;
    await v(copy(name).replicaRepair(name, { [victim]: stolen[donor] }, position));
    expect(await catchUp()).toEqual(['0/0/0']); // the log alone does not notice
    const reindex = await followOnce(ports, [], 7);
    expect(reindex.repaired).toBe(known.length);
    await expectIdentical();
  });
});
