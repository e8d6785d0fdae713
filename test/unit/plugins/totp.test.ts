// The TOTP plugin's Backend (plugins/totp) at engine level: driven through dispatch over
// MemoryStorage with a pinned clock. RFC 6238's test vectors, generate/import round trips, the QR
// code's pixels against an independent encoding of the returned URL, replay refusal (across a
// restart, and the cleanup after expiry) and every kind of bad input.
import { base32nopad } from '@scure/base';
import { decode as decodePng } from 'fast-png';
import qrcode from 'qrcode/lib/core/qrcode';
import { describe, expect, it } from 'vitest';
import { totpBackend } from '../../../plugins/totp/src/backend';
import { fromBase64, utf8 } from '../../../src/crypto/encoding';
import type { AuthContext, LogicalResponse, WireOperation } from '../../../src/framework/backend';
import { MemoryStorage, StorageTransaction } from '../../../src/framework/storage';
import { dispatch, type Authorizer, type MountContext } from '../../../src/pipeline/dispatch';
import { expectError } from '../../helpers/errors';

const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
const allowAll: Authorizer = { authorize: () => ({ sudo: true }), grantsCreateAndUpdate: () => false };
const mount: MountContext = { mountPoint: 'totp/', mountType: 'totp', mountAccessor: 'totp_1', mountConfig: { defaultLeaseTTL: 3600, maxLeaseTTL: 86400 }, mountOptions: {} };

interface Engine {
  call(operation: WireOperation, path: string, data?: Record<string, unknown>): Promise<LogicalResponse>;
  clock: { now: number };
  storage: MemoryStorage;
  backend: ReturnType<typeof totpBackend>;
  /** Times the backend asked its periodic work to run at. */
  wakes: number[];
}

/** A fresh backend over `storage` (a restart when it is an earlier engine's) at `now` ms. */
function engine(now = 0, storage = new MemoryStorage()): Engine {
  const clock = { now };
  const backend = totpBackend({ now: () => clock.now });
  const wakes: number[] = [];
  return {
    clock,
    storage,
    backend,
    wakes,
    call: (operation, path, data = {}) =>
      dispatch(
        backend,
        { id: 'r', operation, path: `totp/${path}`, data, auth: root, clientIP: '10.0.0.5', headers: {}, wrapTTL: 0 },
        mount,
        new StorageTransaction(storage),
        allowAll,
        { wakeAt: (at) => wakes.push(at) },
      ),
  };
}

const b32 = (ascii: string): string => base32nopad.encode(utf8(ascii));

