// The DR cluster state machine (src/core/replication/state.ts) and the status shapes built from it
// (status.ts): every transition from every mode, allowed or refused with its exact message;
// secondary credentials (wrong, expired, revoked, reuse after activation); JSON round trips; and
// the status `data` of each mode with Vault's string-typed fields.
import { describe, expect, it } from 'vitest';
import { sha256 } from '@noble/hashes/sha2.js';
import { CofferError } from '../../../../src/framework/errors';
import { toHex, utf8 } from '../../../../src/crypto/encoding';
import {
  type ActivationPayload,
  type DrContext,
  type DrPrimary,
  type DrSecondary,
  type DrState,
  authenticateSecondary,
  demotePrimary,
  disablePrimary,
  disableSecondary,
  DR_DISABLED,
  enablePrimary,
  enableSecondary,
  heartbeat,
  issueSecondaryToken,
  primaryOnly,
  promoteSecondary,
  recordSync,
  revokeSecondary,
  secondaryOnly,
  servesRequests,
  updatePrimary,
} from '../../../../src/core/replication/state';
import { CONNECTED_WINDOW_MS, drStatus, replicationStatus } from '../../../../src/core/replication/status';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

/** A context whose ids and secrets are numbered, so tests can predict them. */
function context(now = T0): DrContext {
  let ids = 0;
  let secrets = 0;
  return { now, newId: () => `cluster-${++ids}`, random: () => `secret-${++secrets}` };
}

