// PEM armour in Go's layout, and decoding that reads every block as Go's pem.Decode does.
import { describe, expect, it } from 'vitest';
import { pemBlocks, toPem } from '../../../src/crypto/pem';

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => i);

describe('PEM', () => {
  it('writes 64-character lines and a trailing newline, and reads its own output back', () => {
    const text = toPem('PUBLIC KEY', bytes(100));
    const lines = text.split('\n');
    expect(lines[0]).toBe('-----BEGIN PUBLIC KEY-----');
    expect(lines.slice(1, -2).map((l) => l.length)).toEqual([64, 64, 8]);
    expect(text.endsWith('-----END PUBLIC KEY-----\n')).toBe(true);
    expect(pemBlocks(text)).toEqual([{ label: 'PUBLIC KEY', der: bytes(100) }]);
  });

  it('reads every block in order, filters by label, skips headers and undecodable bodies', () => {
    const withHeader = '-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAAEC\n-----END RSA PRIVATE KEY-----\n';
    const broken = '-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n';
    const text = `junk\n${withHeader}${broken}${toPem('CERTIFICATE', bytes(3))}${toPem('CERTIFICATE', bytes(5))}`;
    expect(pemBlocks(text).map((b) => b.label)).toEqual(['RSA PRIVATE KEY', 'CERTIFICATE', 'CERTIFICATE']);
    expect(pemBlocks(text)[0].der).toEqual(bytes(3));
    expect(pemBlocks(text, 'CERTIFICATE').map((b) => b.der.length)).toEqual([3, 5]);
    expect(pemBlocks('no pem here')).toEqual([]);
  });
});
