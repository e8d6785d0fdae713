// DR replication, the primary's side through the HTTP API in workerd: status in every mode, the
// state machine's refusals, response-wrapped (JWT) and encrypted activation tokens, a secondary's
// authenticated pulls (every object's pages, which fresh objects apply to the primary's Merkle
// roots), Merkle and value reads for repair, revocation, expiry, and recording in objects created
// after enable. (The secondary's side: follower.test.ts here, and test/e2e/dr.test.ts.)
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { encryptActivation } from '../../../src/core/replication/activation';
import type { ActivationPayload } from '../../../src/core/replication/state';
import { planPull, type PullReply } from '../../../src/core/replication/stream';
import type { ReplicaContract, ReplicaReply } from '../../../src/rpc/contracts';
import { replicaValue } from '../../../durable-objects/replica-ops';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call: root, ok } = caller(() => c.root);
const v = async <T,>(p: Promise<ReplicaReply<T>>): Promise<T> => replicaValue(await p);
const fresh = (): ReplicaContract => env.MOUNTS.get(env.MOUNTS.newUniqueId()) as unknown as ReplicaContract;

async function activation(id: string, ttl?: string): Promise<ActivationPayload> {
  const r = await ok('POST', 'sys/replication/dr/primary/secondary-token', { id, ...(ttl ? { ttl } : {}) });
  expect(r.body.data).toBeNull();
  expect(r.body.wrap_info.creation_path).toBe('sys/replication/dr/primary/secondary-token');
  return (await api('POST', 'sys/wrapping/unwrap', { token: r.body.wrap_info.token })).body.data as ActivationPayload;
}
const pull = (a: ActivationPayload, positions: Record<string, number> = {}, extra: Record<string, unknown> = {}) =>
  api('POST', 'sys/replication/dr/internal/pull', { body: { secondary_id: a.secondary_id, credential: a.credential, positions, api_address: 'http://secondary.test', ...extra } });

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
  await ok('POST', 'secret/data/before-enable', { data: { v: 1 } });
});

describe('before enabling', () => {
  it('status says disabled, unauthenticated, in both shapes', async () => {
    expect((await api('GET', 'sys/replication/dr/status')).body.data).toEqual({ mode: 'disabled' });
    expect((await api('GET', 'sys/replication/status')).body.data).toEqual({ dr: { mode: 'disabled' }, performance: { mode: 'disabled' } });
  });

  it.each([
    ['primary/demote', 'Not a DR primary.'],
    ['primary/disable', 'Not a DR primary.'],
    ['primary/secondary-token', 'Not a DR primary.'],
    ['primary/revoke-secondary', 'Not a DR primary.'],
  ])('%s answers 400 "%s"', async (path, message) => {
    const r = await root('POST', `sys/replication/dr/${path}`, { id: 'x' });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(message);
  });

  it.each(['promote', 'update-primary', 'reindex', 'disable', 'operation-token/delete'])(
    'secondary/%s answers 400 "Not a DR secondary." before looking at the operation token',
    async (path) => {
      const r = await root('POST', `sys/replication/dr/secondary/${path}`, { dr_operation_token: 'hvd.wrong' });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['Not a DR secondary.']);
    },
  );

  it('refuses an activation token from a primary with another TOKEN_SHARDS, before anything is erased', async () => {
    const key = (await ok('POST', 'sys/replication/dr/secondary/generate-public-key', {})).body.data.secondary_public_key as string;
    const payload = { primary_api_addr: 'http://coffer.test', primary_cluster_addr: '', cluster_id: 'c', secondary_id: 'shards', credential: 'x', expires: Date.now() + 60_000 };
    const token = await encryptActivation({ ...payload, token_shards: 8 }, key);
    const r = await root('POST', 'sys/replication/dr/secondary/enable', { token });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toBe('the primary has 8 token shards and this cluster 3: set TOKEN_SHARDS to 8 here, then use a new activation token');
    expect((await api('GET', 'sys/replication/dr/status')).body.data.mode).toBe('disabled');
    expect((await ok('GET', 'secret/data/before-enable')).body.data.data).toEqual({ v: 1 });
  });

  it('a pull is refused when this cluster is no primary', async () => {
    const r = await api('POST', 'sys/replication/dr/internal/pull', { body: { secondary_id: 'x', credential: 'y' } });
    expect(r.status).toBe(403);
  });
});

