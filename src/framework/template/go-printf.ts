// Go's fmt.Sprint, Sprintln and Sprintf over the template's value model: the verbs, flags,
// widths, precisions and explicit argument indexes, and fmt's error notation for misuse
// (%!d(string=x), %!s(MISSING), %!(EXTRA int=1), %!(NOVERB), %!(BADWIDTH), ...).

import { FuncError, MAX_STRING } from './func-spec';
import { canBackquote, formatFloat, isPrint, quote, quoteRune } from './go-strconv';
import { GoFloat, type GoMap, type GoValue, fromData, kindOf, mapKeys, mapLookup, runeCount, typeName, utf8 } from './values';

interface Flags {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  plusV: boolean;
  sharpV: boolean;
  wid: number;
  widPresent: boolean;
  prec: number;
  precPresent: boolean;
}

const noFlags = (): Flags => ({
  plus: false,
  minus: false,
  sharp: false,
  space: false,
  zero: false,
  plusV: false,
  sharpV: false,
  wid: 0,
  widPresent: false,
  prec: 0,
  precPresent: false,
});

/** fmt refuses widths and precisions above this (tooLarge); they end the format with %!(NOVERB). */
const MAX_NUM = 1e6;

/** How deeply lists and maps may nest inside a printed value. */
const MAX_DEPTH = 100;

const isString = (v: GoValue): boolean => typeof v === 'string';

class Printer {
  buf = '';
  f: Flags = noFlags();

  /** Stops a format that would produce an unreasonably long string (widths go up to a million). */
  checkLength(): void {
    if (this.buf.length > MAX_STRING) throw new FuncError(`result is longer than ${MAX_STRING} characters`);
  }

  // --- padding -------------------------------------------------------------------------------

  writePadding(n: number): void {
    if (n <= 0) return;
    this.buf += (this.f.zero && !this.f.minus ? '0' : ' ').repeat(n);
  }

  pad(s: string): void {
    if (!this.f.widPresent || this.f.wid === 0) {
      this.buf += s;
      return;
    }
    const width = this.f.wid - runeCount(s);
    if (!this.f.minus) {
      this.writePadding(width);
      this.buf += s;
    } else {
      this.buf += s;
      this.writePadding(width);
    }
  }

  /** pad with the zero flag switched off (numbers that handled their own zero padding). */
  padNoZero(s: string): void {
    const zero = this.f.zero;
    this.f.zero = false;
    this.pad(s);
    this.f.zero = zero;
  }

  truncate(s: string): string {
    if (!this.f.precPresent) return s;
    let n = this.f.prec;
    let i = 0;
    for (const ch of s) {
      if (n-- <= 0) return s.slice(0, i);
      i += ch.length;
    }
    return s;
  }

  // --- dispatch --------------------------------------------------------------------------------

  printArg(arg: GoValue, verb: string): void {
    if (arg === undefined || arg === null) {
      if (verb === 'T' || verb === 'v') this.pad('<nil>');
      else this.badVerb(verb, null);
      return;
    }
    if (verb === 'T') {
      this.fmtS(typeName(arg));
      return;
    }
    if (verb === 'p') {
      this.badVerb(verb, arg);
      return;
    }
    this.printValue(arg, verb, 0);
  }

  printValue(v: GoValue, verb: string, depth: number): void {
    // Data that contains itself would recurse forever (Go's fmt would, too).
    if (depth > MAX_DEPTH) throw new FuncError('value is nested too deeply to print');
    switch (kindOf(v)) {
      case 'invalid':
      case 'nil':
        if (depth === 0) this.pad('<nil>');
        else if (this.f.sharpV) this.buf += 'interface {}(nil)';
        else this.pad('<nil>');
        return;
      case 'bool':
        if (verb === 't' || verb === 'v') this.pad(v ? 'true' : 'false');
        else this.badVerb(verb, v);
        return;
      case 'int':
        this.fmtIntegerVerb(v as number, verb);
        return;
      case 'float':
        this.fmtFloatVerb((v as GoFloat).value, verb);
        return;
      case 'string':
        this.fmtStringVerb(v as string, verb);
        return;
      case 'slice': {
        const list = v as unknown[];
        if (this.f.sharpV) {
          this.buf += '[]interface {}{';
          list.forEach((e, i) => {
            if (i > 0) this.buf += ', ';
            this.printValue(fromData(e), verb, depth + 1);
          });
          this.buf += '}';
        } else {
          this.buf += '[';
          list.forEach((e, i) => {
            if (i > 0) this.buf += ' ';
            this.printValue(fromData(e), verb, depth + 1);
          });
          this.buf += ']';
        }
        return;
      }
      case 'map': {
        const m = v as GoMap;
        this.buf += this.f.sharpV ? 'map[string]interface {}{' : 'map[';
        mapKeys(m).forEach((k, i) => {
          if (i > 0) this.buf += this.f.sharpV ? ', ' : ' ';
          this.printValue(k, verb, depth + 1);
          this.buf += ':';
          this.printValue(mapLookup(m, k).value, verb, depth + 1);
        });
        this.buf += this.f.sharpV ? '}' : ']';
        return;
      }
    }
  }

