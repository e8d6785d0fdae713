// Pieces of the Go libraries under Vault's AWS engine that show through its answers: strconv.Quote
// (Vault formats several role messages with %q, the multierror of a refused write among them),
// encoding/json's Compact (a role's policy document is stored and read back compacted: the
// client's text without the whitespace between tokens, never re-serialised), and the AWS SDK's
// ARN parser (its messages appear in role validation errors).

/** Go's strconv.Quote (what %q prints for a string or an error): the template engine's. */
export { quote as goQuote } from '../../framework/template/go-strconv';

const JSON_SPACE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /true|false|null/y;
const STRING_ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/** Where the scanner of compactJSON stands. */
type Expect = 'value' | 'first-value-or-end' | 'key' | 'first-key-or-end' | 'colon' | 'comma-or-end';

/** The end of the JSON string starting at `start` (just after its closing quote), or -1. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -1;
    if (c === 0x5c) {
      STRING_ESCAPE.lastIndex = i;
      if (!STRING_ESCAPE.test(text)) return -1;
      i = STRING_ESCAPE.lastIndex;
    } else i++;
  }
  return -1;
}

/** The end of the number or literal at `start`, or -1. */
function scalarEnd(text: string, start: number): number {
  for (const re of [NUMBER, LITERAL]) {
    re.lastIndex = start;
    if (re.test(text)) return re.lastIndex;
  }
  return -1;
}

/**
 * Go's json.Compact: `text` without insignificant whitespace, every token kept as written (key
 * order, duplicate keys, number spellings and string escapes); null when `text` is not exactly
 * one JSON value. Iterative, so deep nesting cannot exhaust the stack.
 */
export function compactJSON(text: string): string | null {
  const parts: string[] = [];
  /** The open containers: '{' or '['. */
  const open: string[] = [];
  let expect: Expect = 'value';
  let done = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (JSON_SPACE.has(ch)) {
      i++;
      continue;
    }
    if (done) return null;
    const top = open[open.length - 1];
    if ((expect === 'first-value-or-end' && ch === ']') || (expect === 'first-key-or-end' && ch === '}')) {
      open.pop();
    } else if (expect === 'comma-or-end') {
      if (ch === ',') expect = top === '{' ? 'key' : 'value';
      else if ((ch === '}' && top === '{') || (ch === ']' && top === '[')) open.pop();
      else return null;
    } else if (expect === 'colon') {
      if (ch !== ':') return null;
      expect = 'value';
    } else if (expect === 'key' || expect === 'first-key-or-end') {
      if (ch !== '"') return null;
      const end = stringEnd(text, i);
      if (end < 0) return null;
      parts.push(text.slice(i, end));
      i = end;
      expect = 'colon';
      continue;
    } else if (ch === '{' || ch === '[') {
      open.push(ch);
      expect = ch === '{' ? 'first-key-or-end' : 'first-value-or-end';
      parts.push(ch);
      i++;
      continue;
    } else {
      const end = ch === '"' ? stringEnd(text, i) : scalarEnd(text, i);
      if (end < 0) return null;
      parts.push(text.slice(i, end));
      i = end;
      if (open.length === 0) done = true;
      else expect = 'comma-or-end';
      continue;
    }
    // A single-character token that needs no further scanning: ',', ':' or a closing bracket.
    parts.push(ch);
    i++;
    if ((ch === '}' || ch === ']') && open.length === 0) done = true;
    else if (ch === '}' || ch === ']') expect = 'comma-or-end';
  }
  return done ? parts.join('') : null;
}

/** The AWS SDK's arn.Parse: the service and resource of an ARN, or the SDK's error message. */
export function parseArn(arn: string): { service: string; resource: string } | string {
  if (!arn.startsWith('arn:')) return 'arn: invalid prefix';
  // Six ':'-separated sections; the resource keeps any further ':'.
  const sections = arn.split(':');
  if (sections.length < 6) return 'arn: not enough sections';
  return { service: sections[2], resource: sections.slice(5).join(':') };
}