// RFC 6238 appendix B: the seeds are the ASCII digits repeated to the hash's size.
const SEEDS = {
  SHA1: '12345678901234567890',
  SHA256: '12345678901234567890123456789012',
  SHA512: '1234567890123456789012345678901234567890123456789012345678901234',
};
const VECTORS: [number, string, string, string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

/** Engine with the three RFC keys (8 digits, 30 s) imported as rfc-sha1, rfc-sha256, rfc-sha512. */
async function rfcEngine(now = 0): Promise<Engine> {
  const e = engine(now);
  for (const [algorithm, seed] of Object.entries(SEEDS)) {
    expect(await e.call('write', `keys/rfc-${algorithm.toLowerCase()}`, { key: b32(seed), algorithm, digits: 8 })).toEqual({});
  }
  return e;
}

describe('RFC 6238 test vectors', () => {
  it.each(VECTORS)('at T=%i the codes are SHA1 %s, SHA256 %s, SHA512 %s', async (t, sha1, sha256, sha512) => {
    const e = await rfcEngine(t * 1000);
    expect((await e.call('read', 'code/rfc-sha1')).data).toEqual({ code: sha1 });
    expect((await e.call('read', 'code/rfc-sha256')).data).toEqual({ code: sha256 });
    expect((await e.call('read', 'code/rfc-sha512')).data).toEqual({ code: sha512 });
    // The same instant a millisecond before the step's end gives the same code.
    e.clock.now = (Math.floor(t / 30) * 30 + 29) * 1000 + 999;
    expect((await e.call('read', 'code/rfc-sha1')).data).toEqual({ code: sha1 });
  });

  it('validates each vector at its time, and a code reads as 6 digits by default', async () => {
    const e = await rfcEngine();
    for (const [t, ...codes] of VECTORS) {
      e.clock.now = t * 1000;
      for (const [i, name] of ['rfc-sha1', 'rfc-sha256', 'rfc-sha512'].entries()) {
        expect((await e.call('write', `code/${name}`, { code: codes[i] })).data).toEqual({ valid: true });
      }
    }
    // 6 digits: the last six of the 8-digit value (both are the truncated value mod 10^digits).
    await e.call('write', 'keys/six', { key: b32(SEEDS.SHA1) });
    e.clock.now = 59_000;
    expect((await e.call('read', 'code/six')).data).toEqual({ code: '287082' });
  });

  it('honours a longer period: the counter is floor(unix / period)', async () => {
    const e = engine(59_000);
    await e.call('write', 'keys/p60', { key: b32(SEEDS.SHA1), digits: 8, period: '1m' });
    // floor(59/60) = 0 and floor(89/60) = 1 = floor(59/30): that step's RFC code.
    const atZero = (await e.call('read', 'code/p60')).data?.code;
    e.clock.now = 89_000;
    expect((await e.call('read', 'code/p60')).data).toEqual({ code: '94287082' });
    expect(atZero).not.toEqual('94287082');
    expect((await e.call('read', 'keys/p60')).data).toEqual({ account_name: '', algorithm: 'SHA1', digits: 8, issuer: '', period: 60 });
  });
});

describe('keys', () => {
  it('generates a key: url, barcode, the stored parameters and a secret of key_size bytes', async () => {
    const e = engine(1_700_000_000_000);
    const res = await e.call('write', 'keys/alice', { generate: true, issuer: 'Coffer Inc', account_name: 'alice@example.com', key_size: 32, algorithm: 'SHA256', digits: 8, period: 60 });
    const url = String(res.data?.url);
    const m = /^otpauth:\/\/totp\/Coffer%20Inc:alice@example\.com\?algorithm=SHA256&digits=8&issuer=Coffer%20Inc&period=60&secret=([A-Z2-7]+)$/.exec(url);
    expect(m, url).not.toBeNull();
    expect(base32nopad.decode(m![1])).toHaveLength(32);
    expect(typeof res.data?.barcode).toBe('string');
    expect((await e.call('read', 'keys/alice')).data).toEqual({ account_name: 'alice@example.com', algorithm: 'SHA256', digits: 8, issuer: 'Coffer Inc', period: 60 });

    // Importing the URL elsewhere gives the same codes: the URL carries the whole key.
    await e.call('write', 'keys/copy', { url });
    expect((await e.call('read', 'keys/copy')).data).toEqual((await e.call('read', 'keys/alice')).data);
    const code = (await e.call('read', 'code/alice')).data?.code;
    expect(code).toMatch(/^\d{8}$/);
    expect((await e.call('read', 'code/copy')).data).toEqual({ code });
    expect((await e.call('write', 'code/alice', { code })).data).toEqual({ valid: true });
  });

  it('generates with Vault defaults: SHA1, 6 digits, 30 s, 20-byte secret', async () => {
    const e = engine();
    const res = await e.call('write', 'keys/d', { generate: true, issuer: 'Vault', account_name: 'bob' });
    const secret = /secret=([A-Z2-7]+)$/.exec(String(res.data?.url))![1];
    expect(base32nopad.decode(secret)).toHaveLength(20);
    expect(String(res.data?.url)).toContain('?algorithm=SHA1&digits=6&issuer=Vault&period=30&secret=');
    expect((await e.call('read', 'keys/d')).data).toEqual({ account_name: 'bob', algorithm: 'SHA1', digits: 6, issuer: 'Vault', period: 30 });
  });

  it('omits the barcode when qr_size is 0 (or null), and everything when exported is false', async () => {
    const e = engine();
    const base = { generate: true, issuer: 'I', account_name: 'a' };
    expect(Object.keys((await e.call('write', 'keys/a', { ...base, qr_size: 0 })).data ?? {})).toEqual(['url']);
    expect(Object.keys((await e.call('write', 'keys/b', { ...base, qr_size: null })).data ?? {})).toEqual(['url']);
    expect(await e.call('write', 'keys/c', { ...base, exported: false })).toEqual({});
    expect((await e.call('read', 'code/c')).data?.code).toMatch(/^\d{6}$/);
  });

  it('imports from a URL: issuer, account, algorithm, digits and period come from it', async () => {
    const e = engine();
    await e.call('write', 'keys/acme', {
      url: 'otpauth://totp/ACME%20Co:john.doe@email.com?secret=HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ&issuer=ACME%20Co&algorithm=SHA512&digits=8&period=45',
      issuer: 'ignored',
      account_name: 'ignored',
    });
    expect((await e.call('read', 'keys/acme')).data).toEqual({ account_name: 'john.doe@email.com', algorithm: 'SHA512', digits: 8, issuer: 'ACME Co', period: 45 });
    // The label's prefix is the issuer when the parameter is absent; without a prefix the
    // request's issuer stays, and the request's period/digits/algorithm fill what the URL lacks.
    await e.call('write', 'keys/label', { url: 'otpauth://totp/Google:test@gmail.com?secret=Y64VEVMBTSXCYIWRSHRNDZW62MPGVU2G' });
    expect((await e.call('read', 'keys/label')).data).toEqual({ account_name: 'test@gmail.com', algorithm: 'SHA1', digits: 6, issuer: 'Google', period: 30 });
    await e.call('write', 'keys/bare', { url: 'otpauth://totp/solo?secret=Y64VEVMBTSXCYIWRSHRNDZW62MPGVU2G', issuer: 'Mine', period: 60, digits: 8 });
    expect((await e.call('read', 'keys/bare')).data).toEqual({ account_name: 'solo', algorithm: 'SHA1', digits: 8, issuer: 'Mine', period: 60 });
  });

  it('imports a base32 key in any case, with or without padding and spaces, to the same codes', async () => {
    const e = engine(1111111109_000);
    const forms = ['GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 'gezdgnbvgy3tqojqgezdgnbvgy3tqojq', 'GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ'];
    for (const [i, key] of forms.entries()) await e.call('write', `keys/f${i}`, { key, digits: 8 });
    for (let i = 0; i < forms.length; i++) expect((await e.call('read', `code/f${i}`)).data).toEqual({ code: '07081804' });
    // "MZXW6YQ=" (padding) and "MZXW6YR" (unused low bits set, as Go's decoder accepts) are "foob".
    await e.call('write', 'keys/padded', { key: 'MZXW6YQ=' });
    await e.call('write', 'keys/lowbits', { key: 'MZXW6YR' });
    expect((await e.call('read', 'code/lowbits')).data).toEqual((await e.call('read', 'code/padded')).data);
  });

  it('lists keys, deletes them (with their used codes), and reads a missing key as 404', async () => {
    const e = engine();
    await expect(e.call('list', 'keys')).rejects.toMatchObject({ status: 404 });
    for (const name of ['b', 'a@x.org', 'c.d-e']) await e.call('write', `keys/${name}`, { key: b32(SEEDS.SHA1) });
    expect((await e.call('list', 'keys/')).data).toEqual({ keys: ['a@x.org', 'b', 'c.d-e'] });
    await e.call('write', 'code/b', { code: '123456' });
    expect([...e.storage.data.keys()]).toContain('used/b');
    expect(await e.call('delete', 'keys/b')).toEqual({});
    expect([...e.storage.data.keys()].sort()).toEqual(['key/a@x.org', 'key/c.d-e']);
    await expect(e.call('read', 'keys/b')).rejects.toMatchObject({ status: 404 });
    expect((await e.call('list', 'keys')).data).toEqual({ keys: ['a@x.org', 'c.d-e'] });
  });

  it('overwriting a key replaces it and forgets its used codes', async () => {
    const e = engine(59_000);
    await e.call('write', 'keys/k', { key: b32(SEEDS.SHA1), digits: 8 });
    expect((await e.call('write', 'code/k', { code: '94287082' })).data).toEqual({ valid: true });
    await e.call('write', 'keys/k', { key: b32(SEEDS.SHA1), digits: 8 });
    expect((await e.call('write', 'code/k', { code: '94287082' })).data).toEqual({ valid: true });
  });
});

describe('QR code', () => {
  /** The PNG's pixels as dark (true) / light. */
  function pixels(png: Uint8Array): { width: number; height: number; dark: (x: number, y: number) => boolean } {
    const img = decodePng(png);
    expect({ depth: img.depth, channels: img.channels }).toEqual({ depth: 1, channels: 1 });
    const rowBytes = Math.ceil(img.width / 8);
    return { width: img.width, height: img.height, dark: (x, y) => (img.data[y * rowBytes + (x >> 3)] & (0x80 >> (x & 7))) === 0 };
  }

  it.each([200, 100, 57, 413])('qr_size %i: a square PNG of that size whose modules are the QR code of the returned url', async (size) => {
    const e = engine();
    const res = await e.call('write', 'keys/q', { generate: true, issuer: 'Coffer', account_name: 'qr@example.com', qr_size: size });
    const png = fromBase64(String(res.data?.barcode))!;
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    // IHDR is the first chunk: width and height big-endian at bytes 16 and 20.
    const ihdr = new DataView(png.buffer, png.byteOffset);
    expect(String.fromCharCode(...png.subarray(12, 16))).toBe('IHDR');
    expect([ihdr.getUint32(16), ihdr.getUint32(20)]).toEqual([size, size]);

    const img = pixels(png);
    const matrix = qrcode.create(String(res.data?.url), { errorCorrectionLevel: 'M' }).modules;
    // The finder pattern's top-left corner is the first dark pixel; its top row is 7 modules wide.
    let x0 = -1;
    let y0 = -1;
    for (let y = 0; y < size && y0 < 0; y++) for (let x = 0; x < size; x++) if (img.dark(x, y)) { x0 = x; y0 = y; break; }
    let run = 0;
    while (img.dark(x0 + run, y0)) run++;
    expect(run % 7).toBe(0);
    const scale = run / 7;
    expect(scale).toBeGreaterThanOrEqual(1);
    const side = matrix.size * scale;
    expect(x0).toBe(y0);
    expect(x0 + side).toBeLessThanOrEqual(size);
    for (let r = 0; r < matrix.size; r++) {
      for (let c = 0; c < matrix.size; c++) {
        const [x, y] = [x0 + c * scale + (scale >> 1), y0 + r * scale + (scale >> 1)];
        if (img.dark(x, y) !== Boolean(matrix.get(r, c))) expect.fail(`module (${r}, ${c}) differs`);
      }
    }
    // Outside the symbol everything is light (the quiet zone, whole when the size allows it).
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const inside = x >= x0 && x < x0 + side && y >= y0 && y < y0 + side;
        if (!inside && img.dark(x, y)) expect.fail(`pixel (${x}, ${y}) outside the symbol is dark`);
      }
    }
    if (size >= (matrix.size + 8) * scale) expect(x0).toBeGreaterThanOrEqual(4 * scale);
  });
});

