// sys/metrics' two formats: Vault's JSON (go-metrics' in-memory sink display) and the Prometheus
// text exposition format (version 0.0.4), which is what `?format=prometheus` scrapers read.
import type { Aggregate, MetricLabels, MetricsSnapshot } from './registry';

/** go-metrics' timestamp form: "2024-05-01 10:00:00 +0000 UTC". */
const goTime = (ms: number): string => `${new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '')} +0000 UTC`;

function display(a: Aggregate) {
  const mean = a.count > 0 ? a.sum / a.count : 0;
  const variance = a.count > 1 ? Math.max(0, (a.sumSquares - a.count * mean * mean) / (a.count - 1)) : 0;
  return { Name: a.name, Count: a.count, Rate: a.rate, Sum: a.sum, Min: a.min, Max: a.max, Mean: mean, Stddev: Math.sqrt(variance), Labels: a.labels };
}

export function vaultJson(s: MetricsSnapshot, now: number): Record<string, unknown> {
  return {
    Timestamp: goTime(now),
    Gauges: s.gauges.map((g) => ({ Name: g.name, Value: g.value, Labels: g.labels })),
    Points: [],
    Counters: s.counters.map(display),
    Samples: s.samples.map(display),
  };
}

/** Prometheus names allow [a-zA-Z0-9_:]: Vault's dots (and the dashes of mount paths) become '_'. */
const promName = (name: string): string => name.replace(/[^a-zA-Z0-9_:]/g, '_');
const promValue = (v: number): string => (Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN');

function promLabels(labels: MetricLabels): string {
  const names = Object.keys(labels).sort();
  if (names.length === 0) return '';
  const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
  return `{${names.map((k) => `${promName(k)}="${escape(labels[k])}"`).join(',')}}`;
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function prometheusText(s: MetricsSnapshot): string {
  const families = new Map<string, { type: string; lines: string[] }>();
  const line = (name: string, type: string, text: string) => {
    const family = families.get(name) ?? { type, lines: [] };
    family.lines.push(text);
    families.set(name, family);
  };
  for (const g of s.gauges) line(promName(g.name), 'gauge', `${promName(g.name)}${promLabels(g.labels)} ${promValue(g.value)}`);
  for (const c of s.counters) line(promName(c.name), 'counter', `${promName(c.name)}${promLabels(c.labels)} ${promValue(c.sum)}`);
  for (const t of s.samples) {
    const name = promName(t.name);
    line(name, 'summary', `${name}_sum${promLabels(t.labels)} ${promValue(t.sum)}`);
    line(name, 'summary', `${name}_count${promLabels(t.labels)} ${t.count}`);
  }
  let out = '';
  for (const [name, { type, lines }] of [...families].sort(([a], [b]) => a.localeCompare(b))) {
    out += `# HELP ${name} ${name}\n# TYPE ${name} ${type}\n${lines.join('\n')}\n`;
  }
  return out;
}
