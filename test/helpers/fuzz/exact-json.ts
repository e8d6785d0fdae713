// The fuzzer's oracle for "reads back what was written": JSON compared with numbers as their
// source text (Vault keeps 1.0, 1e999 and big integers exactly), built on V8's own parser
// (the reviver's source text), independent of the server's code.

const NUMBER = '\u0000number';

function parseExact(text: string): unknown {
  return JSON.parse(text, function (this: unknown, _key: string, value: unknown, context?: { source?: string }) {
    return typeof value === 'number' ? { [NUMBER]: context?.source ?? String(value) } : value;
  });
}

function encode(v: unknown): string {
  // Strings exactly: a lone surrogate (Go's decoder would make it U+FFFD) must read back as sent.
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(encode).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === NUMBER) return String(o[NUMBER]);
  return `{${keys
    .sort()
    .map((k) => `${encode(k)}:${encode(o[k])}`)
    .join(',')}}`;
}

/** A canonical text of a JSON text: keys sorted, numbers and strings as sent. */
export const canonical = (text: string): string => encode(parseExact(text));

/** The canonical text of the value at `path` inside a JSON text; undefined when it is absent. */
export function canonicalAt(text: string, path: string[]): string | undefined {
  let v = parseExact(text);
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return encode(v);
}
