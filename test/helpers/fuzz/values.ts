// What the fuzzer sends: bodies are built as JSON text (so 1e999, 9007199254740993 or a lone
// surrogate go out exactly as written), from a template of valid field values that a case then
// breaks: fields swapped for extreme values, dropped or added, or the whole body replaced.

import type { Rng } from './random';

/** A body as field name → JSON text of its value. */
export type Template = Record<string, string>;

const long = (n: number, ch = 'a'): string => `"${ch.repeat(n)}"`;

/** Values that have broken servers before: wrong types, extremes, odd strings, structures. */
export const EXTREMES: readonly string[] = [
  'null',
  '""',
  '" "',
  '0',
  '-1',
  '1',
  '1.5',
  '-0',
  '1e999',
  '-1e999',
  '1E+2',
  '0.1e-400',
  '9007199254740993',
  '123456789012345678901234567890',
  '18446744073709551616',
  '-9223372036854775809',
  '2147483648',
  'true',
  'false',
  '"true"',
  '"0"',
  '"-1"',
  '"1.5"',
  '"-5s"',
  '"1h"',
  '"30m"',
  '"99999999999999h"',
  '"9999999999h"',
  '"2562047h47m16s"',
  '"2562047h47m17s"',
  '"1e999"',
  '"abc"',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"ключ ✓ 🗝"',
  '"\\u202e\\u200b"',
  '"../.."',
  '"a/b"',
  '"*"',
  '"+"',
  '"%00"',
  '"%2e%2e"',
  '"a,b,,c"',
  '"<script>"',
  '"${jndi:x}"',
  '"{{identity.entity.id}}"',
  '"127.0.0.1/33"',
  '"::1"',
  '"vault:v1:AAAA"',
  '"vault:v99999999999:AAAA"',
  '"aGVsbG8="',
  '"not base64!"',
  '"-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----"',
  long(5_000),
  long(70_000, 'b'),
  '[]',
  '[null]',
  '[1,"a",null,true]',
  '["a","b"]',
  '[""]',
  '[[[]]]',
  '{}',
  '{"a":"b"}',
  '{"a":1}',
  '{"a":{"b":[1,2,{"c":null}]}}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  `[${Array.from({ length: 300 }, (_, i) => i).join(',')}]`,
  `${'['.repeat(60)}${']'.repeat(60)}`,
];

/** Names for the path segment a case writes under: odd, long, or empty. */
export const ODD_NAMES: readonly string[] = [
  '',
  '.',
  '..',
  '...',
  'a/../b',
  'a//b',
  '%2e%2e',
  '%2F',
  '%00',
  '%25',
  'a%20b',
  'ключ',
  '🗝',
  '*',
  '+',
  'a+b',
  '-',
  '_',
  'a'.repeat(1_000),
  'name with spaces',
  'UPPER',
  'trailing/',
  'sys',
  'default',
  'root',
];

export function objectText(t: Template): string {
  return `{${Object.entries(t)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(',')}}`;
}

export type Mutation = 'valid' | 'fields' | 'drop' | 'extra' | 'raw' | 'deep';

export interface MutatedBody {
  mutation: Mutation;
  /** The body text; bytes when it holds bytes that are not UTF-8. */
  body: string | Uint8Array;
  /** The template as sent, when the body is still one (for read-back checks). */
  fields: Template | null;
  contentType?: string;
}

/** Whole bodies no client library would build. */
function rawBody(rng: Rng, t: Template): MutatedBody {
  const text = objectText(t);
  const choices: (() => MutatedBody)[] = [
    () => ({ mutation: 'raw', body: '', fields: null }),
    () => ({ mutation: 'raw', body: text.slice(0, rng.int(0, Math.max(0, text.length - 1))), fields: null }),
    () => ({ mutation: 'raw', body: rng.pick(['[]', '"x"', '42', 'null', 'true', '{}[]', '{"a":1}garbage', '{,}', "{'a':1}", '{"a" 1}']), fields: null }),
    () => ({ mutation: 'raw', body: `\ufeff${text}`, fields: null }),
    () => ({ mutation: 'raw', body: `${'{"a":'.repeat(600)}1${'}'.repeat(600)}`, fields: null }),
    () => ({ mutation: 'raw', body: `{"a":[${'0,'.repeat(10_000)}0]}`, fields: null }),
    () => {
      const bytes = new TextEncoder().encode(text);
      const at = rng.int(0, bytes.length);
      const bad = rng.pick([[0xff], [0xfe, 0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]]);
      return { mutation: 'raw', body: new Uint8Array([...bytes.slice(0, at), ...bad, ...bytes.slice(at)]), fields: null };
    },
    () => ({ mutation: 'raw', body: text.replace('{', '{"dup":1,"dup":2,'), fields: null }),
    () => ({ mutation: 'raw', body: 'a=1&b=%ZZ&c', fields: null, contentType: 'application/x-www-form-urlencoded' }),
    () => ({ mutation: 'raw', body: text, fields: null, contentType: rng.pick(['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '']) }),
  ];
  return rng.pick(choices)();
}

/** A body for one case: the template, broken in one of several ways. */
export function mutateBody(rng: Rng, t: Template): MutatedBody {
  const names = Object.keys(t);
  const roll = rng.next();
  if (roll < 0.12 || names.length === 0) return { mutation: 'valid', body: objectText(t), fields: t };
  if (roll < 0.55) {
    const out = { ...t };
    for (let i = rng.int(1, 3); i > 0; i--) out[rng.pick(names)] = rng.pick(EXTREMES);
    return { mutation: 'fields', body: objectText(out), fields: out };
  }
  if (roll < 0.65) {
    const out = { ...t };
    for (let i = rng.int(1, names.length); i > 0; i--) delete out[rng.pick(names)];
    return { mutation: 'drop', body: objectText(out), fields: out };
  }
  if (roll < 0.72) {
    const out = { ...t, [rng.pick(['unknown', '__proto__', 'constructor', '', ' ', 'ключ', 'batch_input'])]: rng.pick(EXTREMES) };
    return { mutation: 'extra', body: objectText(out), fields: out };
  }
  if (roll < 0.8) {
    const out = { ...t };
    out[rng.pick(names)] = `{"deep":${rng.pick(EXTREMES)},"list":[${rng.pick(EXTREMES)},${rng.pick(EXTREMES)}]}`;
    return { mutation: 'deep', body: objectText(out), fields: out };
  }
  return rawBody(rng, t);
}
