// DR catch-up after an outage longer than the log: three launchers (a primary keeping at most 20
// log entries per object for a lagging secondary, DR_LOG_MAX_ENTRIES, and two secondaries). One
// secondary is stopped while the other keeps pulling; the primary's log is trimmed past the
// stopped one's position (seen through a probe's pull); restarted, it is repaired by Merkle
// comparison, converges, and once promoted serves every write it missed.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, caughtUp, operationToken, status } from './dr-calls';
import { halt, launchSecondary, restart, startDrPair, type DrPair, type Launched } from './dr-pair';

let pair: DrPair;
let west: Launched;
const written: Record<string, number> = {};

const onPrimary = async (method: string, path: string, body?: unknown) => {
  const r = await call(pair.primary.url, pair.primary.rootToken, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
};
const put = async (key: string, i: number) => {
  await onPrimary('POST', `trim/data/${key}`, { data: { i } });
  written[key] = i;
};
/** Activates `secondary` with a response-wrapped (JWT) token naming the primary. */
async function activate(secondary: Launched, id: string): Promise<void> {
  const token = (await onPrimary('POST', 'sys/replication/dr/primary/secondary-token', { id })).body.wrap_info.token;
  const r = await call(secondary.url, secondary.rootToken, 'POST', 'sys/replication/dr/secondary/enable', { token });
  expect(r.status).toBe(200);
}

beforeAll(async () => {
  pair = await startDrPair({ DR_LOG_MAX_ENTRIES: '20' });
  west = await launchSecondary(pair.primary, 'west');
}, 180_000);
afterAll(async () => {
  await Promise.all([pair?.stop(), west && halt(west.server)]);
});

it('a secondary down while the log is trimmed past it is repaired by Merkle comparison, and misses nothing', async () => {
  await onPrimary('POST', 'sys/mounts/trim', { type: 'kv', options: { version: '2' } });
  for (let i = 0; i < 5; i++) await put(`before/${i}`, i);
  await onPrimary('POST', 'sys/replication/dr/primary/enable', {});
  await activate(pair.secondary, 'east');
  await activate(west, 'west');
  await caughtUp(pair.primary.url, pair.secondary.url);
  await caughtUp(pair.primary.url, west.url);

  // A probe secondary's pulls show the mount object's log: where it ends now, where it starts later.
  const probeToken = (await onPrimary('POST', 'sys/replication/dr/primary/secondary-token', { id: 'probe' })).body.wrap_info.token;
  const probe = (await onPrimary('POST', 'sys/wrapping/unwrap', { token: probeToken })).body.data;
  const mount = `mount/${(await onPrimary('GET', 'sys/mounts')).body.data['trim/'].uuid}`;
  const pull = async () =>
    (await onPrimary('POST', 'sys/replication/dr/internal/pull', { secondary_id: probe.secondary_id, credential: probe.credential, positions: {}, limit: 1 })).body.data.pages[mount];
  const reachedByWest = (await pull()).last;

  await halt(west.server);
  for (let i = 0; i < 60; i++) await put(`while-down/${i}`, i);
  await caughtUp(pair.primary.url, pair.secondary.url);
  // East's pulls trimmed the log to its last 20 entries: west's position is gone from it.
  const page = await pull();
  expect(page.first).toBeGreaterThan(reachedByWest);
  expect(page.last - page.first).toBeLessThanOrEqual(40);
  await onPrimary('POST', 'sys/replication/dr/primary/revoke-secondary', { id: 'probe' });

  west = await restart(west);
  await caughtUp(pair.primary.url, west.url);
  const s = await status(west.url);
  expect(s).toMatchObject({ mode: 'secondary', secondary_id: 'west', state: 'stream-wals' });
  expect(s.last_remote_wal).toBe((await status(pair.primary.url)).last_wal);

  // Promoted, west serves every acknowledged write with the primary's token.
  const token = await operationToken(west.url, pair.primary.recoveryKeys);
  expect((await call(west.url, '', 'POST', 'sys/replication/dr/secondary/promote', { dr_operation_token: token })).status).toBe(200);
  for (const [key, i] of Object.entries(written)) {
    const r = await call(west.url, pair.primary.rootToken, 'GET', `trim/data/${key}`);
    expect(r.body.data?.data, key).toEqual({ i });
  }
  expect(Object.keys(written)).toHaveLength(65);
});
