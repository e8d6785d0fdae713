import { describe, expect, it } from 'vitest';
import { toHex } from '../../../../src/crypto/encoding';
import { normalizeSerial, randomSerial, serialBytes, serialFromBytes, serialStorageKey } from '../../../../src/crypto/pki/serial';

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