describe('code validation', () => {
  async function sha1Engine(now: number, skew?: number): Promise<Engine> {
    const e = engine(now);
    await e.call('write', 'keys/k', { key: b32(SEEDS.SHA1), digits: 8, ...(skew === undefined ? {} : { skew }) });
    return e;
  }
  // RFC codes of the SHA1 seed at consecutive 30 s steps around T=1111111109 (step 37037036).
  const stepCode = async (e: Engine, step: number): Promise<string> => {
    const saved = e.clock.now;
    e.clock.now = step * 30_000;
    const code = String((await e.call('read', 'code/k')).data?.code);
    e.clock.now = saved;
    return code;
  };

  it('accepts the previous and next step with skew 1 (the default), not two steps away', async () => {
    const e = await sha1Engine(1111111109_000);
    const step = 37037036;
    expect((await e.call('write', 'code/k', { code: await stepCode(e, step - 1) })).data).toEqual({ valid: true });
    expect((await e.call('write', 'code/k', { code: await stepCode(e, step + 1) })).data).toEqual({ valid: true });
    expect((await e.call('write', 'code/k', { code: await stepCode(e, step - 2) })).data).toEqual({ valid: false });
    expect((await e.call('write', 'code/k', { code: await stepCode(e, step + 2) })).data).toEqual({ valid: false });
    expect((await e.call('write', 'code/k', { code: ` ${await stepCode(e, step)}\n` })).data).toEqual({ valid: true });
  });

  it('accepts only the current step with skew 0', async () => {
    const e = await sha1Engine(1111111109_000, 0);
    expect((await e.call('write', 'code/k', { code: await stepCode(e, 37037035) })).data).toEqual({ valid: false });
    expect((await e.call('write', 'code/k', { code: '07081804' })).data).toEqual({ valid: true });
  });

  it('refuses wrong codes and codes of the wrong length', async () => {
    const e = await sha1Engine(1111111109_000);
    expect((await e.call('write', 'code/k', { code: '07081805' })).data).toEqual({ valid: false });
    expect((await e.call('write', 'code/k', { code: '081804' })).data).toEqual({ valid: false });
    expect((await e.call('write', 'code/k', { code: '007081804' })).data).toEqual({ valid: false });
    expect((await e.call('write', 'code/k', { code: 'abcdefgh' })).data).toEqual({ valid: false });
    // A number in the JSON body is its digits (so a code with a leading zero must be a string).
    e.clock.now = 1234567890_000;
    expect((await e.call('write', 'code/k', { code: 89005924 })).data).toEqual({ valid: true });
    e.clock.now = 1111111109_000;
    expect((await e.call('write', 'code/k', { code: 7081804 })).data).toEqual({ valid: false });
  });

  it('refuses a replay, across a restart too, until the code expires; then cleans it up', async () => {
    const e = await sha1Engine(1111111109_000);
    expect((await e.call('write', 'code/k', { code: '07081804' })).data).toEqual({ valid: true });
    await expectError(e.call('write', 'code/k', { code: '07081804' }), 400, 'code already used; wait until the next time period');
    // A wrong code of the right length is recorded as well (Vault does the same).
    expect((await e.call('write', 'code/k', { code: '11111111' })).data).toEqual({ valid: false });
    await expectError(e.call('write', 'code/k', { code: '11111111' }), 400, 'code already used; wait until the next time period');
    // Kept for period * (2 + skew) = 90 s, and the host was asked to sweep then.
    const until = 1111111109_000 + 90_000;
    expect(e.wakes).toContain(until);

    const restarted = engine(1111111109_000 + 89_000, e.storage);
    await expectError(restarted.call('write', 'code/k', { code: '07081804' }), 400, 'code already used; wait until the next time period');

    // Past expiry the code is simply too old; a new submission drops the expired entries.
    restarted.clock.now = until;
    expect((await restarted.call('write', 'code/k', { code: '07081804' })).data).toEqual({ valid: false });
    const record = JSON.parse(new TextDecoder().decode(e.storage.data.get('used/k')!));
    expect(record).toEqual({ codes: { '07081804': until + 90_000 } });
  });

  it('periodic work drops expired codes and says when the next one expires', async () => {
    const e = await sha1Engine(1111111109_000);
    await e.call('write', 'keys/other', { key: b32(SEEDS.SHA1), period: 60 });
    await e.call('write', 'code/k', { code: '07081804' });
    await e.call('write', 'code/other', { code: '123456' });
    const t = 1111111109_000;
    expect(await e.backend.periodic!(e.storage, t + 1000)).toBe(t + 90_000);
    expect(await e.backend.periodic!(e.storage, t + 90_000)).toBe(t + 180_000);
    expect(e.storage.data.has('used/k')).toBe(false);
    expect(e.storage.data.has('used/other')).toBe(true);
    expect(await e.backend.periodic!(e.storage, t + 180_000)).toBeNull();
    expect([...e.storage.data.keys()].filter((k) => k.startsWith('used/'))).toEqual([]);
  });
});

