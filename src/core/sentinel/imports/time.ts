// The `time` import: `time.now` (the run's instant, from an injected clock), `time.load(timeish)`,
// the duration units, and the `timespace` values they hand out: calendar attributes in the
// time's own UTC offset, `unix`/`unix_nano`, `zone`/`zone_string`, and before/after/equal/add/sub.
// A "timeish" is seconds since the Unix epoch (an int) or an RFC 3339 timestamp; timespaces are
// accepted wherever a timeish is. Instants are exact nanosecond bigints and the calendar is our
// own proleptic Gregorian arithmetic, so no Date range or rounding limits apply. Parsing follows
// Go's time.Parse(time.RFC3339), which Sentinel uses: fractional seconds of any length (digits
// past the ninth dropped), "Z" or ±hh:mm, and every field range-checked (Feb 29 only in leap
// years, no second 60, offsets under 24 hours).

import { SentinelRuntimeError, typeName, UNDEFINED, type SObject, type Value } from '../values';
import { INT64_MAX, INT64_MIN, invoke, NativeObject, type FnSpec } from './native';

const NS_PER_SECOND = 1_000_000_000n;
const SECONDS_PER_DAY = 86_400n;

const MONTHS = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Division rounding towards minus infinity (bigint `/` truncates). */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

export function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeapYear(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/**
 * Days since 1970-01-01 of a proleptic Gregorian date. Counts in 400-year eras (146097 days
 * each) with the year starting in March, so the leap day falls at the end of the counted year.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const monthFromMarch = month > 2 ? month - 3 : month + 9;
  const dayOfYear = Math.floor((153 * monthFromMarch + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/** The inverse of daysFromCivil. */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

const pad = (n: number | bigint, width: number) => n.toString().padStart(width, '0');

/** An instant (nanoseconds since the epoch) seen at a fixed UTC offset (seconds east of UTC). */
export class Timespace implements SObject {
  readonly kind = 'object' as const;
  readonly typeName = 'timespace';

  constructor(
    readonly ns: bigint,
    readonly offset: number,
  ) {}

  /** The wall clock at this offset, split into days since the epoch and seconds into the day. */
  private wall(): { days: bigint; secondOfDay: number; nanos: bigint } {
    const local = this.ns + BigInt(this.offset) * NS_PER_SECOND;
    const secs = floorDiv(local, NS_PER_SECOND);
    const days = floorDiv(secs, SECONDS_PER_DAY);
    return { days, secondOfDay: Number(secs - days * SECONDS_PER_DAY), nanos: local - secs * NS_PER_SECOND };
  }

  private date(): { year: number; month: number; day: number } {
    return civilFromDays(Number(this.wall().days));
  }

  get(name: string): Value {
    switch (name) {
      case 'year':
        return BigInt(this.date().year);
      case 'month':
        return BigInt(this.date().month);
      case 'month_name':
        return MONTHS[this.date().month - 1];
      case 'day':
        return BigInt(this.date().day);
      case 'hour':
        return BigInt(Math.floor(this.wall().secondOfDay / 3600));
      case 'minute':
        return BigInt(Math.floor(this.wall().secondOfDay / 60) % 60);
      case 'second':
        return BigInt(this.wall().secondOfDay % 60);
      case 'weekday':
        return BigInt(this.weekday());
      case 'weekday_name':
        return WEEKDAYS[this.weekday()];
      case 'unix':
        return floorDiv(this.ns, NS_PER_SECOND);
      case 'unix_nano':
        return this.ns;
      case 'zone':
        return BigInt(this.offset);
      case 'zone_string':
        return this.zoneString();
    }
    return UNDEFINED;
  }

  call(name: string, args: Value[]): Value {
    const spec = METHODS.get(name);
    if (!spec) throw new SentinelRuntimeError(`timespace.${name} ${TIMESPACE_ATTRS.has(name) ? 'is not a function' : 'does not exist'}`);
    return invoke(`timespace.${name}`, { ...spec, fn: (a) => spec.fn([this, ...a]) }, args);
  }

  /** The attribute names, for a printer that shows a timespace as the map the docs print. */
  attributeNames(): string[] {
    return [...TIMESPACE_ATTRS];
  }

  /** 0 is Sunday; 1970-01-01 was a Thursday. */
  private weekday(): number {
    return Number(((this.wall().days + 4n) % 7n + 7n) % 7n);
  }

  private zoneString(): string {
    const abs = Math.abs(this.offset);
    return `${this.offset < 0 ? '-' : '+'}${pad(Math.floor(abs / 3600), 2)}:${pad(Math.floor(abs / 60) % 60, 2)}`;
  }

  /** RFC 3339 with as many fraction digits as needed, as Go's RFC3339Nano prints it. */
  toString(): string {
    const { secondOfDay, nanos } = this.wall();
    const { year, month, day } = this.date();
    const yearText = year < 0 ? `-${pad(-year, 4)}` : pad(year, 4);
    const frac = nanos === 0n ? '' : `.${pad(nanos, 9).replace(/0+$/, '')}`;
    const clock = `${pad(Math.floor(secondOfDay / 3600), 2)}:${pad(Math.floor(secondOfDay / 60) % 60, 2)}:${pad(secondOfDay % 60, 2)}`;
    return `${yearText}-${pad(month, 2)}-${pad(day, 2)}T${clock}${frac}${this.offset === 0 ? 'Z' : this.zoneString()}`;
  }
}

const TIMESPACE_ATTRS = new Set([
  'year', 'month', 'month_name', 'day', 'hour', 'minute', 'second', 'weekday', 'weekday_name',
  'unix', 'unix_nano', 'zone', 'zone_string',
]);

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** An RFC 3339 timestamp as an instant and its offset, or why it is not one. */
export function parseRFC3339(text: string): Timespace | string {
  const m = RFC3339.exec(text);
  if (!m) return 'not an RFC 3339 timestamp (like 2006-01-02T15:04:05Z or 2006-01-02T15:04:05+07:00)';
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12) return 'month out of range';
  if (day < 1 || day > daysInMonth(year, month)) return 'day out of range';
  if (hour > 23) return 'hour out of range';
  if (minute > 59) return 'minute out of range';
  if (second > 59) return 'second out of range';
  let offset = 0;
  if (m[8]) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return 'time zone offset out of range';
    offset = (m[8] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  // Go keeps nine fraction digits and drops the rest without rounding.
  const nanos = m[7] ? BigInt(m[7].slice(0, 9).padEnd(9, '0')) : 0n;
  const wallSeconds = BigInt(daysFromCivil(year, month, day)) * SECONDS_PER_DAY + BigInt(hour * 3600 + minute * 60 + second);
  return new Timespace((wallSeconds - BigInt(offset)) * NS_PER_SECOND + nanos, offset);
}

/** A timeish (or a timespace) as a timespace; anything else is the policy's error. */
function toTimespace(fn: string, param: string, v: Value): Timespace {
  if (v instanceof Timespace) return v;
  if (typeof v === 'bigint') return new Timespace(v * NS_PER_SECOND, 0);
  if (typeof v === 'string') {
    const t = parseRFC3339(v);
    if (typeof t === 'string') throw new SentinelRuntimeError(`${fn}: ${JSON.stringify(v)}: ${t}`);
    return t;
  }
  throw new SentinelRuntimeError(
    `${fn}: ${param} must be a timespace, seconds since the epoch (int) or an RFC 3339 string, got ${typeName(v)}`,
  );
}

/** A duration in nanoseconds: an int, or a float (time.hour * 1.5) cut to whole nanoseconds. */
function toDuration(fn: string, v: Value): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v));
  throw new SentinelRuntimeError(`${fn}: duration must be an int of nanoseconds (such as time.hour * 2), got ${typeName(v)}`);
}

