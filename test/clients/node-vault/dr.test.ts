// DR replication through node-vault, on two launchers of this file's own (a primary, and a
// secondary sharing its seal key): node-vault has no DR methods, so the sys/replication endpoints
// go through its generic write/read (and unwrap for a response-wrapped activation token), and
// everything else through its own methods — mount, KV writes and reads, tokenCreate,
// tokenLookupSelf. What it checks: the modes and refusals before and after primary/enable, a
// secondary activated with the wrapped JWT while the primary takes writes, the sync the status
// endpoints report, a secondary serving nothing, a DR operation token built from the primary's
// recovery keys, and promotion to a cluster that answers the primary's data to the primary's token.
import { decodeJwt } from 'jose';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDrPair, type DrPair } from '../../e2e/dr-pair';
import { failure, unique, type Client } from './client';

const DR = 'sys/replication/dr';
const DISABLED_ON_SECONDARY = 'path disabled in replication DR secondary mode';
const PERMISSION_DENIED = '1 error occurred:\n\t* permission denied\n\n';

let pair: DrPair;
/** A node-vault client on `url`; no token at all when `token` is ''. */
function client(url: string, token = ''): Client {
  const c = nodeVault({ endpoint: url, token, noCustomHTTPVerbs: true });
  // node-vault falls back to VAULT_TOKEN when the configured token is empty.
  c.token = token;
  return c;
}
const primary = () => client(pair.primary.url, pair.primary.rootToken);
const anonymous = (url: string) => client(url);
const drStatus = async (url: string) => (await anonymous(url).read(`${DR}/status`)).data;

/** A call that must fail with exactly this status and error. */
async function refused(p: Promise<unknown>, status: number, error: string): Promise<void> {
  expect(await failure(p)).toEqual({ status, errors: [error] });
}

/** XOR of the base64 encoded token with the OTP (sys/decode-token's rule). */
function decode(encoded: string, otp: string): string {
  const bytes = Buffer.from(encoded, 'base64');
  const pad = Buffer.from(otp, 'utf8');
  return Buffer.from(bytes.map((b, i) => b ^ pad[i])).toString('utf8');
}

const kv = unique('dr-kv');
/** Every KV v2 value the primary acknowledged, by key. */
const written: Record<string, Record<string, unknown>> = {};
let activation = '';
let clusterId = '';
let operationToken = '';

beforeAll(async () => {
  pair = await startDrPair();
}, 120_000);
afterAll(async () => {
  await pair?.stop();
});

