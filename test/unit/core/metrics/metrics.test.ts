// The telemetry registry (go-metrics' aggregates), merging objects' snapshots, and the two
// sys/metrics formats.
import { describe, expect, it } from 'vitest';
import { prometheusText, vaultJson } from '../../../../src/core/metrics/format';
import { mergeSnapshots, MetricsRegistry } from '../../../../src/core/metrics/registry';
import { RequestTimer, ttlBucket } from '../../../../src/core/metrics/requests';

describe('MetricsRegistry', () => {
  it('aggregates samples: count, sum, min, max and a rate over its uptime', () => {
    const m = new MetricsRegistry(0);
    m.sample('vault.core.handle_request', 10);
    m.sample('vault.core.handle_request', 30);
    m.incr('vault.token.creation', { token_type: 'service', auth_method: 'token' });
    m.incr('vault.token.creation', { auth_method: 'token', token_type: 'service' }, 2);
    const s = m.snapshot([], 10_000);
    expect(s.samples).toEqual([{ name: 'vault.core.handle_request', labels: {}, count: 2, sum: 40, min: 10, max: 30, sumSquares: 1000, rate: 4 }]);
    // Labels name the same series whatever their order.
    expect(s.counters).toHaveLength(1);
    expect(s.counters[0]).toMatchObject({ count: 2, sum: 3 });
  });

  it('merges objects: the same series combine, gauges add up', () => {
    const a = new MetricsRegistry(0);
    const b = new MetricsRegistry(0);
    a.sample('vault.route.read.kv-', 5);
    b.sample('vault.route.read.kv-', 15);
    b.sample('vault.route.read.other-', 1);
    const merged = mergeSnapshots([a.snapshot([{ name: 'vault.token.count', labels: {}, value: 2 }], 1000), b.snapshot([{ name: 'vault.token.count', labels: {}, value: 3 }], 1000)]);
    expect(merged.samples.map((x) => [x.name, x.count, x.min, x.max])).toEqual([
      ['vault.route.read.kv-', 2, 5, 15],
      ['vault.route.read.other-', 1, 1, 1],
    ]);
    expect(merged.gauges).toEqual([{ name: 'vault.token.count', labels: {}, value: 5 }]);
  });

  it('times a request under its mount and resolved operation, logins apart', () => {
    const m = new MetricsRegistry(0);
    const t = new RequestTimer(m, 'auth/jwt/', 'write');
    t.login = true;
    t.done();
    const u = new RequestTimer(m, 'secret/', 'write');
    u.resolved('create');
    u.done();
    expect(m.snapshot().samples.map((x) => x.name).sort()).toEqual([
      'vault.core.handle_login_request',
      'vault.core.handle_request',
      'vault.route.create.secret-',
      'vault.route.update.auth-jwt-',
    ]);
  });

  it.each([
    [0, '+Inf'],
    [60, '1m'],
    [61, '10m'],
    [3600, '1h'],
    [86400 * 31, '+Inf'],
  ])('puts a creation TTL of %i s in the %s bucket', (ttl, bucket) => {
    expect(ttlBucket(ttl)).toBe(bucket);
  });
});

describe('formats', () => {
  const m = new MetricsRegistry(0);
  m.sample('vault.route.read.secret-', 2);
  m.sample('vault.route.read.secret-', 4);
  m.incr('vault.token.creation', { mount_point: 'auth/token/', note: 'a "quoted"\nvalue' });
  const s = m.snapshot([{ name: 'vault.core.unsealed', labels: {}, value: 1 }], 2000);

  it('Vault JSON: go-metrics display with mean and standard deviation', () => {
    const json = vaultJson(s, Date.UTC(2026, 10, 25, 10, 0, 0)) as { Timestamp: string; Samples: unknown[]; Gauges: unknown[] };
    expect(json.Timestamp).toBe('2026-11-25 10:00:00 +0000 UTC');
    expect(json.Gauges).toEqual([{ Name: 'vault.core.unsealed', Value: 1, Labels: {} }]);
    expect(json.Samples).toEqual([{ Name: 'vault.route.read.secret-', Count: 2, Rate: 3, Sum: 6, Min: 2, Max: 4, Mean: 3, Stddev: Math.SQRT2, Labels: {} }]);
  });

  it('Prometheus text: names with underscores, one TYPE per family, escaped label values', () => {
    expect(prometheusText(s)).toBe(
      [
        '# HELP vault_core_unsealed vault_core_unsealed',
        '# TYPE vault_core_unsealed gauge',
        'vault_core_unsealed 1',
        '# HELP vault_route_read_secret_ vault_route_read_secret_',
        '# TYPE vault_route_read_secret_ summary',
        'vault_route_read_secret__sum 6',
        'vault_route_read_secret__count 2',
        '# HELP vault_token_creation vault_token_creation',
        '# TYPE vault_token_creation counter',
        'vault_token_creation{mount_point="auth/token/",note="a \\"quoted\\"\\nvalue"} 1',
        '',
      ].join('\n'),
    );
  });
});
