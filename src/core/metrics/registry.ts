// Telemetry in Vault's vocabulary (go-metrics): counters, gauges and samples (timings), each a
// dotted name with labels. Every Durable Object keeps its own registry in memory, from the moment
// it started (an evicted object starts again at zero, as a restarted Vault node does); sys/metrics
// merges them. Recording is a map lookup and a few additions: it sits on every request.

export type MetricLabels = Record<string, string>;

/** Count, sum, min, max and the sum of squares (for the standard deviation), as go-metrics keeps them. */
export interface Aggregate {
  name: string;
  labels: MetricLabels;
  count: number;
  sum: number;
  min: number;
  max: number;
  sumSquares: number;
  /** Sum per second since the recording object started (summed over objects when merged). */
  rate: number;
}

export interface Gauge {
  name: string;
  labels: MetricLabels;
  value: number;
}

/** A registry's content, structured-clonable (it crosses RPC to the SystemObject). */
export interface MetricsSnapshot {
  counters: Aggregate[];
  samples: Aggregate[];
  gauges: Gauge[];
}

const keyOf = (name: string, labels: MetricLabels | undefined): string => {
  if (!labels) return name;
  const names = Object.keys(labels);
  if (names.length === 0) return name;
  // Most labels are one (the mount): no sort, no array of pairs.
  if (names.length === 1) return `${name}|${names[0]}=${labels[names[0]]}`;
  return `${name}|${names
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',')}`;
};

function add(into: Map<string, Aggregate>, name: string, labels: MetricLabels | undefined, value: number, times = 1): void {
  const key = keyOf(name, labels);
  const a = into.get(key);
  if (!a) {
    into.set(key, { name, labels: labels ?? {}, count: times, sum: value * times, min: value, max: value, sumSquares: value * value * times, rate: 0 });
    return;
  }
  a.count += times;
  a.sum += value * times;
  a.sumSquares += value * value * times;
  if (value < a.min) a.min = value;
  if (value > a.max) a.max = value;
}

export class MetricsRegistry {
  private readonly counters = new Map<string, Aggregate>();
  private readonly samples = new Map<string, Aggregate>();

  constructor(private readonly startedAt = Date.now()) {}

  /** Adds `n` to a counter. */
  incr(name: string, labels?: MetricLabels, n = 1): void {
    add(this.counters, name, labels, n);
  }

  /** Records one timing, in milliseconds. */
  sample(name: string, ms: number, labels?: MetricLabels): void {
    add(this.samples, name, labels, ms);
  }

  /** The counters and samples so far; gauges are measured by the caller when asked. */
  snapshot(gauges: Gauge[] = [], now = Date.now()): MetricsSnapshot {
    const seconds = Math.max(1, (now - this.startedAt) / 1000);
    const copy = (m: Map<string, Aggregate>) => [...m.values()].map((a) => ({ ...a, labels: { ...a.labels }, rate: a.sum / seconds }));
    return { counters: copy(this.counters), samples: copy(this.samples), gauges };
  }
}

/** Several objects' snapshots as one: aggregates of the same name and labels combine, gauges add up. */
export function mergeSnapshots(parts: MetricsSnapshot[]): MetricsSnapshot {
  const combine = (pick: (s: MetricsSnapshot) => Aggregate[]): Aggregate[] => {
    const out = new Map<string, Aggregate>();
    for (const part of parts) {
      for (const a of pick(part)) {
        const key = keyOf(a.name, a.labels);
        const b = out.get(key);
        if (!b) out.set(key, { ...a, labels: { ...a.labels } });
        else {
          b.count += a.count;
          b.sum += a.sum;
          b.rate += a.rate;
          b.sumSquares += a.sumSquares;
          b.min = Math.min(b.min, a.min);
          b.max = Math.max(b.max, a.max);
        }
      }
    }
    return [...out.values()].sort((x, y) => keyOf(x.name, x.labels).localeCompare(keyOf(y.name, y.labels)));
  };
  const gauges = new Map<string, Gauge>();
  for (const part of parts) {
    for (const g of part.gauges) {
      const key = keyOf(g.name, g.labels);
      const known = gauges.get(key);
      if (known) known.value += g.value;
      else gauges.set(key, { ...g, labels: { ...g.labels } });
    }
  }
  return {
    counters: combine((s) => s.counters),
    samples: combine((s) => s.samples),
    gauges: [...gauges.values()].sort((x, y) => keyOf(x.name, x.labels).localeCompare(keyOf(y.name, y.labels))),
  };
}
