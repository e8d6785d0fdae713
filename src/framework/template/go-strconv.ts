// The parts of Go's strconv the template engine needs: quoting (%q), unquoting string and
// character literals, parsing number literals, and formatting float64 values exactly as
// strconv.FormatFloat does (shortest digits, or correctly rounded, ties to even).

export class SyntaxError_ extends Error {
  constructor(message = 'invalid syntax') {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// Quoting.

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export const isPrint = (r: number): boolean => r === 0x20 || (r >= 0 && r <= 0x10ffff && PRINTABLE.test(String.fromCodePoint(r)));

const validRune = (r: number): boolean => r >= 0 && r <= 0x10ffff && !(r >= 0xd800 && r <= 0xdfff);

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

function escapeRune(r: number, quote: number, asciiOnly: boolean): string {
  if (r === quote || r === 0x5c) return '\\' + String.fromCodePoint(r);
  if (asciiOnly ? r < 0x80 && isPrint(r) : isPrint(r)) return String.fromCodePoint(r);
  switch (r) {
    case 0x07:
      return '\\a';
    case 0x08:
      return '\\b';
    case 0x0c:
      return '\\f';
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    case 0x0b:
      return '\\v';
  }
  if (r < 0x20 || r === 0x7f) return '\\x' + hex(r, 2);
  if (!validRune(r)) r = 0xfffd;
  return r < 0x10000 ? '\\u' + hex(r, 4) : '\\U' + hex(r, 8);
}

/** strconv.Quote (or QuoteToASCII). */
export function quote(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) out += escapeRune(ch.codePointAt(0) ?? 0, 0x22, asciiOnly);
  return out + '"';
}

/** strconv.QuoteRune (or QuoteRuneToASCII). */
export function quoteRune(r: number, asciiOnly = false): string {
  if (!validRune(r)) r = 0xfffd;
  return "'" + escapeRune(r, 0x27, asciiOnly) + "'";
}

/** strconv.CanBackquote. */
export function canBackquote(s: string): boolean {
  for (const ch of s) {
    const r = ch.codePointAt(0) ?? 0;
    if (r === 0xfeff || (r >= 0xd800 && r <= 0xdfff)) return false;
    if ((r < 0x20 && r !== 0x09) || r === 0x60 || r === 0x7f) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Unquoting literals (strconv.Unquote / UnquoteChar).

const HEX_DIGIT = /^[0-9a-fA-F]$/;

/**
 * Decodes one character or escape at s[i] of a literal delimited by `quote`. Returns the code point
 * (or, for \x and octal escapes, a raw byte flagged as such) and the index after it.
 */
function unquoteChar(s: string, i: number, quote: string): { value: number; byte: boolean; next: number } {
  const c = s.codePointAt(i) ?? 0;
  if (c === quote.charCodeAt(0) && (quote === "'" || quote === '"')) throw new SyntaxError_();
  if (c !== 0x5c) return { value: c, byte: false, next: i + (c > 0xffff ? 2 : 1) };
  const e = s[i + 1];
  if (e === undefined) throw new SyntaxError_();
  const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 0x5c };
  if (e in simple) return { value: simple[e], byte: false, next: i + 2 };
  if (e === "'" || e === '"') {
    if (e !== quote) throw new SyntaxError_();
    return { value: e.charCodeAt(0), byte: false, next: i + 2 };
  }
  if (e === 'x' || e === 'u' || e === 'U') {
    const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
    const digits = s.slice(i + 2, i + 2 + n);
    if (digits.length !== n || ![...digits].every((d) => HEX_DIGIT.test(d))) throw new SyntaxError_();
    const v = parseInt(digits, 16);
    if (e === 'x') return { value: v, byte: true, next: i + 2 + n };
    if (!validRune(v)) throw new SyntaxError_();
    return { value: v, byte: false, next: i + 2 + n };
  }
  if (e >= '0' && e <= '7') {
    const digits = s.slice(i + 1, i + 4);
    if (!/^[0-7]{3}$/.test(digits)) throw new SyntaxError_();
    const v = parseInt(digits, 8);
    if (v > 255) throw new SyntaxError_();
    return { value: v, byte: true, next: i + 4 };
  }
  throw new SyntaxError_();
}

/** strconv.Unquote for a "double-quoted" or `raw` literal, the delimiters included. */
export function unquote(literal: string): string {
  const q = literal[0];
  if (literal.length < 2 || literal[literal.length - 1] !== q) throw new SyntaxError_();
  const body = literal.slice(1, -1);
  if (q === '`') {
    if (body.includes('`')) throw new SyntaxError_();
    return body.replace(/\r/g, '');
  }
  if (q !== '"') throw new SyntaxError_();
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < body.length; ) {
    if (body[i] === '\n') throw new SyntaxError_();
    const { value, byte, next } = unquoteChar(body, i, '"');
    if (byte) bytes.push(value);
    else bytes.push(...encoder.encode(String.fromCodePoint(value)));
    i = next;
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** The code point of a 'c' character literal, the quotes included. */
export function unquoteRune(literal: string): number {
  if (literal.length < 3 || literal[0] !== "'") throw new SyntaxError_();
  const { value, next } = unquoteChar(literal, 1, "'");
  if (literal.slice(next) !== "'") throw new SyntaxError_(`malformed character constant: ${literal}`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Number literals (strconv.ParseInt with base 0, strconv.ParseFloat).

/** Go's rule for `_` in number literals: only between digits, or right after a base prefix. */
function underscoreOK(s: string): boolean {
  let saw = '^'; // ^ start, 0 digit, _ underscore, ! other
  let i = 0;
  if (s.startsWith('+') || s.startsWith('-')) s = s.slice(1);
  let hexBody = false;
  if (s.length >= 2 && s[0] === '0' && /[bBoOxX]/.test(s[1])) {
    i = 2;
    saw = '0';
    hexBody = /[xX]/.test(s[1]);
  }
  for (; i < s.length; i++) {
    const c = s[i];
    if ((c >= '0' && c <= '9') || (hexBody && /[a-fA-F]/.test(c))) saw = '0';
    else if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

/** The value of an integer literal in Go's syntax (sign, base prefix, underscores); null if malformed. */
function parseGoInteger(text: string): bigint | null {
  let s = text;
  let neg = false;
  if (s[0] === '+' || s[0] === '-') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s.includes('_') && !underscoreOK(s)) return null;
  s = s.replace(/_/g, '');
  let base = 10;
  if (/^0[xX]/.test(s)) [base, s] = [16, s.slice(2)];
  else if (/^0[bB]/.test(s)) [base, s] = [2, s.slice(2)];
  else if (/^0[oO]/.test(s)) [base, s] = [8, s.slice(2)];
  else if (s.length > 1 && s[0] === '0') [base, s] = [8, s.slice(1)];
  const digits = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[base as 2 | 8 | 10 | 16];
  if (!digits.test(s)) return null;
  let v = 0n;
  for (const d of s.toLowerCase()) v = v * BigInt(base) + BigInt(parseInt(d, 16));
  return neg ? -v : v;
}

/** strconv.ParseInt(s, 0, 64): null when it does not parse or does not fit in int64. */
export function parseGoInt(text: string): bigint | null {
  const v = parseGoInteger(text);
  return v === null || v > 0x7fffffffffffffffn || v < -0x8000000000000000n ? null : v;
}

/** strconv.ParseUint(s, 0, 64): no sign, fits in uint64; null otherwise. */
export function parseGoUint(text: string): bigint | null {
  if (text[0] === '+' || text[0] === '-') return null;
  const v = parseGoInteger(text);
  return v !== null && v <= 0xffffffffffffffffn ? v : null;
}

/** strconv.ParseFloat(s, 64) for decimal and hexadecimal literals; null when it does not parse. */
export function parseGoFloat(text: string): number | null {
  if (text.includes('_') && !underscoreOK(text)) return null;
  const s = text.replace(/_/g, '');
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
  const m = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const mantissa = parseInt((m[2] || '0') + (m[3] ?? ''), 16);
  const v = mantissa * 2 ** (Number(m[4]) - 4 * (m[3] ?? '').length);
  return m[1] === '-' ? -v : v;
}

// ---------------------------------------------------------------------------------------------
// strconv.FormatFloat(v, fmt, prec, 64).

interface Decimal {
  digits: string; // no leading or trailing zeros; '' for zero
  dp: number; // decimal point position: value = 0.digits × 10^dp
}

/** The exact decimal expansion of a finite double's magnitude. */
function exactDecimal(v: number): Decimal {
  const { mant, exp } = decompose(v);
  if (mant === 0n) return { digits: '', dp: 0 };
  let digits: string;
  let dp: number;
  if (exp >= 0) {
    digits = (mant << BigInt(exp)).toString();
    dp = digits.length;
  } else {
    const k = -exp;
    digits = (mant * 5n ** BigInt(k)).toString();
    dp = digits.length - k;
  }
  return trim({ digits, dp });
}

function trim(d: Decimal): Decimal {
  let digits = d.digits.replace(/0+$/, '');
  let dp = d.dp;
  const lead = digits.length - digits.replace(/^0+/, '').length;
  digits = digits.slice(lead);
  dp -= lead;
  return digits === '' ? { digits: '', dp: 0 } : { digits, dp };
}

/** The shortest digits that read back as the same double (what JavaScript prints, too). */
function shortestDecimal(v: number): Decimal {
  if (v === 0) return { digits: '', dp: 0 };
  const [mant, e] = Math.abs(v).toExponential().split('e');
  return trim({ digits: mant.replace('.', ''), dp: Number(e) + 1 });
}

/** Rounds to `nd` digits, ties to even (Go's decimal.Round); nd < 0 leaves the value as is. */
function round(d: Decimal, nd: number): Decimal {
  if (nd < 0 || nd >= d.digits.length) return d;
  const next = d.digits.charCodeAt(nd) - 48;
  let up: boolean;
  if (next === 5 && nd + 1 === d.digits.length) up = nd > 0 && (d.digits.charCodeAt(nd - 1) - 48) % 2 === 1;
  else up = next >= 5;
  if (!up) return trim({ digits: d.digits.slice(0, nd), dp: d.dp });
  let i = nd - 1;
  while (i >= 0 && d.digits[i] === '9') i--;
  if (i < 0) return { digits: '1', dp: d.dp + 1 };
  return { digits: d.digits.slice(0, i) + String.fromCharCode(d.digits.charCodeAt(i) + 1), dp: d.dp };
}

function decompose(v: number): { mant: bigint; exp: number; biasedExp: number; frac: bigint } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  const bits = view.getBigUint64(0);
  const biasedExp = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  if (biasedExp === 0) return { mant: frac, exp: -1074, biasedExp, frac };
  return { mant: frac | (1n << 52n), exp: biasedExp - 1075, biasedExp, frac };
}

function fmtE(neg: boolean, d: Decimal, prec: number, e: string): string {
  let out = neg ? '-' : '';
  out += d.digits.length ? d.digits[0] : '0';
  if (prec > 0) out += '.' + d.digits.slice(1, prec + 1).padEnd(prec, '0');
  let exp = d.digits.length === 0 ? 0 : d.dp - 1;
  const sign = exp < 0 ? '-' : '+';
  exp = Math.abs(exp);
  return out + e + sign + (exp < 10 ? '0' + exp : String(exp));
}

function fmtF(neg: boolean, d: Decimal, prec: number): string {
  let out = neg ? '-' : '';
  if (d.dp > 0) out += d.digits.slice(0, d.dp).padEnd(d.dp, '0');
  else out += '0';
  if (prec > 0) {
    out += '.';
    for (let i = 1; i <= prec; i++) {
      const j = d.dp + i - 1;
      out += j >= 0 && j < d.digits.length ? d.digits[j] : '0';
    }
  }
  return out;
}

/** %b: decimal mantissa, binary exponent (-123456p-78). */
function fmtB(neg: boolean, v: number): string {
  const { mant, exp } = decompose(v);
  return (neg ? '-' : '') + mant.toString() + 'p' + (exp >= 0 ? '+' : '-') + Math.abs(exp);
}

/** %x: -0x1.yyyyp±dd. */
function fmtX(neg: boolean, v: number, prec: number, upper: boolean): string {
  const d = decompose(v);
  let mant = d.mant;
  let exp = d.biasedExp === 0 ? -1022 : d.biasedExp - 1023;
  if (mant === 0n) exp = 0;
  const one60 = 1n << 60n;
  mant <<= 8n; // leading 1 of a normal number moves from bit 52 to bit 60
  while (mant !== 0n && (mant & one60) === 0n) {
    mant <<= 1n;
    exp--;
  }
  if (prec >= 0 && prec < 15) {
    const shift = BigInt(prec * 4);
    const extra = (mant << shift) & (one60 - 1n);
    mant >>= 60n - shift;
    if ((extra | (mant & 1n)) > 1n << 59n) mant++;
    mant <<= 60n - shift;
    if ((mant & (1n << 61n)) !== 0n) {
      mant >>= 1n;
      exp++;
    }
  }
  const digits = upper ? '0123456789ABCDEF' : '0123456789abcdef';
  let out = (neg ? '-' : '') + '0' + (upper ? 'X' : 'x') + String((mant >> 60n) & 1n);
  mant = (mant << 4n) & ((1n << 64n) - 1n);
  const nibble = (): string => {
    const c = digits[Number((mant >> 60n) & 15n)];
    mant = (mant << 4n) & ((1n << 64n) - 1n);
    return c;
  };
  if (prec < 0 && mant !== 0n) {
    out += '.';
    while (mant !== 0n) out += nibble();
  } else if (prec > 0) {
    out += '.';
    for (let i = 0; i < prec; i++) out += nibble();
  }
  out += upper ? 'P' : 'p';
  out += exp < 0 ? '-' : '+';
  return out + String(Math.abs(exp)).padStart(2, '0');
}

/** strconv.FormatFloat(v, fmt, prec, 64) for fmt in b e E f g G x X. */
export function formatFloat(v: number, fmt: string, prec: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  const neg = v < 0 || Object.is(v, -0);
  if (fmt === 'b') return fmtB(neg, Math.abs(v));
  if (fmt === 'x' || fmt === 'X') return fmtX(neg, Math.abs(v), prec, fmt === 'X');
  const shortest = prec < 0;
  let d: Decimal;
  if (shortest) {
    d = shortestDecimal(Math.abs(v));
    if (fmt === 'e' || fmt === 'E') prec = Math.max(d.digits.length - 1, 0);
    else if (fmt === 'f') prec = Math.max(d.digits.length - d.dp, 0);
    else prec = d.digits.length;
  } else {
    const exact = exactDecimal(Math.abs(v));
    if (fmt === 'f') d = round(exact, exact.dp + prec);
    else if (fmt === 'e' || fmt === 'E') d = round(exact, prec + 1);
    else {
      if (prec === 0) prec = 1;
      d = round(exact, prec);
    }
  }
  switch (fmt) {
    case 'e':
    case 'E':
      return fmtE(neg, d, prec, fmt);
    case 'f':
      return fmtF(neg, d, prec);
    default: {
      // g, G
      let eprec = prec;
      if (eprec > d.digits.length && d.digits.length >= d.dp) eprec = d.digits.length;
      if (shortest) eprec = 6;
      const exp = d.dp - 1;
      if (exp < -4 || exp >= eprec) {
        if (prec > d.digits.length) prec = d.digits.length;
        return fmtE(neg, d, prec - 1, fmt === 'g' ? 'e' : 'E');
      }
      if (prec > d.dp) prec = d.digits.length;
      return fmtF(neg, d, Math.max(prec - d.dp, 0));
    }
  }
}