describe('a primary', () => {
  let a: ActivationPayload;

  it('enables, reports its status, and refuses a second enable', async () => {
    expect((await root('POST', 'sys/replication/dr/primary/enable', { primary_cluster_addr: 'http://coffer.test' })).status).toBe(204);
    const status = (await api('GET', 'sys/replication/dr/status')).body.data;
    expect(status).toMatchObject({ mode: 'primary', known_secondaries: [], state: 'running', primary_cluster_addr: 'http://coffer.test', last_reindex_epoch: '0' });
    expect(status.cluster_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(status.merkle_root).toMatch(/^[0-9a-f]{40}$/);
    expect((await root('POST', 'sys/replication/dr/primary/enable', {})).status).toBe(400);
  });

  it('issues a response-wrapped activation token (sudo) that carries where and how to pull', async () => {
    a = await activation('east');
    expect(a).toMatchObject({ primary_api_addr: 'http://coffer.test', secondary_id: 'east', cluster_id: (await api('GET', 'sys/replication/dr/status')).body.data.cluster_id });
    expect(a.credential.length).toBeGreaterThanOrEqual(40);
    expect(a.expires).toBeGreaterThan(Date.now() + 29 * 60_000);
    expect((await root('POST', 'sys/replication/dr/primary/secondary-token', { id: 'east' })).body.errors[0]).toContain('already exists');
    expect((await root('POST', 'sys/replication/dr/primary/secondary-token', {})).body.errors[0]).toContain('missing secondary id');
    const narrow = (await ok('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token;
    expect((await api('POST', 'sys/replication/dr/primary/secondary-token', { token: narrow, body: { id: 'x' } })).body.errors).toEqual([PERMISSION_DENIED]);
  });

  it('encrypts the token to a secondary public key instead when given one', async () => {
    const key = (await ok('POST', 'sys/replication/dr/secondary/generate-public-key', {})).body.data.secondary_public_key as string;
    expect(key).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const r = await ok('POST', 'sys/replication/dr/primary/secondary-token', { id: 'encrypted', secondary_public_key: key });
    expect(r.body.wrap_info).toBeNull();
    expect(r.body.data.token).toMatch(/^cofferdr1\./);
    const bad = await root('POST', 'sys/replication/dr/primary/secondary-token', { id: 'bad-key', secondary_public_key: 'AAAA' });
    expect(bad.status).toBe(400);
    await ok('POST', 'sys/replication/dr/primary/revoke-secondary', { id: 'encrypted' });
  });

  it('signs the wrapped activation token as an ES512 JWT naming the primary, which unwrap checks', async () => {
    const jwt = (await ok('POST', 'sys/replication/dr/primary/secondary-token', { id: 'jwt', ttl: '10m' })).body.wrap_info.token as string;
    expect(decodeProtectedHeader(jwt).alg).toBe('ES512');
    const claims = decodeJwt(jwt);
    expect(claims).toMatchObject({ addr: 'http://coffer.test', type: 'wrapping' });
    expect(claims.exp! - claims.iat!).toBe(600);
    expect(claims.jti).toMatch(/^hvs\./);
    // Any change to the JWT breaks its signature: refused as an unknown wrapping token, and not spent.
    const [h, p, sig] = jwt.split('.');
    const forged = [h, btoa(JSON.stringify({ ...claims, addr: 'http://evil.test' })).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'), sig].join('.');
    for (const token of [forged, `${h}.${p}.${sig.slice(0, -4)}AAAA`]) {
      expect((await api('POST', 'sys/wrapping/unwrap', { token })).body.errors).toEqual(['wrapping token is not valid or does not exist']);
      expect((await root('POST', 'sys/wrapping/unwrap', { token })).body.errors).toEqual(['wrapping token is not valid or does not exist']);
    }
    // Looked up without spending it, then unwrapped with the JWT as the request's token.
    expect((await api('POST', 'sys/wrapping/lookup', { body: { token: jwt } })).body.data.creation_path).toBe('sys/replication/dr/primary/secondary-token');
    const unwrapped = await api('POST', 'sys/wrapping/unwrap', { token: jwt });
    expect(unwrapped.body.data).toMatchObject({ secondary_id: 'jwt', primary_api_addr: 'http://coffer.test', token_shards: 3 });
    expect((await api('POST', 'sys/wrapping/unwrap', { token: jwt })).body.errors).toEqual(['wrapping token is not valid or does not exist']);
    await ok('POST', 'sys/replication/dr/primary/revoke-secondary', { id: 'jwt' });
  });

  it('answers an authenticated pull with every object, whose pages rebuild each object exactly', async () => {
    await ok('POST', 'secret/data/after-enable', { data: { v: 2 } });
    await ok('PUT', 'sys/policies/acl/replicated', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    const r = await pull(a);
    expect(r.status).toBe(200);
    const reply = r.body.data as PullReply;
    expect(reply.objects).toContain('system');
    expect(reply.objects.filter((o) => o.startsWith('shard/')).length).toBeGreaterThan(0);
    const kvUuid = (await ok('GET', 'sys/mounts')).body.data['secret/'].uuid as string;
    expect(reply.objects).toContain(`mount/${kvUuid}`);
    // Recording began at enable: the secondary starts with a Merkle sync of each object, then
    // follows the log. Here: repair a fresh copy of the kv mount object, then apply its page.
    const name = `mount/${kvUuid}`;
    const action = planPull({}, reply).find((x) => x.object === name)!;
    expect(action.kind).toBe('merkle'); // never synced: recording began at enable, not at the start
    const copy = fresh();
    const merkle = (await api('POST', 'sys/replication/dr/internal/merkle', { body: { secondary_id: 'east', credential: a.credential, object: name } })).body.data;
    expect(merkle.buckets).toHaveLength(256);
    // Copy everything the primary holds, by bucket, through the values endpoint.
    const all = (await api('POST', 'sys/replication/dr/internal/merkle', { body: { secondary_id: 'east', credential: a.credential, object: name, buckets: [...Array(256).keys()] } })).body.data.entries;
    const values = (await api('POST', 'sys/replication/dr/internal/values', { body: { secondary_id: 'east', credential: a.credential, object: name, keys: Object.keys(all) } })).body.data.values;
    await v(copy.replicaRepair(name, values, reply.pages[name].last));
    const copyRoot = await v(copy.replicaMerkle());
    expect('root' in copyRoot && copyRoot.root).toBe(merkle.root);
    // The heartbeat shows in the status.
    const status = (await api('GET', 'sys/replication/dr/status')).body.data;
    expect(status.known_secondaries).toEqual(['east']);
    expect(status.secondaries[0]).toMatchObject({ node_id: 'east', api_address: 'http://secondary.test', connection_status: 'connected' });
    expect(status.last_wal).toBeGreaterThan(0);
  });

  it('starts recording in a mount enabled after enable, and trims what the secondary applied', async () => {
    await ok('POST', 'sys/mounts/later', { type: 'kv' });
    await ok('PUT', 'later/x', { v: 1 });
    const uuid = (await ok('GET', 'sys/mounts')).body.data['later/'].uuid as string;
    const first = (await pull(a)).body.data as PullReply;
    const page = first.pages[`mount/${uuid}`];
    expect(page.entries.length).toBeGreaterThan(0);
    // Reporting that position lets the primary trim up to it.
    await pull(a, { [`mount/${uuid}`]: page.last });
    const after = (await pull(a, { [`mount/${uuid}`]: page.last })).body.data as PullReply;
    expect(after.pages[`mount/${uuid}`].first).toBe(page.last);
  });

  it.each([
    ['a wrong credential', { secondary_id: 'east', credential: 'nope' }, 403, 'invalid credential'],
    ['an unknown secondary', { secondary_id: 'west', credential: 'nope' }, 403, 'unknown secondary'],
    ['no credential', { secondary_id: 'east' }, 400, 'secondary_id and credential are required'],
  ])('refuses a pull with %s', async (_what, body, status, message) => {
    const r = await api('POST', 'sys/replication/dr/internal/pull', { body });
    expect(r.status).toBe(status);
    expect(r.body.errors[0]).toContain(message);
  });

  it.each([
    ['an unknown object', { object: '../x' }, 'unknown replicated object'],
    ['a negative position', { positions: { system: -1 } }, 'non-negative integer'],
    ['a bucket out of range', { object: 'system', buckets: [300] }, 'bucket numbers are 0 to 255'],
  ])('refuses %s with a 400', async (_what, extra, message) => {
    const path = 'object' in extra ? 'sys/replication/dr/internal/merkle' : 'sys/replication/dr/internal/pull';
    const r = await api('POST', path, { body: { secondary_id: 'east', credential: a.credential, ...extra } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(message);
  });

  it('an expired activation token that was never used is refused; a revoked secondary is cut off', async () => {
    const short = await activation('short', '1s');
    await new Promise((r) => setTimeout(r, 1100));
    expect((await pull(short)).body.errors[0]).toContain('activation token has expired');
    expect((await pull(a)).status).toBe(200);
    await ok('POST', 'sys/replication/dr/primary/revoke-secondary', { id: 'east' });
    expect((await pull(a)).status).toBe(403);
    expect((await root('POST', 'sys/replication/dr/primary/revoke-secondary', { id: 'east' })).body.errors[0]).toContain('unknown secondary id');
  });

  it('demote keeps the cluster id and stops recording; disable forgets it', async () => {
    const id = (await api('GET', 'sys/replication/dr/status')).body.data.cluster_id;
    await ok('POST', 'sys/replication/dr/primary/demote', {});
    const status = (await api('GET', 'sys/replication/dr/status')).body.data;
    expect(status).toMatchObject({ mode: 'secondary', cluster_id: id, connection_state: 'idle', state: 'idle', primaries: [] });
    // A demoted cluster is a secondary: it honours no client token (even root), only DR
    // operation tokens, so it cannot be enabled as a primary; it is promoted instead.
    expect((await root('POST', 'sys/replication/dr/primary/enable', {})).body.errors).toEqual([PERMISSION_DENIED]);
    expect((await root('POST', 'sys/replication/dr/secondary/promote', { dr_operation_token: 'hvd.x' })).body.errors).toEqual(['invalid DR operation token']);
  });
});
