// Go's time.Time.Format over a JavaScript Date, in UTC. The layout is written with Go's reference
// time, Mon Jan 2 15:04:05 MST 2006: every element of it that appears in the layout is replaced by
// the same element of the time being formatted; everything else is copied as is.

const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const LONG_MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

type Chunk =
  | { kind: 'literal'; text: string }
  | { kind: 'std'; std: Std }
  | { kind: 'frac'; sep: string; digits: number; trimZeros: boolean };

type Std =
  | 'LongMonth' // January
  | 'Month' // Jan
  | 'NumMonth' // 1
  | 'ZeroMonth' // 01
  | 'LongWeekDay' // Monday
  | 'WeekDay' // Mon
  | 'Day' // 2
  | 'UnderDay' // _2
  | 'ZeroDay' // 02
  | 'UnderYearDay' // __2
  | 'ZeroYearDay' // 002
  | 'Hour' // 15
  | 'Hour12' // 3
  | 'ZeroHour12' // 03
  | 'Minute' // 4
  | 'ZeroMinute' // 04
  | 'Second' // 5
  | 'ZeroSecond' // 05
  | 'LongYear' // 2006
  | 'Year' // 06
  | 'PM' // PM
  | 'pm' // pm
  | 'TZ' // MST
  | 'ISO8601TZ' // Z0700
  | 'ISO8601SecondsTZ' // Z070000
  | 'ISO8601ShortTZ' // Z07
  | 'ISO8601ColonTZ' // Z07:00
  | 'ISO8601ColonSecondsTZ' // Z07:00:00
  | 'NumTZ' // -0700
  | 'NumSecondsTz' // -070000
  | 'NumShortTZ' // -07
  | 'NumColonTZ' // -07:00
  | 'NumColonSecondsTZ'; // -07:00:00

const startsWithLower = (s: string): boolean => s.length > 0 && s[0] >= 'a' && s[0] <= 'z';
const isDigit = (s: string, i: number): boolean => i < s.length && s[i] >= '0' && s[i] <= '9';

/** Go's nextStdChunk: the element of the reference time starting at layout[i], if any, and its length. */
function stdAt(layout: string, i: number): { chunk: Chunk; length: number } | null {
  const rest = layout.slice(i);
  const std = (s: Std, length: number) => ({ chunk: { kind: 'std', std: s } as Chunk, length });
  switch (layout[i]) {
    case 'J':
      if (rest.startsWith('Jan')) {
        if (rest.startsWith('January')) return std('LongMonth', 7);
        if (!startsWithLower(rest.slice(3))) return std('Month', 3);
      }
      break;
    case 'M':
      if (rest.startsWith('Mon')) {
        if (rest.startsWith('Monday')) return std('LongWeekDay', 6);
        if (!startsWithLower(rest.slice(3))) return std('WeekDay', 3);
      }
      if (rest.startsWith('MST')) return std('TZ', 3);
      break;
    case '0': {
      const next = rest[1];
      if (next !== undefined && next >= '1' && next <= '6') {
        const zeros: Std[] = ['ZeroMonth', 'ZeroDay', 'ZeroHour12', 'ZeroMinute', 'ZeroSecond', 'Year'];
        return std(zeros[next.charCodeAt(0) - 49], 2);
      }
      if (rest.startsWith('002')) return std('ZeroYearDay', 3);
      break;
    }
    case '1':
      if (rest[1] === '5') return std('Hour', 2);
      return std('NumMonth', 1);
    case '2':
      if (rest.startsWith('2006')) return std('LongYear', 4);
      return std('Day', 1);
    case '_':
      if (rest[1] === '2') {
        // _2006 is a literal _ followed by the year.
        if (rest.startsWith('_2006')) return null;
        return std('UnderDay', 2);
      }
      if (rest.startsWith('__2')) return std('UnderYearDay', 3);
      break;
    case '3':
      return std('Hour12', 1);
    case '4':
      return std('Minute', 1);
    case '5':
      return std('Second', 1);
    case 'P':
      if (rest[1] === 'M') return std('PM', 2);
      break;
    case 'p':
      if (rest[1] === 'm') return std('pm', 2);
      break;
    case '-':
      if (rest.startsWith('-07:00:00')) return std('NumColonSecondsTZ', 9);
      if (rest.startsWith('-070000')) return std('NumSecondsTz', 7);
      if (rest.startsWith('-07:00')) return std('NumColonTZ', 6);
      if (rest.startsWith('-0700')) return std('NumTZ', 5);
      if (rest.startsWith('-07')) return std('NumShortTZ', 3);
      break;
    case 'Z':
      if (rest.startsWith('Z07:00:00')) return std('ISO8601ColonSecondsTZ', 9);
      if (rest.startsWith('Z070000')) return std('ISO8601SecondsTZ', 7);
      if (rest.startsWith('Z07:00')) return std('ISO8601ColonTZ', 6);
      if (rest.startsWith('Z0700')) return std('ISO8601TZ', 5);
      if (rest.startsWith('Z07')) return std('ISO8601ShortTZ', 3);
      break;
    case '.':
    case ',': {
      // ,000 or .000 or ,999 or .999: fractional seconds, if the run of digits ends there.
      const ch = rest[1];
      if (ch === '0' || ch === '9') {
        let j = i + 1;
        while (j < layout.length && layout[j] === ch) j++;
        if (!isDigit(layout, j)) {
          return { chunk: { kind: 'frac', sep: layout[i], digits: j - (i + 1), trimZeros: ch === '9' }, length: j - i };
        }
      }
      break;
    }
  }
  return null;
}

