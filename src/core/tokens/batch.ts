// Batch tokens carry their own entry, encrypted under the barrier keyring, and are never stored:
// "hvb." + base64url(term (4 bytes) | AES-256-GCM(nonce | entry JSON | tag)). Any object holding
// the keyring can validate one; rotation keeps old terms readable, so they stay valid.

import { aesGcmOpen, aesGcmSeal } from '../../crypto/aead';
import { concatBytes, fromBase64, fromUtf8, toBase64Url, utf8 } from '../../crypto/encoding';
import type { KeyringSource } from '../barrier/barrier';
import type { Keyring } from '../barrier/keyring';
import { BATCH_TOKEN_PREFIX, type TokenEntry } from './entry';

const AAD = utf8('coffer:batch-token');

export async function encodeBatchToken(entry: TokenEntry, keyring: Keyring): Promise<string> {
  const term = keyring.active();
  const header = new Uint8Array(4);
  new DataView(header.buffer).setUint32(0, term.term);
  const sealed = await aesGcmSeal(term.key, utf8(JSON.stringify(entry)), AAD);
  return BATCH_TOKEN_PREFIX + toBase64Url(concatBytes(header, sealed));
}

/** The entry inside a batch token, or null when it is not one of ours (or was tampered with). */
export async function decodeBatchToken(token: string, keys: KeyringSource): Promise<TokenEntry | null> {
  if (!token.startsWith(BATCH_TOKEN_PREFIX)) return null;
  const raw = fromBase64(token.slice(BATCH_TOKEN_PREFIX.length).replace(/-/g, '+').replace(/_/g, '/'));
  if (!raw || raw.length < 4 + 12 + 16) return null;
  const termNo = new DataView(raw.buffer, raw.byteOffset, 4).getUint32(0);
  const term = (await keys.get()).term(termNo) ?? (await keys.refresh()).term(termNo);
  if (!term) return null;
  const plain = await aesGcmOpen(term.key, raw.subarray(4), AAD);
  return plain ? (JSON.parse(fromUtf8(plain)) as TokenEntry) : null;
}
