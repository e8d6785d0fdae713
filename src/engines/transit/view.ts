// The key read response (reference §6.7), also returned by create, config, rotate and trim.

import type { AsymmetricKey } from '../../crypto/transit/asymmetric';
import { ed25519PublicRaw, publicKeyPem } from '../../crypto/transit/key-encoding';
import { toBase64 } from '../../crypto/encoding';
import { formatRFC3339Nano } from '../../framework/duration';
import { isAsymmetric, publicKeyName, supportsDerivation, supportsEncryption, supportsSigning } from './key-types';
import { signingKey } from './material';
import type { KeyPolicy, KeyVersion } from './policy';

/** A version's public key as Vault shows it: raw base64 for ed25519, PKIX PEM (with newline) otherwise. */
export function shownPublicKey(key: AsymmetricKey): string {
  return key.type === 'ed25519' ? toBase64(ed25519PublicRaw(key)) : publicKeyPem(key);
}

async function versionView(p: KeyPolicy, v: KeyVersion, context: Uint8Array): Promise<unknown> {
  if (!isAsymmetric(p.type) || !v.asym) return Math.floor(v.created / 1000);
  let publicKey = '';
  // A derived key has no public key of its own, only one per context.
  if (!(p.derived && p.type === 'ed25519')) publicKey = shownPublicKey(v.asym);
  else if (context.length > 0 && v.key) publicKey = shownPublicKey(await signingKey(p, v, context));
  return {
    name: publicKeyName(p.type),
    public_key: publicKey,
    certificate_chain: (v.certificateChain ?? []).join('\n'),
    creation_time: formatRFC3339Nano(v.created),
    hybrid_public_key: '',
  };
}

export async function keyView(p: KeyPolicy, context: Uint8Array = new Uint8Array(0)): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {
    name: p.name,
    type: p.type,
    derived: p.derived,
    deletion_allowed: p.deletionAllowed,
    exportable: p.exportable,
    allow_plaintext_backup: p.allowPlaintextBackup,
    latest_version: p.latestVersion,
    min_available_version: p.minAvailableVersion,
    min_decryption_version: p.minDecryptionVersion,
    min_encryption_version: p.minEncryptionVersion,
    supports_encryption: supportsEncryption(p.type),
    supports_decryption: supportsEncryption(p.type),
    supports_derivation: supportsDerivation(p.type),
    supports_signing: supportsSigning(p.type),
    auto_rotate_period: p.autoRotatePeriod,
    imported_key: p.imported,
  };
  if (p.type === 'hmac') out.key_size = p.keySize;
  else {
    const keys: Record<string, unknown> = {};
    for (const [n, v] of [...p.versions].sort((a, b) => a[0] - b[0])) keys[n] = await versionView(p, v, context);
    out.keys = keys;
  }
  if (p.imported) out.imported_key_allow_rotation = p.allowRotation;
  if (p.backupInfo) out.backup_info = p.backupInfo;
  if (p.restoreInfo) out.restore_info = p.restoreInfo;
  if (p.derived) {
    out.kdf = p.kdf;
    if (p.kdf === 'hmac-sha256-counter') out.kdf_mode = 'hmac-sha256-counter';
    out.convergent_encryption = p.convergent;
    if (p.convergent) out.convergent_encryption_version = p.convergentVersion;
  }
  return out;
}