describe('bad input', () => {
  const gen = { generate: true, issuer: 'I', account_name: 'a' };
  const KEY = 'JBSWY3DPEHPK3PXP';
  it.each<[string, Record<string, unknown>, string]>([
    ['bad algorithm', { key: KEY, algorithm: 'MD5' }, 'the algorithm value is not valid'],
    ['null algorithm', { key: KEY, algorithm: null }, 'the algorithm value is not valid'],
    ['7 digits', { key: KEY, digits: 7 }, 'the digits value can only be 6 or 8'],
    ['null digits', { key: KEY, digits: null }, 'the digits value can only be 6 or 8'],
    ['skew 2', { key: KEY, skew: 2 }, 'the skew value must be 0 or 1'],
    ['skew -1', { key: KEY, skew: -1 }, 'the skew value must be 0 or 1'],
    ['period 0', { key: KEY, period: 0 }, 'the period value must be greater than zero'],
    ['null period', { key: KEY, period: null }, 'the period value must be greater than zero'],
    ['negative period', { key: KEY, period: '-30s' }, 'error converting input "-30s" for field "period": cannot provide negative value'],
    ['qr_size negative', { ...gen, qr_size: -1 }, 'the qr_size value must be greater than or equal to zero'],
    ['qr_size huge', { ...gen, qr_size: 5000 }, 'the qr_size value must be at most 4096'],
    ['qr_size too small', { ...gen, qr_size: 20 }, "the qr_size value is too small: this key's QR code needs at least 41 pixels"],
    ['key_size 0', { ...gen, key_size: 0 }, 'the key_size value must be greater than zero'],
    ['key_size null', { ...gen, key_size: null }, 'the key_size value must be greater than zero'],
    ['key_size huge', { ...gen, key_size: 1_000_000 }, 'the key_size value must be at most 1024'],
    ['QR code too big for the data', { ...gen, key_size: 1024, issuer: 'x'.repeat(800) }, "cannot make a QR code of the key's url: The amount of data is too big to be stored in a QR Code"],
    ['generate without issuer', { generate: true, account_name: 'a' }, 'the issuer value is required for generated keys'],
    ['generate with null issuer', { generate: true, account_name: 'a', issuer: null }, 'the issuer value is required for generated keys'],
    ['generate without account_name', { generate: true, issuer: 'I' }, 'the account_name value is required for generated keys'],
    ['generate with a key', { ...gen, key: KEY }, 'a key should not be passed if generate is true'],
    ['generate with a url', { ...gen, url: `otpauth://totp/a?secret=${KEY}` }, 'a url should not be passed if generate is true'],
    ['import without key or url', {}, 'the key value is required'],
    ['import of padding only', { key: '====' }, 'the key value is required'],
    ['bad base32 character', { key: 'JBSWY3DP1HPK' }, 'invalid key value: illegal base32 data at input byte 8'],
    ['bad base32 length', { key: 'JBSWY3DPE' }, 'invalid key value: 9 base32 characters do not make whole bytes'],
    ['padding inside the key', { key: 'JB=SWY3D' }, 'invalid key value: illegal base32 data at input byte 2'],
    ['url that is not a URL', { url: 'not a url' }, 'an error occurred while parsing url string: not a URL'],
    ['url of another scheme', { url: `https://totp/a?secret=${KEY}` }, 'an error occurred while parsing url string: the scheme is "https", not "otpauth"'],
    ['HOTP url', { url: `otpauth://hotp/a?secret=${KEY}&counter=1` }, 'an error occurred while parsing url string: the key type is "hotp", not "totp"'],
    ['url with bad percent-encoding', { url: `otpauth://totp/a%E0%A4%A?secret=${KEY}` }, 'an error occurred while parsing url string: the label is not valid percent-encoding'],
    ['url with a bad period', { url: `otpauth://totp/a?secret=${KEY}&period=thirty` }, 'an error occurred while parsing period value in url: "thirty" is not an integer'],
    ['url with bad digits', { url: `otpauth://totp/a?secret=${KEY}&digits=6.5` }, 'an error occurred while parsing digits value in url: "6.5" is not an integer'],
    ['url with 7 digits', { url: `otpauth://totp/a?secret=${KEY}&digits=7` }, 'the digits value can only be 6 or 8'],
    ['url with a bad algorithm', { url: `otpauth://totp/a?secret=${KEY}&algorithm=MD5` }, 'the algorithm value is not valid'],
    ['url without a secret', { url: 'otpauth://totp/I:a?issuer=I' }, 'the key value is required'],
    ['url with a bad secret', { url: 'otpauth://totp/I:a?secret=AB!D' }, 'invalid key value: illegal base32 data at input byte 2'],
    ['generate not a bool', { generate: 'maybe' }, 'error converting input "maybe" for field "generate": cannot parse "maybe" as a boolean'],
    ['digits not an int', { key: KEY, digits: 'six' }, 'error converting input "six" for field "digits": cannot parse "six" as an integer'],
  ])('keys: %s → 400', async (_, data, message) => {
    const e = engine();
    await expectError(e.call('write', 'keys/bad', data), 400, message);
    expect(e.storage.data.size).toBe(0);
  });

  it('code: unknown key, missing code → 400; a name outside the pattern is no route', async () => {
    const e = engine();
    await expectError(e.call('read', 'code/nope'), 400, 'unknown key: nope');
    await expectError(e.call('write', 'code/nope', { code: '123456' }), 400, 'unknown key: nope');
    await e.call('write', 'keys/k', { key: KEY });
    await expectError(e.call('write', 'code/k', {}), 400, 'the code value is required');
    await expectError(e.call('write', 'code/k', { code: null }), 400, 'the code value is required');
    await expectError(e.call('write', 'code/k', { code: '   ' }), 400, 'the code value is required');
    await expect(e.call('write', 'keys/-bad', { key: KEY })).rejects.toMatchObject({ status: 404 });
  });
});
