// PEM armour, in Go's encoding/pem layout (64-character lines, trailing newline), so exports match
// Vault's byte for byte. Decoding reads every block, skips header lines ("Proc-Type: ..."), and
// leaves out blocks whose body is not base64.

import { fromBase64, toBase64 } from './encoding';

export function toPem(label: string, der: Uint8Array | ArrayBuffer): string {
  const lines = toBase64(der instanceof Uint8Array ? der : new Uint8Array(der)).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.map((l) => `${l}\n`).join('')}-----END ${label}-----\n`;
}

export interface PemBlock {
  label: string;
  der: Uint8Array;
}

/** The PEM blocks of a text, in order (only those labelled `label`, when given). */
export function pemBlocks(text: string, label?: string): PemBlock[] {
  const out: PemBlock[] = [];
  for (const m of text.matchAll(/-----BEGIN ([^\n-]*)-----\r?\n([\s\S]*?)-----END \1-----/g)) {
    if (label !== undefined && m[1] !== label) continue;
    const body = m[2]
      .split(/\r?\n/)
      .filter((line) => !line.includes(':'))
      .join('')
      .replace(/\s+/g, '');
    const der = fromBase64(body);
    if (der) out.push({ label: m[1], der });
  }
  return out;
}