/** Runs `fn` and returns the 400's message (fails when it does not throw one). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CofferError);
    expect((e as CofferError).status).toBe(400);
    return (e as CofferError).errors[0];
  }
  throw new Error('expected a 400');
}

const disabled: DrState = DR_DISABLED;
const primary = (): DrPrimary => enablePrimary(disabled, { primaryClusterAddr: 'https://p:8201' }, context());
const tokenFor = (p: DrPrimary, id = 'sec-1', ttlSeconds = 1800, now = T0) =>
  issueSecondaryToken(p, { id, ttlSeconds, apiAddr: 'https://p.example', tokenShards: 4 }, { ...context(now), random: () => `cred-${id}` });
const secondary = (): DrSecondary => enableSecondary(disabled, tokenFor(primary()).payload, { now: T0 });
const demoted = (): DrSecondary => demotePrimary(primary(), { now: T0 });
const all = (): [string, DrState][] => [
  ['disabled', disabled],
  ['primary', primary()],
  ['secondary', secondary()],
  ['demoted', demoted()],
];

describe('enablePrimary', () => {
  it('turns a disabled cluster into a primary with a new cluster id and no secondaries', () => {
    const p = enablePrimary(disabled, { primaryClusterAddr: 'https://p:8201' }, context());
    expect(p).toEqual({ mode: 'primary', clusterId: 'cluster-1', primaryClusterAddr: 'https://p:8201', secondaries: {} });
  });
  it('defaults primary_cluster_addr to empty', () => {
    expect(enablePrimary(disabled, {}, context()).primaryClusterAddr).toBe('');
  });
  it('gives a new cluster id on each enable after a disable', () => {
    const ctx = context();
    const first = enablePrimary(disabled, {}, ctx);
    const again = enablePrimary(disablePrimary(first), {}, ctx);
    expect(again.clusterId).not.toBe(first.clusterId);
  });
  it('refuses on a primary', () => {
    expect(refusal(() => enablePrimary(primary(), {}, context()))).toBe('DR replication is already enabled as a primary');
  });
  it('refuses on a secondary, telling to promote', () => {
    const message = 'this cluster is a DR secondary; promote it instead of enabling primary mode';
    expect(refusal(() => enablePrimary(secondary(), {}, context()))).toBe(message);
    expect(refusal(() => enablePrimary(demoted(), {}, context()))).toBe(message);
  });
});

describe('demotePrimary and disablePrimary', () => {
  it('demotes to an unlinked idle secondary with the same cluster id', () => {
    const p = primary();
    const s = demotePrimary(p, { now: T0 + 5 });
    expect(s).toEqual({ mode: 'secondary', clusterId: p.clusterId, secondaryId: '', primary: null, sync: 'idle', lastStart: T0 + 5, lastContact: null });
  });
  it('disables a primary, forgetting its secondaries', () => {
    expect(disablePrimary(tokenFor(primary()).state)).toEqual({ mode: 'disabled' });
  });
  it.each(['disabled', 'secondary', 'demoted'])('refuses both on a %s cluster with "Not a DR primary."', (name) => {
    const state = all().find(([n]) => n === name)![1];
    expect(refusal(() => demotePrimary(state, { now: T0 }))).toBe('Not a DR primary.');
    expect(refusal(() => disablePrimary(state))).toBe('Not a DR primary.');
  });
});

describe('issueSecondaryToken', () => {
  it('records the hash of a fresh credential and returns the payload the token carries', () => {
    const p = primary();
    const { state, credential, payload } = tokenFor(p, 'sec-1', 600);
    expect(credential).toBe('cred-sec-1');
    expect(payload).toEqual({
      primary_api_addr: 'https://p.example',
      primary_cluster_addr: 'https://p:8201',
      cluster_id: p.clusterId,
      secondary_id: 'sec-1',
      credential: 'cred-sec-1',
      expires: T0 + 600_000,
      token_shards: 4,
    });
    expect(state.secondaries['sec-1']).toEqual({
      id: 'sec-1',
      credentialHash: toHex(sha256(utf8('cred-sec-1'))),
      issuedAt: T0,
      activateBy: T0 + 600_000,
      activated: false,
      lastHeartbeat: null,
      apiAddress: '',
    });
  });
  it('never stores the credential itself', () => {
    expect(JSON.stringify(tokenFor(primary()).state)).not.toContain('cred-sec-1');
  });
  it('does not change the state it was given', () => {
    const p = primary();
    const before = JSON.stringify(p);
    tokenFor(p);
    expect(JSON.stringify(p)).toBe(before);
  });
  it('keeps other secondaries', () => {
    const two = tokenFor(tokenFor(primary(), 'a').state, 'b').state;
    expect(Object.keys(two.secondaries).sort()).toEqual(['a', 'b']);
  });
  it('refuses a taken id', () => {
    const p = tokenFor(primary(), 'a').state;
    expect(refusal(() => tokenFor(p, 'a'))).toBe('a secondary with id "a" already exists; revoke it first');
  });
  it('accepts the id again after a revoke', () => {
    const p = revokeSecondary(tokenFor(primary(), 'a').state, { id: 'a' });
    expect(tokenFor(p, 'a').state.secondaries.a.activated).toBe(false);
  });
  it('refuses a missing id', () => {
    expect(refusal(() => tokenFor(primary(), ''))).toBe('missing secondary id');
  });
  it.each([0, -5, Number.NaN])('refuses ttl %s', (ttl) => {
    expect(refusal(() => tokenFor(primary(), 'a', ttl))).toBe('ttl must be greater than zero');
  });
  it.each(['disabled', 'secondary', 'demoted'])('refuses on a %s cluster', (name) => {
    const state = all().find(([n]) => n === name)![1];
    expect(refusal(() => issueSecondaryToken(state, { id: 'a', ttlSeconds: 60, apiAddr: '', tokenShards: 4 }, context()))).toBe('Not a DR primary.');
  });
});

describe('revokeSecondary', () => {
  it('removes only that secondary', () => {
    const p = revokeSecondary(tokenFor(tokenFor(primary(), 'a').state, 'b').state, { id: 'a' });
    expect(Object.keys(p.secondaries)).toEqual(['b']);
  });
  it('refuses an unknown id', () => {
    expect(refusal(() => revokeSecondary(primary(), { id: 'nope' }))).toBe('unknown secondary id "nope"');
  });
  it('refuses an inherited property name as an id', () => {
    expect(refusal(() => revokeSecondary(primary(), { id: 'toString' }))).toBe('unknown secondary id "toString"');
  });
  it('refuses a missing id', () => {
    expect(refusal(() => revokeSecondary(primary(), { id: '' }))).toBe('missing secondary id');
  });
  it('refuses on a secondary', () => {
    expect(refusal(() => revokeSecondary(secondary(), { id: 'a' }))).toBe('Not a DR primary.');
  });
});

describe('authenticateSecondary', () => {
  const issued = () => tokenFor(primary(), 'sec-1', 60).state;

  it('accepts the right credential and activates the record', () => {
    const auth = authenticateSecondary(issued(), { id: 'sec-1', credential: 'cred-sec-1', now: T0 + 1000 });
    expect(auth.ok).toBe(true);
    if (!auth.ok) return;
    expect(auth.record).toMatchObject({ activated: true, activateBy: null });
    expect(auth.state.secondaries['sec-1']).toEqual(auth.record);
  });
  it('accepts at the exact expiry instant', () => {
    expect(authenticateSecondary(issued(), { id: 'sec-1', credential: 'cred-sec-1', now: T0 + 60_000 }).ok).toBe(true);
  });
  it('refuses a wrong credential', () => {
    expect(authenticateSecondary(issued(), { id: 'sec-1', credential: 'cred-sec-2', now: T0 })).toEqual({ ok: false, reason: 'invalid credential' });
    expect(authenticateSecondary(issued(), { id: 'sec-1', credential: '', now: T0 })).toEqual({ ok: false, reason: 'invalid credential' });
  });
  it('refuses an unknown or inherited id', () => {
    expect(authenticateSecondary(issued(), { id: 'sec-2', credential: 'cred-sec-1', now: T0 })).toEqual({ ok: false, reason: 'unknown secondary' });
    expect(authenticateSecondary(issued(), { id: '__proto__', credential: 'x', now: T0 })).toEqual({ ok: false, reason: 'unknown secondary' });
  });
  it('refuses a never-activated token after it expired', () => {
    expect(authenticateSecondary(issued(), { id: 'sec-1', credential: 'cred-sec-1', now: T0 + 60_001 })).toEqual({
      ok: false,
      reason: 'activation token has expired',
    });
  });
  it('keeps accepting the credential after activation, long past the token expiry, without changing the state', () => {
    const first = authenticateSecondary(issued(), { id: 'sec-1', credential: 'cred-sec-1', now: T0 });
    if (!first.ok) throw new Error('first pull refused');
    const later = authenticateSecondary(first.state, { id: 'sec-1', credential: 'cred-sec-1', now: T0 + 86_400_000 });
    expect(later.ok).toBe(true);
    if (later.ok) expect(later.state).toBe(first.state);
  });
  it('refuses a revoked secondary', () => {
    const first = authenticateSecondary(issued(), { id: 'sec-1', credential: 'cred-sec-1', now: T0 });
    if (!first.ok) throw new Error('first pull refused');
    const revoked = revokeSecondary(first.state, { id: 'sec-1' });
    expect(authenticateSecondary(revoked, { id: 'sec-1', credential: 'cred-sec-1', now: T0 }).ok).toBe(false);
  });
  it('refuses the old credential after a revoke and a new token for the same id', () => {
    const fresh = issueSecondaryToken(
      revokeSecondary(issued(), { id: 'sec-1' }),
      { id: 'sec-1', ttlSeconds: 60, apiAddr: '', tokenShards: 4 },
      { now: T0, random: () => 'new' },
    ).state;
    expect(authenticateSecondary(fresh, { id: 'sec-1', credential: 'cred-sec-1', now: T0 })).toEqual({ ok: false, reason: 'invalid credential' });
    expect(authenticateSecondary(fresh, { id: 'sec-1', credential: 'new', now: T0 }).ok).toBe(true);
  });
  it('refuses on a non-primary cluster', () => {
    for (const state of [disabled, secondary(), demoted()]) {
      expect(authenticateSecondary(state, { id: 'sec-1', credential: 'cred-sec-1', now: T0 })).toEqual({ ok: false, reason: 'Not a DR primary.' });
    }
  });
});

describe('heartbeat', () => {
  it('records the pull time and address', () => {
    const p = heartbeat(tokenFor(primary()).state, { id: 'sec-1', now: T0 + 7, apiAddress: 'https://s.example' });
    expect(p.secondaries['sec-1']).toMatchObject({ lastHeartbeat: T0 + 7, apiAddress: 'https://s.example' });
  });
  it('refuses an unknown id and a non-primary', () => {
    expect(refusal(() => heartbeat(primary(), { id: 'x', now: T0, apiAddress: '' }))).toBe('unknown secondary id "x"');
    expect(refusal(() => heartbeat(secondary(), { id: 'x', now: T0, apiAddress: '' }))).toBe('Not a DR primary.');
  });
});

describe('enableSecondary', () => {
  const payload = (): ActivationPayload => tokenFor(primary()).payload;

  it('turns a disabled cluster into a bootstrapping secondary linked to the primary', () => {
    const p = payload();
    expect(enableSecondary(disabled, p, { now: T0 + 3 })).toEqual({
      mode: 'secondary',
      clusterId: p.cluster_id,
      secondaryId: 'sec-1',
      primary: { apiAddr: 'https://p.example', clusterAddr: 'https://p:8201', secondaryId: 'sec-1', credential: 'cred-sec-1' },
      sync: 'bootstrapping',
      lastStart: T0 + 3,
      lastContact: null,
    });
  });
  it('is allowed on a demoted (unlinked) secondary', () => {
    expect(enableSecondary(demoted(), payload(), { now: T0 }).primary?.secondaryId).toBe('sec-1');
  });
  it('accepts a token at its exact expiry and refuses one a millisecond later', () => {
    const p = payload();
    expect(enableSecondary(disabled, p, { now: p.expires }).mode).toBe('secondary');
    expect(refusal(() => enableSecondary(disabled, p, { now: p.expires + 1 }))).toBe('activation token has expired');
  });
  it('refuses on a primary', () => {
    expect(refusal(() => enableSecondary(primary(), payload(), { now: T0 }))).toBe('this cluster is a DR primary; demote or disable it first');
  });
  it('refuses on a secondary that already has a primary', () => {
    expect(refusal(() => enableSecondary(secondary(), payload(), { now: T0 }))).toBe(
      'this cluster is already a DR secondary with a primary; use update-primary, or disable it first',
    );
  });
});

describe('promoteSecondary', () => {
  it('makes a synced secondary a primary with the same cluster id and no secondaries', () => {
    const s = secondary();
    expect(promoteSecondary(s, { synced: true, primaryClusterAddr: 'https://s:8201' })).toEqual({
      mode: 'primary',
      clusterId: s.clusterId,
      primaryClusterAddr: 'https://s:8201',
      secondaries: {},
    });
  });
  it('refuses an unsynced secondary without force', () => {
    expect(refusal(() => promoteSecondary(secondary(), { synced: false }))).toBe(
      'secondary has not finished its initial sync; use force to promote anyway',
    );
    expect(refusal(() => promoteSecondary(secondary(), { synced: false, force: false }))).toBe(
      'secondary has not finished its initial sync; use force to promote anyway',
    );
  });
  it('promotes an unsynced secondary with force', () => {
    expect(promoteSecondary(secondary(), { synced: false, force: true }).mode).toBe('primary');
  });
  it('promotes a demoted primary back (same cluster id)', () => {
    const p = primary();
    expect(promoteSecondary(demotePrimary(p, { now: T0 }), { synced: true }).clusterId).toBe(p.clusterId);
  });
  it.each(['disabled', 'primary'])('refuses on a %s cluster with "Not a DR secondary."', (name) => {
    const state = all().find(([n]) => n === name)![1];
    expect(refusal(() => promoteSecondary(state, { synced: true, force: true }))).toBe('Not a DR secondary.');
  });
});

describe('updatePrimary', () => {
  it('clears the primary with a blank token', () => {
    const s = recordSync(secondary(), { sync: 'stream-wals', contactedAt: T0 + 1 });
    expect(updatePrimary(s, null, { now: T0 })).toEqual({ ...s, primary: null, sync: 'idle', lastContact: null });
  });
  it('relinks to a new primary of the same cluster without a wipe', () => {
    // The primary revoked this secondary's old id and issued it a new token.
    const p = primary();
    const s = enableSecondary(disabled, tokenFor(p, 'first').payload, { now: T0 });
    const next = tokenFor(revokeSecondary(tokenFor(p, 'first').state, { id: 'first' }), 'second').payload;
    expect(updatePrimary(s, next, { now: T0 + 9 })).toEqual({
      ...s,
      secondaryId: 'second',
      primary: { apiAddr: 'https://p.example', clusterAddr: 'https://p:8201', secondaryId: 'second', credential: 'cred-second' },
      sync: 'connecting',
      lastStart: T0 + 9,
      lastContact: null,
    });
  });
  it('links a demoted primary to the new primary of its cluster', () => {
    const p = primary();
    const old = demotePrimary(p, { now: T0 });
    const promoted = promoteSecondary(enableSecondary(disabled, tokenFor(p).payload, { now: T0 }), { synced: true });
    const s = updatePrimary(old, tokenFor(promoted, 'old-primary').payload, { now: T0 });
    expect(s).toMatchObject({ clusterId: p.clusterId, secondaryId: 'old-primary', sync: 'connecting' });
  });
  it('refuses a token of another cluster', () => {
    const other = enablePrimary(disabled, {}, { newId: () => 'other-cluster' });
    expect(refusal(() => updatePrimary(secondary(), tokenFor(other).payload, { now: T0 }))).toBe(
      'activation token is for a different cluster; use secondary/enable (which clears all data) instead',
    );
  });
  it('refuses an expired token', () => {
    const s = secondary();
    const p: ActivationPayload = { ...tokenFor(primary()).payload, cluster_id: s.clusterId, expires: T0 - 1 };
    expect(refusal(() => updatePrimary(s, p, { now: T0 }))).toBe('activation token has expired');
  });
  it.each(['disabled', 'primary'])('refuses on a %s cluster', (name) => {
    const state = all().find(([n]) => n === name)![1];
    expect(refusal(() => updatePrimary(state, null, { now: T0 }))).toBe('Not a DR secondary.');
  });
});

describe('disableSecondary, recordSync and the guards', () => {
  it('disables a linked or demoted secondary', () => {
    expect(disableSecondary(secondary())).toEqual({ mode: 'disabled' });
    expect(disableSecondary(demoted())).toEqual({ mode: 'disabled' });
  });
  it.each(['disabled', 'primary'])('refuses disable and recordSync on a %s cluster', (name) => {
    const state = all().find(([n]) => n === name)![1];
    expect(refusal(() => disableSecondary(state))).toBe('Not a DR secondary.');
    expect(refusal(() => recordSync(state, { sync: 'idle' }))).toBe('Not a DR secondary.');
  });
  it('recordSync moves the stage and keeps the last contact unless given', () => {
    const a = recordSync(secondary(), { sync: 'merkle-diff', contactedAt: T0 + 4 });
    expect(a).toMatchObject({ sync: 'merkle-diff', lastContact: T0 + 4 });
    expect(recordSync(a, { sync: 'stream-wals' })).toMatchObject({ sync: 'stream-wals', lastContact: T0 + 4 });
  });
  it('primaryOnly and secondaryOnly return the narrowed state or refuse', () => {
    const p = primary();
    const s = secondary();
    expect(primaryOnly(p)).toBe(p);
    expect(secondaryOnly(s)).toBe(s);
    expect(refusal(() => primaryOnly(s))).toBe('Not a DR primary.');
    expect(refusal(() => secondaryOnly(p))).toBe('Not a DR secondary.');
    expect(refusal(() => primaryOnly(disabled))).toBe('Not a DR primary.');
    expect(refusal(() => secondaryOnly(disabled))).toBe('Not a DR secondary.');
  });
  it('only a secondary refuses to serve requests', () => {
    expect(all().map(([n, s]) => [n, servesRequests(s)])).toEqual([
      ['disabled', true],
      ['primary', true],
      ['secondary', false],
      ['demoted', false],
    ]);
  });
});

describe('JSON round trip', () => {
  const activated = (): DrPrimary => {
    const auth = authenticateSecondary(tokenFor(tokenFor(primary(), 'a').state, 'b').state, { id: 'a', credential: 'cred-a', now: T0 });
    if (!auth.ok) throw new Error('refused');
    return heartbeat(auth.state, { id: 'a', now: T0 + 1, apiAddress: 'https://a' });
  };
  it.each<[string, () => DrState]>([
    ['disabled', () => disabled],
    ['primary without secondaries', primary],
    ['primary with an activated and a pending secondary', activated],
    ['linked secondary', () => recordSync(secondary(), { sync: 'stream-wals', contactedAt: T0 })],
    ['demoted secondary', demoted],
  ])('%s survives stringify and parse unchanged, and keeps working', (_name, make) => {
    const state = make();
    const back = JSON.parse(JSON.stringify(state)) as DrState;
    expect(back).toStrictEqual(state);
    expect(servesRequests(back)).toBe(servesRequests(state));
  });
  it('a parsed primary still authenticates its activated secondary', () => {
    const back = JSON.parse(JSON.stringify(activated())) as DrState;
    expect(authenticateSecondary(back, { id: 'a', credential: 'cred-a', now: T0 + 10 ** 9 }).ok).toBe(true);
    expect(authenticateSecondary(back, { id: 'b', credential: 'cred-b', now: T0 + 10 ** 9 }).ok).toBe(false);
  });
});

describe('drStatus', () => {
  const facts = { now: T0 + 10_000, lastWal: 291, lastRemoteWal: 17, merkleRoot: 'ab'.repeat(20) };

  it('disabled', () => {
    expect(drStatus(disabled, facts)).toEqual({ mode: 'disabled' });
  });

  it('primary, with string-typed epochs and milliseconds', () => {
    let p = tokenFor(tokenFor(primary(), 'zeta').state, 'alpha').state;
    p = heartbeat(p, { id: 'zeta', now: T0 + 2_500, apiAddress: 'https://zeta:8200' });
    expect(drStatus(p, facts)).toStrictEqual({
      mode: 'primary',
      cluster_id: p.clusterId,
      known_secondaries: ['alpha', 'zeta'],
      last_wal: 291,
      last_dr_wal: 291,
      last_reindex_epoch: '0',
      merkle_root: 'ab'.repeat(20),
      corrupted_merkle_tree: false,
      last_corruption_check_epoch: '-62135596800',
      primary_cluster_addr: 'https://p:8201',
      ssct_generation_counter: 0,
      state: 'running',
      secondaries: [
        {
          node_id: 'alpha',
          api_address: '',
          cluster_address: '',
          connection_status: 'disconnected',
          last_heartbeat: '',
          last_heartbeat_duration_ms: '0',
          clock_skew_ms: '0',
          replication_primary_canary_age_ms: '0',
        },
        {
          node_id: 'zeta',
          api_address: 'https://zeta:8200',
          cluster_address: 'https://zeta:8200',
          connection_status: 'connected',
          last_heartbeat: '2024-05-01T12:00:02.5Z',
          last_heartbeat_duration_ms: '0',
          clock_skew_ms: '0',
          replication_primary_canary_age_ms: '7500',
        },
      ],
    });
  });

  it('primary: a secondary silent for longer than the window is disconnected', () => {
    const p = heartbeat(tokenFor(primary()).state, { id: 'sec-1', now: T0, apiAddress: 'https://s' });
    const at = (now: number) => (drStatus(p, { ...facts, now }) as { secondaries: { connection_status: string }[] }).secondaries[0].connection_status;
    expect(at(T0 + CONNECTED_WINDOW_MS)).toBe('connected');
    expect(at(T0 + CONNECTED_WINDOW_MS + 1)).toBe('disconnected');
  });

  it('linked secondary', () => {
    const s = recordSync(secondary(), { sync: 'stream-wals', contactedAt: T0 + 9_000 });
    expect(drStatus(s, facts)).toStrictEqual({
      mode: 'secondary',
      cluster_id: s.clusterId,
      secondary_id: 'sec-1',
      known_primary_cluster_addrs: ['https://p:8201'],
      primary_cluster_addr: 'https://p:8201',
      last_remote_wal: 17,
      last_reindex_epoch: '0',
      last_start: '2024-05-01T12:00:00Z',
      connection_state: 'ready',
      merkle_root: 'ab'.repeat(20),
      corrupted_merkle_tree: false,
      last_corruption_check_epoch: '-62135596800',
      state: 'stream-wals',
      primaries: [
        {
          api_address: 'https://p.example',
          cluster_address: 'https://p:8201',
          connection_status: 'connected',
          last_heartbeat: '2024-05-01T12:00:09Z',
        },
      ],
    });
  });

  it('secondary not yet in contact, with known addresses from the caller', () => {
    const status = drStatus(secondary(), { ...facts, knownPrimaryClusterAddrs: ['https://a:8201', 'https://b:8201'] });
    expect(status).toMatchObject({
      state: 'bootstrapping',
      connection_state: 'ready',
      known_primary_cluster_addrs: ['https://a:8201', 'https://b:8201'],
      primaries: [{ connection_status: 'disconnected', last_heartbeat: '' }],
    });
  });

  it('demoted secondary: idle, no primary', () => {
    const s = demoted();
    expect(drStatus(s, facts)).toMatchObject({
      mode: 'secondary',
      cluster_id: s.clusterId,
      secondary_id: '',
      known_primary_cluster_addrs: [],
      primary_cluster_addr: '',
      connection_state: 'idle',
      state: 'idle',
      primaries: [],
    });
  });

  it('replicationStatus nests DR beside a disabled performance replication', () => {
    const dr = drStatus(primary(), facts);
    expect(replicationStatus(dr)).toEqual({ dr, performance: { mode: 'disabled' } });
    expect(replicationStatus(drStatus(disabled, facts))).toEqual({ dr: { mode: 'disabled' }, performance: { mode: 'disabled' } });
  });
});