describe('DR replication through node-vault', () => {
  it('answers the replication status without a token on both clusters, DR disabled', async () => {
    for (const url of [pair.primary.url, pair.secondary.url]) {
      const anon = anonymous(url);
      expect((await anon.read(`${DR}/status`)).data).toEqual({ mode: 'disabled' });
      const all = (await anon.read('sys/replication/status')).data;
      expect(all.dr.mode).toBe('disabled');
      expect(all.performance.mode).toBe('disabled');
    }
    // Two clusters of their own: different root tokens, different cluster ids.
    expect(pair.secondary.rootToken).not.toBe(pair.primary.rootToken);
    const [p, s] = [await primary().health(), await client(pair.secondary.url).health()];
    expect(p).toMatchObject({ initialized: true, sealed: false, replication_dr_mode: 'disabled' });
    expect(s.cluster_id).not.toBe(p.cluster_id);
  });

  it('refuses operations of the wrong mode, enables the primary (KV data on it) and refuses bad input', async () => {
    const root = primary();
    await root.mount({ mount_point: kv, type: 'kv', options: { version: '2' } });
    for (const [key, value] of [['app', { version: 1 }], ['app', { version: 2 }], ['db', { user: 'svc', port: 5432 }], ['nested/deep', { ok: true }]] as const) {
      await root.write(`${kv}/data/${key}`, { data: value });
      written[key] = value;
    }

    await refused(root.write(`${DR}/primary/demote`, {}), 400, 'Not a DR primary.');
    await refused(root.write(`${DR}/primary/secondary-token`, { id: 'early' }), 400, 'Not a DR primary.');
    await refused(anonymous(pair.primary.url).write(`${DR}/secondary/promote`, { dr_operation_token: 'hvd.x' }), 400, 'Not a DR secondary.');

    await root.write(`${DR}/primary/enable`, {});
    const status = await drStatus(pair.primary.url);
    expect(status).toMatchObject({ mode: 'primary', known_secondaries: [], secondaries: [], state: 'running', primary_cluster_addr: '' });
    expect(status.cluster_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(status.last_wal).toBeGreaterThanOrEqual(0);
    clusterId = status.cluster_id;

    await refused(root.write(`${DR}/primary/enable`, {}), 400, 'DR replication is already enabled as a primary');
    await refused(root.write(`${DR}/primary/secondary-token`, { id: null }), 400, 'missing secondary id');
    await refused(root.write(`${DR}/primary/secondary-token`, {}), 400, 'missing secondary id');
    await refused(
      root.write(`${DR}/primary/secondary-token`, { id: 'bad-ttl', ttl: 'banana' }),
      400,
      'error converting input "banana" for field "ttl": time: invalid duration "banana"',
    );
    // A token with only the default policy: secondary-token is a sudo path.
    const limited = (await primary().tokenCreate({ policies: ['default'], ttl: '15m' })).auth.client_token;
    await refused(client(pair.primary.url, limited).write(`${DR}/primary/secondary-token`, { id: 'no-sudo' }), 403, PERMISSION_DENIED);
    await refused(
      root.write(`${DR}/primary/secondary-token`, { id: 'bad-key', secondary_public_key: 'AAAA' }),
      400,
      'secondary_public_key must be the base64 encoding of an uncompressed P-256 public key (65 bytes), as secondary/generate-public-key returns it',
    );
    await refused(root.write(`${DR}/primary/revoke-secondary`, { id: 'nobody' }), 400, 'unknown secondary id "nobody"');
    // None of the refused requests registered a secondary.
    expect((await drStatus(pair.primary.url)).known_secondaries).toEqual([]);
  });

  it('activates the secondary with a response-wrapped JWT while the primary takes writes', async () => {
    const root = primary();
    const issued = await root.write(`${DR}/primary/secondary-token`, { id: 'dr-east' });
    expect(issued.wrap_info.creation_path).toBe('sys/replication/dr/primary/secondary-token');
    expect(issued.wrap_info.ttl).toBe(1800);
    activation = issued.wrap_info.token;
    const claims = decodeJwt(activation);
    expect(claims.addr).toBe(pair.primary.url);
    expect(claims.type).toBe('wrapping');

    // What a wrapped activation token carries, through node-vault's unwrap (which spends it).
    const spare = (await root.write(`${DR}/primary/secondary-token`, { id: 'dr-spare', ttl: '10m' })).wrap_info;
    expect(spare.ttl).toBe(600);
    const payload = (await root.unwrap({ token: spare.token })).data;
    expect(payload).toMatchObject({ cluster_id: clusterId, secondary_id: 'dr-spare', primary_api_addr: pair.primary.url });
    expect(payload.credential).toEqual(expect.any(String));
    expect(payload.expires).toBeGreaterThan(Date.now());
    const own = client(pair.secondary.url, pair.secondary.rootToken);
    await refused(
      own.write(`${DR}/secondary/enable`, { token: spare.token }),
      400,
      `the activation token could not be unwrapped at ${pair.primary.url}: wrapping token is not valid or does not exist`,
    );
    await root.write(`${DR}/primary/revoke-secondary`, { id: 'dr-spare' });
    expect((await drStatus(pair.primary.url)).known_secondaries).toEqual(['dr-east']);
    await refused(
      own.write(`${DR}/secondary/enable`, { token: 'garbage' }),
      400,
      'primary_api_addr is required: the activation token does not say where the primary is',
    );
    expect(await drStatus(pair.secondary.url)).toEqual({ mode: 'disabled' });

    // Writes go on while the secondary activates (no primary_api_addr: the JWT names the primary).
    const writer = (async () => {
      for (let i = 0; i < 12; i++) {
        const value = { i, at: `load-${i}` };
        await root.write(`${kv}/data/load/${i}`, { data: value });
        written[`load/${i}`] = value;
      }
    })();
    const enabled = await own.write(`${DR}/secondary/enable`, { token: activation });
    await writer;
    expect(enabled.warnings).toHaveLength(1);
    expect(enabled.warnings[0]).toContain('erased');
    expect((await drStatus(pair.secondary.url)).mode).toBe('secondary');
  });

  it('the secondary catches up with the primary and both report the link', async () => {
    const deadline = Date.now() + 30_000;
    let [p, s] = [await drStatus(pair.primary.url), await drStatus(pair.secondary.url)];
    while (!(s.state === 'stream-wals' && s.last_remote_wal === p.last_wal && s.merkle_root === p.merkle_root) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      [p, s] = [await drStatus(pair.primary.url), await drStatus(pair.secondary.url)];
    }
    expect(s).toMatchObject({ mode: 'secondary', secondary_id: 'dr-east', cluster_id: clusterId, state: 'stream-wals', connection_state: 'ready' });
    expect(p.cluster_id).toBe(clusterId);
    expect(p.last_wal).toBeGreaterThan(0);
    expect(s.last_remote_wal).toBe(p.last_wal);
    expect(s.merkle_root).toMatch(/^[0-9a-f]{40}$/);
    expect(s.merkle_root).toBe(p.merkle_root);
    expect(s.primaries).toEqual([expect.objectContaining({ api_address: pair.primary.url, connection_status: 'connected' })]);
    expect(p.known_secondaries).toContain('dr-east');
    expect(p.secondaries[0]).toMatchObject({ node_id: 'dr-east', connection_status: 'connected' });
    expect((await anonymous(pair.secondary.url).read('sys/replication/status')).data.dr.mode).toBe('secondary');
    // Enabling again with the same token: the token that enabled it went with the erased data.
    // (Asked before the first sync completes, the secondary answers 503 "Vault is sealed".)
    await refused(
      client(pair.secondary.url, pair.secondary.rootToken).write(`${DR}/secondary/enable`, { token: activation }),
      403,
      '2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n',
    );
  });

  it('the secondary serves nothing, not even to the primary root token', async () => {
    const onSecondary = client(pair.secondary.url, pair.primary.rootToken);
    await refused(onSecondary.read(`${kv}/data/app`), 400, DISABLED_ON_SECONDARY);
    await refused(onSecondary.tokenLookupSelf(), 400, DISABLED_ON_SECONDARY);
    // Its own former root token neither.
    await refused(client(pair.secondary.url, pair.secondary.rootToken).read(`${kv}/data/app`), 400, DISABLED_ON_SECONDARY);
    // The seal status is still answered: unsealed. Health says DR secondary (node-vault hides
    // the status code, Vault's 472: hvac's test_dr checks it).
    expect((await anonymous(pair.secondary.url).status()).sealed).toBe(false);
    expect(await anonymous(pair.secondary.url).health()).toMatchObject({ sealed: false, replication_dr_mode: 'secondary' });
    expect((await primary().health()).replication_dr_mode).toBe('primary');
    // The primary's root token (in the replicated token store) authorises nothing here either.
    await refused(onSecondary.write(`${DR}/secondary/generate-operation-token/attempt`, {}), 403, PERMISSION_DENIED);
  });

  it('generates a DR operation token on the secondary from the primary recovery keys', async () => {
    const anon = anonymous(pair.secondary.url);
    const path = `${DR}/secondary/generate-operation-token`;
    // Starting an attempt takes a recovery key share (no token is served here).
    await refused(anon.write(`${path}/attempt`, {}), 403, PERMISSION_DENIED);
    expect(await anon.read(`${path}/attempt`)).toMatchObject({ started: false, nonce: '', progress: 0 });
    // The launcher initialises with one recovery share, threshold one: the share that starts the
    // attempt is the whole quorum, so it completes at once.
    expect(pair.primary.recoveryKeys).toHaveLength(1);
    const attempt = await anon.write(`${path}/attempt`, { key: pair.primary.recoveryKeys[0] });
    expect(attempt).toMatchObject({ started: true, progress: 1, required: 1, complete: true, otp_length: 28 });
    expect(attempt.nonce).toMatch(/^[0-9a-f-]{36}$/);
    expect(attempt.otp).toHaveLength(28);
    let progress = attempt;
    for (const key of pair.primary.recoveryKeys.slice(1)) {
      if (progress.complete) break;
      progress = await anon.write(`${path}/update`, { key, nonce: attempt.nonce });
    }
    expect(progress.complete).toBe(true);
    operationToken = decode(progress.encoded_token, attempt.otp);
    expect(operationToken).toMatch(/^hvd\.[0-9A-Za-z]{24}$/);
    // A completed attempt frees its slot: nothing runs, nothing to update.
    expect(await anon.read(`${path}/attempt`)).toMatchObject({ started: false, nonce: '', progress: 0, required: 1 });
    await refused(anon.write(`${path}/update`, { key: pair.primary.recoveryKeys[0], nonce: attempt.nonce }), 400, 'no DR operation token generation in progress');

    await refused(anon.write(`${DR}/secondary/promote`, { dr_operation_token: 'hvd.wrong' }), 400, 'invalid DR operation token');
    await refused(anon.write(`${DR}/secondary/promote`, { dr_operation_token: null }), 400, 'missing dr_operation_token');
    expect((await drStatus(pair.secondary.url)).mode).toBe('secondary');
  });

  it('promotes the secondary: it serves every acknowledged value to the primary root token', async () => {
    const promoted = await anonymous(pair.secondary.url).write(`${DR}/secondary/promote`, { dr_operation_token: operationToken });
    expect(promoted.warnings).toEqual(['This cluster is now the DR primary: issue new activation tokens to the other secondaries.']);
    const status = await drStatus(pair.secondary.url);
    expect(status).toMatchObject({ mode: 'primary', cluster_id: clusterId });

    const onPromoted = client(pair.secondary.url, pair.primary.rootToken);
    for (const [key, value] of Object.entries(written)) {
      expect((await onPromoted.read(`${kv}/data/${key}`)).data.data).toEqual(value);
    }
    expect((await onPromoted.read(`${kv}/data/app`)).data.metadata.version).toBe(2);
    expect(Object.keys(written)).toHaveLength(15);
    const self = (await onPromoted.tokenLookupSelf()).data;
    const original = (await primary().tokenLookupSelf()).data;
    expect(self.policies).toEqual(['root']);
    expect(self.accessor).toBe(original.accessor);
  });
});
