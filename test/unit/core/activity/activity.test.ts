// The client activity log (once per client and month, pruned past its retention) and Vault's
// client-count report built from it.
import { describe, expect, it } from 'vitest';
import { ActivityLog, monthOf } from '../../../../src/core/activity/log';
import { activityReport, monthsBetween } from '../../../../src/core/activity/report';
import { rootTokenEntry, type TokenEntry } from '../../../../src/core/tokens/entry';
import { MemoryStorage } from '../../../../src/framework/storage';

const token = (accessor: string, overrides: Partial<TokenEntry>): TokenEntry => ({ ...rootTokenEntry(accessor), ...overrides });
const NOV = Date.UTC(2026, 10, 15);
const DEC = Date.UTC(2026, 11, 2);

describe('ActivityLog', () => {
  it('records each client once a month: entities by id, other tokens by their sorted policies', async () => {
    const storage = new MemoryStorage();
    const log = new ActivityLog(storage);
    await log.note(token('a1', { entityId: 'e-1', path: 'auth/jwt/login' }), NOV);
    await log.note(token('a2', { entityId: 'e-1', path: 'auth/jwt/login' }), NOV);
    await log.note(token('a3', { policies: ['b', 'a'], path: 'auth/token/create' }), NOV);
    await log.note(token('a4', { policies: ['a', 'b'], path: 'auth/token/create' }), NOV);
    await log.note(token('a1', { entityId: 'e-1', path: 'auth/jwt/login' }), DEC);
    const months = await log.months(['2026-11', '2026-12']);
    expect(months['2026-11'].map((r) => r.kind).sort()).toEqual(['entity', 'non-entity']);
    expect(months['2026-11'].find((r) => r.kind === 'entity')).toEqual({ clientId: 'e-1', kind: 'entity', path: 'auth/jwt/login' });
    expect(months['2026-12']).toHaveLength(1);
  });

  it('forgets the months past its retention when a new month starts', async () => {
    const storage = new MemoryStorage();
    const log = new ActivityLog(storage);
    await log.note(token('a', { entityId: 'old' }), Date.UTC(2020, 0, 10));
    await log.setRetention(48);
    await log.note(token('b', { entityId: 'new' }), NOV);
    expect((await log.months(['2020-01']))['2020-01']).toEqual([]);
    expect((await log.months([monthOf(NOV)]))[monthOf(NOV)]).toHaveLength(1);
  });
});

describe('activityReport', () => {
  const r = (clientId: string, kind: 'entity' | 'non-entity', path: string) => ({ clientId, kind, path });
  const mountOf = (path: string) => (path.startsWith('auth/token/') ? 'auth/token/' : 'auth/jwt/');

  it('counts distinct clients per month and over the period, new clients per month, per mount', () => {
    const byMonth = {
      '2026-10': [r('e1', 'entity', 'auth/jwt/login'), r('t1', 'non-entity', 'auth/token/create')],
      '2026-11': [r('e1', 'entity', 'auth/jwt/login'), r('e1', 'entity', 'auth/jwt/login'), r('e2', 'entity', 'auth/jwt/login')],
    };
    const report = activityReport(byMonth, ['2026-09', '2026-10', '2026-11'], mountOf);
    expect(report.total).toMatchObject({ clients: 3, entity_clients: 2, non_entity_clients: 1 });
    expect(report.months[0]).toEqual({ timestamp: '2026-09-01T00:00:00Z', counts: null, namespaces: null, new_clients: null });
    expect(report.months[2].counts).toMatchObject({ clients: 2 });
    expect(report.months[2].new_clients?.counts).toMatchObject({ clients: 1, entity_clients: 1 });
    expect(report.by_namespace[0].mounts.map((m) => [m.mount_path, m.counts.clients])).toEqual([
      ['auth/jwt/', 2],
      ['auth/token/', 1],
    ]);
  });

  it('lists the months of a period, across a year end', () => {
    expect(monthsBetween(Date.UTC(2025, 10, 20), Date.UTC(2026, 1, 1))).toEqual(['2025-11', '2025-12', '2026-01', '2026-02']);
  });
});
