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

/** Each BEGIN/END block of a text, in order, with where it ends; `der` is null when its body is not base64. */
export function* pemMatches(text: string): Generator<{ label: string; der: Uint8Array | null; end: number }> {
  for (const m of text.matchAll(/-----BEGIN ([^\n-]*)-----\r?\n([\s\S]*?)-----END \1-----/g)) {
    const body = m[2]
      .split(/\r?\n/)
      .filter((line) => !line.includes(':'))
      .join('')
      .replace(/\s+/g, '');
    yield { label: m[1], der: fromBase64(body), end: m.index + m[0].length };
  }
}

/** The PEM blocks of a text, in order (only those labelled `label`, when given). */
export function pemBlocks(text: string, label?: string): PemBlock[] {
  const out: PemBlock[] = [];
  for (const b of pemMatches(text)) {
    if (b.der && (label === undefined || b.label === label)) out.push({ label: b.label, der: b.der });
  }
  return out;
}