function parseLayout(layout: string): Chunk[] {
  const chunks: Chunk[] = [];
  let literal = '';
  for (let i = 0; i < layout.length; ) {
    const found = stdAt(layout, i);
    if (found) {
      if (literal) chunks.push({ kind: 'literal', text: literal });
      literal = '';
      chunks.push(found.chunk);
      i += found.length;
    } else {
      literal += layout[i];
      i++;
    }
  }
  if (literal) chunks.push({ kind: 'literal', text: literal });
  return chunks;
}

const pad = (n: number, width: number): string => {
  const s = String(Math.abs(n)).padStart(width, '0');
  return n < 0 ? '-' + s : s;
};

function dayOfYear(d: Date): number {
  const start = Date.UTC(d.getUTCFullYear(), 0, 1);
  const today = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return Math.round((today - start) / 86_400_000) + 1;
}

function formatStd(std: Std, d: Date): string {
  const year = d.getUTCFullYear();
  const hour = d.getUTCHours();
  switch (std) {
    case 'LongMonth':
      return LONG_MONTHS[d.getUTCMonth()];
    case 'Month':
      return LONG_MONTHS[d.getUTCMonth()].slice(0, 3);
    case 'NumMonth':
      return String(d.getUTCMonth() + 1);
    case 'ZeroMonth':
      return pad(d.getUTCMonth() + 1, 2);
    case 'LongWeekDay':
      return LONG_DAYS[d.getUTCDay()];
    case 'WeekDay':
      return LONG_DAYS[d.getUTCDay()].slice(0, 3);
    case 'Day':
      return String(d.getUTCDate());
    case 'UnderDay':
      return String(d.getUTCDate()).padStart(2, ' ');
    case 'ZeroDay':
      return pad(d.getUTCDate(), 2);
    case 'UnderYearDay':
      return String(dayOfYear(d)).padStart(3, ' ');
    case 'ZeroYearDay':
      return pad(dayOfYear(d), 3);
    case 'Hour':
      return pad(hour, 2);
    case 'Hour12':
      return String(hour % 12 === 0 ? 12 : hour % 12);
    case 'ZeroHour12':
      return pad(hour % 12 === 0 ? 12 : hour % 12, 2);
    case 'Minute':
      return String(d.getUTCMinutes());
    case 'ZeroMinute':
      return pad(d.getUTCMinutes(), 2);
    case 'Second':
      return String(d.getUTCSeconds());
    case 'ZeroSecond':
      return pad(d.getUTCSeconds(), 2);
    case 'LongYear':
      return pad(year, 4);
    case 'Year':
      return pad(((year % 100) + 100) % 100, 2);
    case 'PM':
      return hour >= 12 ? 'PM' : 'AM';
    case 'pm':
      return hour >= 12 ? 'pm' : 'am';
    case 'TZ':
      return 'UTC';
    // UTC has a zero offset: the ISO 8601 forms print "Z", the numeric forms a zero offset.
    case 'ISO8601TZ':
    case 'ISO8601SecondsTZ':
    case 'ISO8601ShortTZ':
    case 'ISO8601ColonTZ':
    case 'ISO8601ColonSecondsTZ':
      return 'Z';
    case 'NumTZ':
      return '+0000';
    case 'NumSecondsTz':
      return '+000000';
    case 'NumShortTZ':
      return '+00';
    case 'NumColonTZ':
      return '+00:00';
    case 'NumColonSecondsTZ':
      return '+00:00:00';
  }
}

/** Formats `date` (in UTC) with a Go layout string, as time.Time.Format does. */
export function formatGoTime(date: Date, layout: string): string {
  // Dates carry milliseconds; the nanoseconds below them are zero. Over nine digits Go prints nine.
  const nanos = String((((date.getTime() % 1000) + 1000) % 1000) * 1_000_000).padStart(9, '0');
  let out = '';
  for (const chunk of parseLayout(layout)) {
    if (chunk.kind === 'literal') out += chunk.text;
    else if (chunk.kind === 'std') out += formatStd(chunk.std, date);
    else if (!chunk.trimZeros) out += chunk.sep + nanos.slice(0, chunk.digits);
    else {
      const digits = nanos.slice(0, chunk.digits).replace(/0+$/, '');
      if (digits) out += chunk.sep + digits;
    }
  }
  return out;
}
