import { describe, expect, it } from 'vitest';
import { toHex } from '../../../../src/crypto/encoding';
import { normalizeSerial, randomSerial, serialBytes, serialFromBytes, serialStorageKey, timeOrderedSerial } from '../../../../src/crypto/pki/serial';

const LIMIT = 1n << 159n;

describe('randomSerial', () => {
  it('is colon lowercase hex of the minimal bytes, in [1, 2^159)', () => {
    const seen = new Set<string>();
    let short = 0;
    for (let i = 0; i < 2000; i++) {
      const s = randomSerial();
      expect(s).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2})*$/);
      const bytes = serialBytes(s);
      expect(bytes.length).toBeLessThanOrEqual(20);
      expect(bytes[0]).not.toBe(0); // minimal form: no leading zero byte
      const n = BigInt(`0x${toHex(bytes)}`);
      expect(n > 0n && n < LIMIT).toBe(true);
      if (bytes.length < 20) short++;
      seen.add(s);
    }
    expect(seen.size).toBe(2000);
    // the top byte is < 0x80 and zero 1 time in 128: some serials come out shorter than 20 bytes
    expect(short).toBeGreaterThan(0);
  });
});

describe('timeOrderedSerial', () => {
  it('is 20 bytes, positive, and begins with the time in ms', () => {
    const ms = Date.UTC(2026, 10, 27, 12, 0, 0, 123);
    const bytes = serialBytes(timeOrderedSerial(ms));
    expect(bytes.length).toBe(20);
    expect(bytes[0]).toBeGreaterThan(0);
    expect(bytes[0]).toBeLessThan(0x80);
    expect(Number(BigInt(`0x${toHex(bytes.subarray(0, 6))}`))).toBe(ms);
  });

  it('keeps 112 random bits: serials of one ms differ', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(timeOrderedSerial(1_800_000_000_000));
    expect(seen.size).toBe(2000);
    const tails = [...seen].map((s) => serialBytes(s).subarray(6));
    // every tail byte position takes many values: none is fixed
    for (let pos = 0; pos < 14; pos++) expect(new Set(tails.map((t) => t[pos])).size).toBeGreaterThan(200);
  });

  it('sorts in its stored form as its times do, across byte boundaries', () => {
    // 2^40 ms (2004), the first time whose top byte is not zero, to 2^47 - 1 (6429)
    const times = [1_099_511_627_776, 1_800_000_000_000, 1_800_000_000_255, 1_800_000_000_256, 2_199_023_255_552, 140_737_488_355_327];
    const keys = times.map((t) => serialStorageKey(timeOrderedSerial(t)));
    expect([...keys].sort()).toEqual(keys);
    expect(serialBytes(timeOrderedSerial(140_737_488_355_327))[0]).toBe(0x7f);
  });
});

describe('normalizeSerial', () => {
  it('accepts colon or hyphen form in any case and returns colon lowercase', () => {
    expect(normalizeSerial('39:DD:2e:90')).toBe('39:dd:2e:90');
    expect(normalizeSerial('39-dd-2E-90')).toBe('39:dd:2e:90');
    expect(normalizeSerial('  0a  ')).toBe('0a');
  });

  it('returns null for malformed input', () => {
    for (const bad of ['', 'zz:00', '3:dd', '39dd', '39::dd', '39:dd:', ':39', 'crl', '39 dd', '39:d']) {
      expect(normalizeSerial(bad), bad).toBeNull();
    }
  });
});

describe('conversions', () => {
  it('serialStorageKey uses hyphens', () => {
    expect(serialStorageKey('39:dd:2e')).toBe('39-dd-2e');
  });

  it('serialBytes / serialFromBytes round trip and drop leading zero bytes', () => {
    expect(Array.from(serialBytes('00:ff:01'))).toEqual([0, 255, 1]);
    expect(serialFromBytes(new Uint8Array([0, 0, 0x8f, 1]))).toBe('8f:01');
    expect(serialFromBytes(new Uint8Array([0]))).toBe('00');
    const s = randomSerial();
    expect(serialFromBytes(serialBytes(s))).toBe(s);
    expect(() => serialBytes('xy')).toThrow();
  });
});
