// Which version an operation uses, and reading the version out of "vault:v<N>:..." strings.

import { badRequest } from '../../framework/errors';
import type { KeyPolicy, KeyVersion } from './policy';

export const TOO_OLD = 'ciphertext or signature version is disallowed by policy (too old)';

/** The version to encrypt/sign/HMAC with: 0 = latest; never below min_encryption_version. */
export function usableVersion(p: KeyPolicy, requested: number): { version: number; entry: KeyVersion } {
  let version = requested;
  if (version < 0) throw badRequest('key version cannot be negative');
  if (version === 0) version = p.latestVersion;
  else {
    if (p.minEncryptionVersion > 0 && version < p.minEncryptionVersion) {
      throw badRequest('requested version for encryption is less than the minimum encryption key version');
    }
    if (version > p.latestVersion) throw badRequest('requested version for encryption is higher than the latest key version');
  }
  const entry = p.versions.get(version);
  if (!entry) throw badRequest('requested version for encryption is not available');
  return { version, entry };
}

/**
 * Splits "<prefix><N><suffix><payload>" by the key's version template. `what` names the value in
 * messages ("ciphertext", "signature", "HMAC"); the version must lie in [min_decryption_version, latest].
 */
export function splitVersioned(
  template: string,
  p: KeyPolicy,
  value: string,
  what: string,
): { version: number; entry: KeyVersion; payload: string } {
  const at = template.indexOf('{{version}}');
  const head = at < 0 ? template : template.slice(0, at);
  const tail = at < 0 ? '' : template.slice(at + '{{version}}'.length);
  if (!value.startsWith(head)) throw badRequest(`invalid ${what}: no prefix`);
  const rest = value.slice(head.length);
  const m = /^(\d+)/.exec(rest);
  if (!m || !rest.slice(m[1].length).startsWith(tail)) throw badRequest(`invalid ${what}: version number could not be decoded`);
  let version = parseInt(m[1], 10);
  // Vault treats version 0 as 1 (ciphertexts from before versions were numbered from 1).
  if (version === 0) version = 1;
  if (version > p.latestVersion) throw badRequest(`invalid ${what}: version is too new`);
  if (version < p.minDecryptionVersion) throw badRequest(TOO_OLD);
  const entry = p.versions.get(version);
  if (!entry) throw badRequest(TOO_OLD);
  return { version, entry, payload: rest.slice(m[1].length + tail.length) };
}
