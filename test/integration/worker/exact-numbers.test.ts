// JSON numbers read back exactly as written (Vault decodes with UseNumber): big integers, long
// and exponent forms, 1.0 and -0, in KV v1 and v2 data, custom_metadata, cubbyhole, audit entries
// and wrapped responses; typed fields still convert, and refuse what they cannot hold.
import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { setSinkMode, sink, sinkURL } from '../../helpers/audit-sink';
import { mountKv2 } from '../../helpers/kv2';

let c: Cluster;
const { call, ok } = caller(() => c.root);

/** The response text as sent (a JSON parse here would round the numbers again). */
async function rawText(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await SELF.fetch(`http://coffer.test/v1/${path}`, {
    method,
    headers: { 'X-Vault-Token': c.root, 'Content-Type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const NUMBERS = '{"big":9007199254740993,"huge":123456789012345678901234567890,"inf":1e999,"one":1.0,"neg0":-0,"tiny":1E-400,"pi":3.141592653589793238462643383279,"plain":42,"list":[18446744073709551616,0.10],"nested":{"n":100000000000000000001}}';
const EXPECTED = ['9007199254740993', '123456789012345678901234567890', '1e999', '1.0', '-0', '1E-400', '3.141592653589793238462643383279', '42', '18446744073709551616', '0.10', '100000000000000000001'];

function expectExact(text: string): void {
  for (const n of EXPECTED) expect(text).toContain(n);
  expect(text).not.toContain('9007199254740992');
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/kv1', { type: 'kv' });
  await mountKv2(c.root, 'kv2');
});

describe('exact numbers', () => {
  it('KV v1 stores and returns them as sent', async () => {
    expect((await rawText('POST', 'kv1/n', NUMBERS)).status).toBe(204);
    const read = await rawText('GET', 'kv1/n');
    expect(read.status).toBe(200);
    expectExact(read.text);
    expect(read.text).toContain('"data":' + NUMBERS);
  });

  it('KV v2 data, patch and subkeys', async () => {
    expect((await rawText('POST', 'kv2/data/n', `{"data":${NUMBERS}}`)).status).toBe(200);
    const read = await rawText('GET', 'kv2/data/n');
    expect(read.text).toContain(`"data":${NUMBERS}`);
    // A merge patch keeps an exact number as a value, never as a map to merge into.
    const patched = await rawText('PATCH', 'kv2/data/n', '{"data":{"big":18446744073709551617,"added":2.50}}', { 'Content-Type': 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    const after = await rawText('GET', 'kv2/data/n');
    expect(after.text).toContain('"big":18446744073709551617');
    expect(after.text).toContain('"added":2.50');
    expect(after.text).toContain('"huge":123456789012345678901234567890');
    const sub = await rawText('GET', 'kv2/subkeys/n');
    expect(sub.text).toContain('"big":null');
    expect(sub.text).toContain('"nested":{"n":null}');
  });

  it('custom_metadata takes a number as its exact text', async () => {
    expect((await rawText('POST', 'kv2/metadata/n', '{"custom_metadata":{"id":9007199254740993,"ratio":1.0}}')).status).toBe(204);
    expect((await ok('GET', 'kv2/metadata/n')).body.data.custom_metadata).toEqual({ id: '9007199254740993', ratio: '1.0' });
  });

  it('cubbyhole, and a wrapped response when unwrapped', async () => {
    expect((await rawText('POST', 'cubbyhole/n', NUMBERS)).status).toBe(204);
    expectExact((await rawText('GET', 'cubbyhole/n')).text);
    const wrapped = await rawText('GET', 'kv1/n', undefined, { 'X-Vault-Wrap-TTL': '60' });
    const token = JSON.parse(wrapped.text).wrap_info.token as string;
    const unwrapped = await rawText('POST', 'sys/wrapping/unwrap', JSON.stringify({ token }));
    expect(unwrapped.status).toBe(200);
    expectExact(unwrapped.text);
  });

  it('audit entries record them exactly (strings are hashed, numbers kept)', async () => {
    await ok('PUT', 'sys/audit/exact', { type: 'http', options: { url: sinkURL('exact'), log_raw: 'true' } });
    await setSinkMode('exact', 'ok');
    await rawText('POST', 'kv1/audited', '{"n":9007199254740993}');
    await ok('DELETE', 'sys/audit/exact');
    const lines = (await sink('exact')).raw.filter((l) => l.includes('kv1/audited'));
    expect(lines.some((l) => l.includes('"n":9007199254740993'))).toBe(true);
  });

  it('typed fields convert exact numbers, and refuse what they cannot hold', async () => {
    expect((await rawText('POST', 'kv2/metadata/typed', '{"max_versions":5.0}')).status).toBe(204);
    expect((await ok('GET', 'kv2/metadata/typed')).body.data.max_versions).toBe(5);
    const big = await rawText('POST', 'kv2/metadata/typed', '{"max_versions":9007199254740993}');
    expect(big.status).toBe(400);
    expect(JSON.parse(big.text).errors[0]).toContain('max_versions');
    const inf = await rawText('POST', 'kv2/config', '{"max_versions":1e999}');
    expect(inf.status).toBe(400);
  });

  it('refuses a document that uses the key reserved for exact numbers', async () => {
    const r = await rawText('POST', 'kv1/reserved', '{"a":{"\\u0000number":"5"}}');
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).errors).toEqual(['error parsing JSON', 'the key "\\u0000number" is reserved']);
    expect((await call('GET', 'kv1/reserved')).status).toBe(404);
  });
});

// Strings: a JSON escape can name half a surrogate pair. Go's decoder (hence Vault) silently
// makes it U+FFFD; Coffer keeps user data exactly as sent, and refuses it with a 400 where it
// must become UTF-8 (a certificate's subject, an identity name), never a 500.
describe('lone surrogates', () => {
  it('read back exactly as sent, in values and keys', async () => {
    expect((await rawText('POST', 'kv1/surrogates', '{"lone":"a\\ud800b","low":"\\udfff","pair":"\\ud83d\\udddd","\\ud800key":1}')).status).toBe(204);
    const read = await rawText('GET', 'kv1/surrogates');
    expect(read.text).toContain('"data":{"lone":"a\\ud800b","low":"\\udfff","pair":"🗝","\\ud800key":1}');
  });

  it('are refused with a 400 in a certificate subject, and nothing is written', async () => {
    await ok('POST', 'sys/mounts/pki-lone', { type: 'pki' });
    const root = await rawText('POST', 'pki-lone/root/generate/internal', '{"common_name":"\\ud800","key_type":"ec"}');
    expect(root.status).toBe(400);
    expect(JSON.parse(root.text).errors).toEqual(['subject value "\\ud800" is not valid Unicode']);
    expect((await call('GET', 'pki-lone/issuers?list=true')).status).toBe(404);
  });
});
