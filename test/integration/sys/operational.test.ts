// The operational endpoints clients call: sys/metrics (JSON and Prometheus text), sys/host-info,
// and sys/internal/counters (tokens, activity, monthly, config), from data Coffer really keeps.
import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';
import { setSinkMode, sinkURL } from '../../helpers/audit-sink';
import { mountKv2 } from '../../helpers/kv2';

let c: Cluster;
const { call, ok } = caller(() => c.root);

interface DisplayAggregate {
  Name: string;
  Count: number;
  Sum: number;
  Labels: Record<string, string>;
}
const find = (list: DisplayAggregate[], name: string, labels: Record<string, string> = {}) =>
  list.find((m) => m.Name === name && Object.entries(labels).every(([k, v]) => m.Labels[k] === v));

beforeAll(async () => {
  c = await initCluster();
  await mountKv2(c.root, 'kv');
});

describe('sys/metrics', () => {
  it('needs a token with read on sys/metrics', async () => {
    const anonymous = await api('GET', 'sys/metrics');
    expect(anonymous.status).toBe(403);
    expect(anonymous.body.errors).toEqual([PERMISSION_DENIED]);
    const plain = (await ok('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token;
    expect((await api('GET', 'sys/metrics', { token: plain })).status).toBe(403);
  });

  it('answers Vault\'s JSON: request timings per mount and operation, token and mount-table figures, seal state', async () => {
    await ok('POST', 'kv/data/m', { data: { a: 1 } });
    for (let i = 0; i < 3; i++) await ok('GET', 'kv/data/m');
    await ok('POST', 'auth/token/create', { policies: ['default'], ttl: '30m' });
    const r = await ok('GET', 'sys/metrics');
    expect(r.headers.get('content-type')).toBe('application/json');
    const m = r.body;
    expect(Object.keys(m).sort()).toEqual(['Counters', 'Gauges', 'Points', 'Samples', 'Timestamp']);
    expect(m.Timestamp).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/);
    expect(find(m.Samples, 'vault.route.read.kv-')?.Count).toBeGreaterThanOrEqual(3);
    // A caller holding both create and update skips the existence check: its write counts as update.
    expect(find(m.Samples, 'vault.route.update.kv-')?.Count).toBe(1);
    expect(find(m.Samples, 'vault.core.handle_request')?.Count).toBeGreaterThanOrEqual(5);
    expect(find(m.Counters, 'vault.token.creation', { auth_method: 'token', mount_point: 'auth/token/', creation_ttl: '1h', token_type: 'service' })?.Sum).toBeGreaterThanOrEqual(1);
    const gauge = (name: string, labels: Record<string, string> = {}) => (find(m.Gauges, name, labels) as unknown as { Value: number } | undefined)?.Value;
    expect(gauge('vault.core.unsealed')).toBe(1);
    expect(gauge('vault.token.count')).toBeGreaterThanOrEqual(2);
    expect(gauge('vault.core.mount_table.num_entries', { type: 'logical', local: 'false' })).toBeGreaterThanOrEqual(3);
  });

  it('counts the leases engines issue and the logins of auth methods', async () => {
    await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '24h' } });
    await ok('POST', 'pki/root/generate/internal', { common_name: 'metrics root', ttl: '24h', key_type: 'ec' });
    await ok('POST', 'pki/roles/leased', { allowed_domains: 'example.com', allow_subdomains: true, generate_lease: true, key_type: 'ec', ttl: '1h' });
    const before = (await ok('GET', 'sys/metrics')).body.Gauges.find((g: { Name: string }) => g.Name === 'vault.expire.num_leases')?.Value ?? 0;
    await ok('POST', 'pki/issue/leased', { common_name: 'a.example.com' });
    await ok('POST', 'pki/issue/leased', { common_name: 'b.example.com' });
    const after = (await ok('GET', 'sys/metrics')).body.Gauges.find((g: { Name: string }) => g.Name === 'vault.expire.num_leases').Value;
    expect(after - before).toBe(2);
  });

  it('counts requests no audit device could record', async () => {
    await ok('PUT', 'sys/audit/flaky', { type: 'http', options: { url: sinkURL('metrics') } });
    await setSinkMode('metrics', 'fail');
    expect((await call('GET', 'kv/data/m')).status).toBe(500);
    await setSinkMode('metrics', 'ok');
    await ok('DELETE', 'sys/audit/flaky');
    const m = (await ok('GET', 'sys/metrics')).body;
    expect(find(m.Counters, 'vault.audit.log_request_failure')?.Sum).toBe(1);
  });

  it('answers the Prometheus text format with ?format=prometheus', async () => {
    const res = await SELF.fetch('http://coffer.test/v1/sys/metrics?format=prometheus', { headers: { 'X-Vault-Token': c.root } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const r = { text: await res.text() };
    expect(r.text).toContain('# TYPE vault_core_unsealed gauge\nvault_core_unsealed 1\n');
    expect(r.text).toMatch(/# TYPE vault_route_read_kv_ summary\nvault_route_read_kv__sum \d+(\.\d+)?\nvault_route_read_kv__count \d+\n/);
    expect(r.text).toMatch(/vault_token_creation\{auth_method="token",creation_ttl="1h",mount_point="auth\/token\/",token_type="service"\} \d+/);
    // Every line is a comment or `name{labels} value`.
    for (const line of r.text.trim().split('\n')) expect(line).toMatch(/^(# (HELP|TYPE) \S+ .+|[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? \S+)$/);
  });

  it('refuses an unknown format', async () => {
    const r = await call('GET', 'sys/metrics?format=xml');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['unsupported metrics format: xml']);
  });
});

describe('sys/host-info', () => {
  it('reports the Worker and leaves what it cannot see null, with a warning', async () => {
    const r = await ok('GET', 'sys/host-info');
    const d = r.body.data;
    expect(d.host).toMatchObject({ os: 'workerd', platform: 'cloudflare-workers', virtualizationSystem: 'v8-isolate' });
    expect(d.host.uptime).toBeGreaterThanOrEqual(0);
    expect(d.host.bootTime).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(d.timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect([d.cpu, d.cpu_times, d.disk, d.memory]).toEqual([null, null, null, null]);
    expect(r.body.warnings[0]).toContain('not visible to a Worker');
  });
});

describe('sys/internal/counters', () => {
  it('counts the service tokens stored', async () => {
    const before = (await ok('GET', 'sys/internal/counters/tokens')).body.data.counters.service_tokens.total;
    await ok('POST', 'auth/token/create', { policies: ['default'] });
    await ok('POST', 'auth/token/create', { policies: ['default'], type: 'batch' });
    expect((await ok('GET', 'sys/internal/counters/tokens')).body.data.counters.service_tokens.total).toBe(before + 1);
  });

  it('counts clients: one per entity, one per set of policies for tokens without one', async () => {
    const before = (await ok('GET', 'sys/internal/counters/activity/monthly')).body.data;
    await ok('POST', 'auth/token/roles/svc', { allowed_entity_aliases: ['svc-*'], allowed_policies: 'default' });
    const withEntity = (alias: string) => ok('POST', 'auth/token/create/svc', { entity_alias: alias });
    const a1 = (await withEntity('svc-a')).body.auth;
    const a2 = (await withEntity('svc-a')).body.auth;
    const b = (await withEntity('svc-b')).body.auth;
    expect(a1.entity_id).toBe(a2.entity_id);
    const plain1 = (await ok('POST', 'auth/token/create', { policies: ['counted'] })).body.auth;
    const plain2 = (await ok('POST', 'auth/token/create', { policies: ['counted'] })).body.auth;
    const other = (await ok('POST', 'auth/token/create', { policies: ['counted', 'other'] })).body.auth;
    for (const t of [a1, a2, b, plain1, plain2, other]) await caller(() => t.client_token).ok('GET', 'auth/token/lookup-self');
    const monthly = (await ok('GET', 'sys/internal/counters/activity/monthly')).body.data;
    // New: the entities svc-a and svc-b, and the non-entity clients {counted, default} and {counted, default, other}.
    expect(monthly.entity_clients - before.entity_clients).toBe(2);
    expect(monthly.non_entity_clients - before.non_entity_clients).toBe(2);
    expect(monthly.clients - before.clients).toBe(4);
    expect(monthly).toMatchObject({ distinct_entities: monthly.entity_clients, non_entity_tokens: monthly.non_entity_clients, months: [] });
    expect(monthly.by_namespace[0]).toMatchObject({ namespace_id: 'root', namespace_path: '', counts: { clients: monthly.clients } });
    // Every token here was made at auth/token/ (the root token included).
    expect(monthly.by_namespace[0].mounts).toEqual([{ mount_path: 'auth/token/', counts: expect.objectContaining({ clients: monthly.clients }) }]);
  });

  it('reports a period month by month, with the clients new in each month', async () => {
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1)).toISOString();
    const d = (await ok('GET', `sys/internal/counters/activity?start_time=${encodeURIComponent(start)}&end_time=${encodeURIComponent(now.toISOString())}`)).body.data;
    expect(d.months).toHaveLength(3);
    expect(d.months[0]).toMatchObject({ counts: null, namespaces: null, new_clients: null });
    const current = d.months[2];
    const monthly = (await ok('GET', 'sys/internal/counters/activity/monthly')).body.data;
    expect(current.timestamp).toBe(`${now.toISOString().slice(0, 7)}-01T00:00:00Z`);
    expect(current.counts.clients).toBe(monthly.clients);
    expect(current.new_clients.counts.clients).toBe(monthly.clients);
    expect(d.total).toMatchObject({ clients: monthly.clients, entity_clients: monthly.entity_clients, non_entity_clients: monthly.non_entity_clients });
    expect(d.start_time).toBe(`${start.slice(0, 10)}T00:00:00Z`);
    const bad = await call('GET', 'sys/internal/counters/activity?start_time=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toContain('start_time');
  });

  it('reads and writes the configuration; counting cannot be turned off', async () => {
    expect((await ok('GET', 'sys/internal/counters/config')).body.data).toEqual({
      default_report_months: 12,
      enabled: 'default-enabled',
      minimum_retention_months: 48,
      queries_available: true,
      reporting_enabled: false,
      retention_months: 48,
    });
    await ok('POST', 'sys/internal/counters/config', { retention_months: 60, default_report_months: 6, enabled: 'default' });
    expect((await ok('GET', 'sys/internal/counters/config')).body.data).toMatchObject({ retention_months: 60, default_report_months: 6 });
    expect((await call('POST', 'sys/internal/counters/config', { enabled: 'disable' })).status).toBe(400);
    expect((await call('POST', 'sys/internal/counters/config', { retention_months: 12 })).body.errors).toEqual(['retention_months must be between 48 and 1200']);
    expect((await ok('GET', 'sys/internal/counters/config')).body.data.retention_months).toBe(60);
  });
});