const clampInt64 = (n: bigint) => (n > INT64_MAX ? INT64_MAX : n < INT64_MIN ? INT64_MIN : n);

/** The timespace methods; the receiver comes first in `args`. */
const METHODS = new Map<string, FnSpec>([
  ['before', { params: ['timeish_or_timespace'], fn: ([t, u]) => (t as Timespace).ns < toTimespace('timespace.before', 'timeish_or_timespace', u).ns }],
  ['after', { params: ['timeish_or_timespace'], fn: ([t, u]) => (t as Timespace).ns > toTimespace('timespace.after', 'timeish_or_timespace', u).ns }],
  ['equal', { params: ['timeish_or_timespace'], fn: ([t, u]) => (t as Timespace).ns === toTimespace('timespace.equal', 'timeish_or_timespace', u).ns }],
  [
    'add',
    {
      params: ['duration'],
      fn: ([t, d]) => {
        const self = t as Timespace;
        return new Timespace(self.ns + toDuration('timespace.add', d), self.offset);
      },
    },
  ],
  [
    'sub',
    {
      params: ['timeish_or_timespace'],
      // Like Go's Time.Sub: the difference saturates at the ends of the int64 range.
      fn: ([t, u]) => clampInt64((t as Timespace).ns - toTimespace('timespace.sub', 'timeish_or_timespace', u).ns),
    },
  ],
]);

/** Nanoseconds since the epoch from a clock in milliseconds (Date.now's unit). */
function clockNanos(ms: number): bigint {
  if (!Number.isFinite(ms)) throw new SentinelRuntimeError('time.now: the clock gave no valid time');
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
}

/**
 * The time import. `now` gives milliseconds since the epoch and should be fixed for one policy
 * run (the docs: every read of time.now in a run gives the same instant); it is read on each
 * access of time.now, so an import object can be shared by runs without freezing the clock.
 */
export function timeImport(now: () => number): NativeObject {
  return new NativeObject(
    'time',
    {
      now: () => new Timespace(clockNanos(now()), 0),
      nanosecond: () => 1n,
      microsecond: () => 1_000n,
      millisecond: () => 1_000_000n,
      second: () => NS_PER_SECOND,
      minute: () => 60n * NS_PER_SECOND,
      hour: () => 3600n * NS_PER_SECOND,
    },
    {
      load: { params: ['timeish'], fn: ([v]) => toTimespace('time.load', 'timeish', v) },
    },
  );
}