  badVerb(verb: string, arg: GoValue): void {
    this.buf += '%!' + verb + '(';
    if (arg === null || arg === undefined) this.buf += '<nil>';
    else {
      this.buf += typeName(arg) + '=';
      this.printArg(arg, 'v');
    }
    this.buf += ')';
  }

  // --- strings ---------------------------------------------------------------------------------

  fmtStringVerb(s: string, verb: string): void {
    switch (verb) {
      case 'v':
        if (this.f.sharpV) this.fmtQ(s);
        else this.fmtS(s);
        return;
      case 's':
        this.fmtS(s);
        return;
      case 'x':
      case 'X':
        this.fmtSx(s, verb === 'X');
        return;
      case 'q':
        this.fmtQ(s);
        return;
      default:
        this.badVerb(verb, s);
    }
  }

  fmtS(s: string): void {
    this.pad(this.truncate(s));
  }

  fmtQ(s: string): void {
    s = this.truncate(s);
    if (this.f.sharp && canBackquote(s)) this.pad('`' + s + '`');
    else this.pad(quote(s, this.f.plus));
  }

  fmtSx(s: string, upper: boolean): void {
    const bytes = utf8(s);
    const digits = upper ? '0123456789ABCDEFX' : '0123456789abcdefx';
    let length = bytes.length;
    if (this.f.precPresent && this.f.prec < length) length = this.f.prec;
    let width = 2 * length;
    if (width > 0) {
      if (this.f.space) {
        if (this.f.sharp) width *= 2;
        width += length - 1;
      } else if (this.f.sharp) width += 2;
    } else {
      if (this.f.widPresent) this.writePadding(this.f.wid);
      return;
    }
    if (this.f.widPresent && this.f.wid > width && !this.f.minus) this.writePadding(this.f.wid - width);
    let out = this.f.sharp ? '0' + digits[16] : '';
    for (let i = 0; i < length; i++) {
      if (this.f.space && i > 0) {
        out += ' ';
        if (this.f.sharp) out += '0' + digits[16];
      }
      out += digits[bytes[i] >> 4] + digits[bytes[i] & 15];
    }
    this.buf += out;
    if (this.f.widPresent && this.f.wid > width && this.f.minus) this.writePadding(this.f.wid - width);
  }

  // --- integers --------------------------------------------------------------------------------

  fmtIntegerVerb(v: number, verb: string): void {
    switch (verb) {
      case 'v':
      case 'd':
        this.fmtInteger(v, 10, verb, false);
        return;
      case 'b':
        this.fmtInteger(v, 2, verb, false);
        return;
      case 'o':
      case 'O':
        this.fmtInteger(v, 8, verb, false);
        return;
      case 'x':
        this.fmtInteger(v, 16, verb, false);
        return;
      case 'X':
        this.fmtInteger(v, 16, verb, true);
        return;
      case 'c':
        this.pad(String.fromCodePoint(toRune(v)));
        return;
      case 'q':
        this.pad(quoteRune(toRune(v), this.f.plus));
        return;
      case 'U':
        this.fmtUnicode(v);
        return;
      default:
        this.badVerb(verb, v);
    }
  }

  fmtInteger(v: number, base: number, verb: string, upper: boolean): void {
    const negative = v < 0;
    let prec = 0;
    if (this.f.precPresent) {
      prec = this.f.prec;
      if (prec === 0 && v === 0) {
        const zero = this.f.zero;
        this.f.zero = false;
        this.writePadding(this.f.wid);
        this.f.zero = zero;
        return;
      }
    } else if (this.f.zero && !this.f.minus && this.f.widPresent) {
      prec = this.f.wid;
      if (negative || this.f.plus || this.f.space) prec--;
    }
    let digits = Math.abs(v).toString(base);
    if (upper) digits = digits.toUpperCase();
    digits = digits.padStart(prec, '0');
    if (this.f.sharp) {
      if (base === 2) digits = '0b' + digits;
      else if (base === 8 && digits[0] !== '0') digits = '0' + digits;
      else if (base === 16) digits = (upper ? '0X' : '0x') + digits;
    }
    if (verb === 'O') digits = '0o' + digits;
    if (negative) digits = '-' + digits;
    else if (this.f.plus) digits = '+' + digits;
    else if (this.f.space) digits = ' ' + digits;
    this.padNoZero(digits);
  }

