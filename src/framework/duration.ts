// Vault's duration handling (parseutil.ParseDurationSecond) and Go's formatting of durations/times.

const UNIT_NANOS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3,
  'μs': 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

export class DurationError extends Error {}

/**
 * The longest duration Vault can hold: Go's time.Duration is int64 nanoseconds, 2562047h47m16s
 * and a fraction. Anything longer is refused, not wrapped around or rounded: every TTL, period
 * and rotation period stays a date JavaScript and X.509 can represent.
 */
export const MAX_DURATION_SECONDS = 9_223_372_036;

/** Parses a Go duration string such as "1h30m", "1.5h" or "-2s" into nanoseconds. */
export function parseGoDuration(input: string): number {
  const fail = (): never => {
    throw new DurationError(`time: invalid duration "${input}"`);
  };
  let s = input;
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') fail();
  let total = 0;
  const re = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (s.length > 0) {
    const m = re.exec(s);
    if (!m) fail();
    total += parseFloat(m![1]) * UNIT_NANOS[m![2]];
    s = s.slice(m![0].length);
  }
  // Go refuses what overflows int64 nanoseconds with the same message.
  if (total / 1e9 > MAX_DURATION_SECONDS) fail();
  return sign * total;
}

/**
 * Accepts integer seconds (number or numeric string), Go duration strings and an integer with a
 * `d` suffix (days). Empty string and null mean 0. Returns whole seconds.
 */
export function parseDurationSeconds(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new DurationError(`invalid duration ${value}`);
    return inRange(Math.trunc(value), String(value));
  }
  if (typeof value !== 'string') throw new DurationError(`invalid duration of type ${typeof value}`);
  const s = value.trim();
  if (s === '') return 0;
  if (/^[-+]?\d+$/.test(s)) return inRange(parseInt(s, 10), s);
  const days = /^([-+]?\d+)d$/.exec(s);
  if (days) return inRange(parseInt(days[1], 10) * 86400, s);
  return Math.trunc(parseGoDuration(s) / 1e9);
}

function inRange(seconds: number, given: string): number {
  if (Math.abs(seconds) > MAX_DURATION_SECONDS) {
    throw new DurationError(`duration ${given} is out of range: at most ${formatGoDuration(MAX_DURATION_SECONDS)} (${MAX_DURATION_SECONDS} seconds)`);
  }
  return seconds;
}

/** Go's time.Duration String() for whole seconds: "0s", "45s", "1m30s", "768h0m0s". */
export function formatGoDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const sign = seconds < 0 ? '-' : '';
  let s = Math.abs(Math.trunc(seconds));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

// Every KV v2 response formats times, and Date.toISOString is slow in workerd: the part up to the
// second is kept for the last second seen (writes made together share it).
let lastSecond = Number.NaN;
let lastPrefix = '';

/** Go's RFC3339Nano in UTC: trailing zeros of the fraction are dropped, and so is an empty fraction. */
export function formatRFC3339Nano(date: Date | number): string {
  const ms = typeof date === 'number' ? date : date.getTime();
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastPrefix = new Date(second * 1000).toISOString().slice(0, -5); // without ".000Z"
    lastSecond = second;
  }
  let frac = ms - second * 1000;
  if (frac === 0) return `${lastPrefix}Z`;
  let digits = 3;
  while (frac % 10 === 0) {
    frac /= 10;
    digits--;
  }
  return `${lastPrefix}.${String(frac).padStart(digits, '0')}Z`;
}

/** The zero time.Time as Go prints it in JSON. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