  fmtUnicode(v: number): void {
    const u = BigInt.asUintN(64, BigInt(v));
    let prec = 4;
    if (this.f.precPresent && this.f.prec > 4) prec = this.f.prec;
    let out = 'U+' + u.toString(16).toUpperCase().padStart(prec, '0');
    if (this.f.sharp && u <= 0x10ffffn && isPrint(Number(u))) out += " '" + String.fromCodePoint(Number(u)) + "'";
    this.padNoZero(out);
  }

  // --- floats ----------------------------------------------------------------------------------

  fmtFloatVerb(v: number, verb: string): void {
    // The strconv format and default precision of each verb; an explicit precision overrides it.
    const table: Record<string, [string, number]> = {
      v: ['g', -1],
      b: ['b', -1],
      g: ['g', -1],
      G: ['G', -1],
      x: ['x', -1],
      X: ['X', -1],
      f: ['f', 6],
      F: ['f', 6],
      e: ['e', 6],
      E: ['E', 6],
    };
    const entry = table[verb];
    if (!entry) {
      this.badVerb(verb, new GoFloat(v));
      return;
    }
    this.fmtFloat(v, entry[0], this.f.precPresent ? this.f.prec : entry[1]);
  }

  fmtFloat(v: number, fmt: string, prec: number): void {
    let num = formatFloat(v, fmt, prec);
    if (num[0] !== '-' && num[0] !== '+') num = '+' + num;
    if (this.f.space && num[0] === '+' && !this.f.plus) num = ' ' + num.slice(1);
    if (num[1] === 'I' || num[1] === 'N') {
      if (num[1] === 'N' && !this.f.space && !this.f.plus) num = num.slice(1);
      this.padNoZero(num);
      return;
    }
    if (this.f.sharp && fmt !== 'b') num = alternateFloat(num, fmt, prec);
    if (this.f.plus || num[0] !== '+') {
      if (this.f.zero && !this.f.minus && this.f.widPresent && this.f.wid > num.length) {
        this.buf += num[0];
        this.writePadding(this.f.wid - num.length);
        this.buf += num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }
}

/** The # flag on floats: always a decimal point, and %g keeps its trailing zeros. */
function alternateFloat(num: string, verb: string, prec: number): string {
  let digits = 0;
  if (verb === 'g' || verb === 'G' || verb === 'x') digits = prec === -1 ? 6 : prec;
  let tail = '';
  let hasPoint = false;
  let sawNonzero = false;
  for (let i = 1; i < num.length; i++) {
    const c = num[i];
    if (c === '.') hasPoint = true;
    else if (c === 'p' || c === 'P' || ((c === 'e' || c === 'E') && verb !== 'x' && verb !== 'X')) {
      tail = num.slice(i);
      num = num.slice(0, i);
      break;
    } else {
      if (c !== '0') sawNonzero = true;
      if (sawNonzero) digits--;
    }
  }
  if (!hasPoint) {
    if (num.length === 2 && num[1] === '0') digits--;
    num += '.';
  }
  if (digits > 0) num += '0'.repeat(digits);
  return num + tail;
}

/** A Go int converted to a rune: out-of-range values print as U+FFFD. */
function toRune(v: number): number {
  return v < 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) ? 0xfffd : v;
}

// --- the fmt entry points ------------------------------------------------------------------------

/** fmt.Sprint: spaces between operands when neither side is a string. */
export function sprint(args: GoValue[]): string {
  const p = new Printer();
  let prevString = false;
  args.forEach((arg, i) => {
    const str = isString(arg);
    if (i > 0 && !str && !prevString) p.buf += ' ';
    p.f = noFlags();
    p.printArg(arg, 'v');
    p.checkLength();
    prevString = str;
  });
  return p.buf;
}

/** fmt.Sprintln: spaces between all operands and a final newline. */
export function sprintln(args: GoValue[]): string {
  const p = new Printer();
  args.forEach((arg, i) => {
    if (i > 0) p.buf += ' ';
    p.f = noFlags();
    p.printArg(arg, 'v');
    p.checkLength();
  });
  return p.buf + '\n';
}

/** fmt.Sprintf. */
export function sprintf(format: string, args: GoValue[]): string {
  const p = new Printer();
  const end = format.length;
  let argNum = 0;
  let afterIndex = false;
  let reordered = false;
  let goodArgNum = true;

  const parseNum = (i: number): { num: number; isNum: boolean; next: number } => {
    let num = 0;
    let isNum = false;
    let j = i;
    for (; j < end && format[j] >= '0' && format[j] <= '9'; j++) {
      if (num > MAX_NUM) return { num: 0, isNum: false, next: end };
      num = num * 10 + (format.charCodeAt(j) - 48);
      isNum = true;
    }
    return { num, isNum, next: j };
  };

  const argNumber = (i: number): { argNum: number; next: number; found: boolean } => {
    if (i >= end || format[i] !== '[') return { argNum, next: i, found: false };
    reordered = true;
    if (end - i < 3) {
      goodArgNum = false;
      return { argNum, next: i + 1, found: false };
    }
    // [n]: find the closing bracket.
    let close = -1;
    for (let j = i + 1; j < end; j++) {
      if (format[j] === ']') {
        close = j;
        break;
      }
    }
    if (close < 0) {
      goodArgNum = false;
      return { argNum, next: i + 1, found: false };
    }
    const { num, isNum, next } = parseNum(i + 1);
    if (!isNum || next !== close) {
      goodArgNum = false;
      return { argNum, next: close + 1, found: false };
    }
    const index = num - 1;
    if (index >= 0 && index < args.length) return { argNum: index, next: close + 1, found: true };
    goodArgNum = false;
    return { argNum, next: close + 1, found: true };
  };

  const intFromArg = (): { num: number; ok: boolean } => {
    if (argNum >= args.length) return { num: 0, ok: false };
    const a = args[argNum++];
    if (typeof a !== 'number' || Math.abs(a) > MAX_NUM) return { num: 0, ok: false };
    return { num: a, ok: true };
  };

  for (let i = 0; i < end; ) {
    goodArgNum = true;
    const lasti = i;
    while (i < end && format[i] !== '%') i++;
    if (i > lasti) p.buf += format.slice(lasti, i);
    if (i >= end) break;
    i++; // the %
    p.f = noFlags();

    flags: for (; i < end; i++) {
      switch (format[i]) {
        case '#':
          p.f.sharp = true;
          break;
        case '0':
          p.f.zero = true;
          break;
        case '+':
          p.f.plus = true;
          break;
        case '-':
          p.f.minus = true;
          break;
        case ' ':
          p.f.space = true;
          break;
        default:
          break flags;
      }
    }

    let r = argNumber(i);
    [argNum, i, afterIndex] = [r.argNum, r.next, r.found];

    if (i < end && format[i] === '*') {
      i++;
      const { num, ok } = intFromArg();
      p.f.wid = num;
      p.f.widPresent = ok;
      if (!ok) p.buf += '%!(BADWIDTH)';
      if (p.f.wid < 0) {
        p.f.wid = -p.f.wid;
        p.f.minus = true;
        p.f.zero = false;
      }
      afterIndex = false;
    } else {
      const n = parseNum(i);
      [p.f.wid, p.f.widPresent, i] = [n.num, n.isNum, n.next];
      if (afterIndex && p.f.widPresent) goodArgNum = false;
    }

    if (i + 1 < end && format[i] === '.') {
      i++;
      if (afterIndex) goodArgNum = false;
      r = argNumber(i);
      [argNum, i, afterIndex] = [r.argNum, r.next, r.found];
      if (i < end && format[i] === '*') {
        i++;
        const { num, ok } = intFromArg();
        p.f.prec = num;
        p.f.precPresent = ok;
        if (p.f.prec < 0) {
          p.f.prec = 0;
          p.f.precPresent = false;
        }
        if (!p.f.precPresent) p.buf += '%!(BADPREC)';
        afterIndex = false;
      } else {
        const n = parseNum(i);
        [p.f.prec, p.f.precPresent, i] = [n.num, n.isNum, n.next];
        if (!p.f.precPresent) {
          p.f.prec = 0;
          p.f.precPresent = true;
        }
      }
    }

    if (!afterIndex) {
      r = argNumber(i);
      [argNum, i, afterIndex] = [r.argNum, r.next, r.found];
    }

    if (i >= end) {
      p.buf += '%!(NOVERB)';
      break;
    }

    const verb = String.fromCodePoint(format.codePointAt(i) ?? 0);
    i += verb.length;

    if (verb === '%') p.buf += '%';
    else if (!goodArgNum) p.buf += '%!' + verb + '(BADINDEX)';
    else if (argNum >= args.length) p.buf += '%!' + verb + '(MISSING)';
    else {
      if (verb === 'v') {
        p.f.sharpV = p.f.sharp;
        p.f.sharp = false;
        p.f.plusV = p.f.plus;
        p.f.plus = false;
      }
      p.printArg(args[argNum], verb);
      argNum++;
    }
    p.checkLength();
  }

  if (!reordered && argNum < args.length) {
    p.f = noFlags();
    p.buf += '%!(EXTRA ';
    args.slice(argNum).forEach((arg, i) => {
      if (i > 0) p.buf += ', ';
      if (arg === null || arg === undefined) p.buf += '<nil>';
      else {
        p.buf += typeName(arg) + '=';
        p.printArg(arg, 'v');
      }
    });
    p.buf += ')';
  }
  return p.buf;
}
