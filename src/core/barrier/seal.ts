// Seals protect the root key. The default "static" seal uses a 256-bit key from the Worker secret
// SEAL_KEY. SEAL_TYPE=pkcs11 chooses an HSM key through the PKCS#11 bridge instead, and
// SEAL_TYPE=awskms / azurekeyvault / gcpckms a cloud KMS key (src/managed-keys/seal.ts,
// structurally the same interface; durable-objects/system.ts chooses).

import { aesGcmOpen, aesGcmSeal } from '../../crypto/aead';
import { fromBase64, fromHex, fromUtf8, utf8 } from '../../crypto/encoding';

export interface Seal {
  /** Reported as the seal type in sys/seal-status. */
  readonly type: string;
  encrypt(plaintext: Uint8Array, context: string): Promise<Uint8Array>;
  /** Throws SealError when the blob was not made by this seal for this context. */
  decrypt(blob: Uint8Array, context: string): Promise<Uint8Array>;
}

export class SealError extends Error {}

export class StaticKeySeal implements Seal {
  readonly type = 'static';

  constructor(private readonly key: Uint8Array) {
    if (key.length !== 32) throw new SealError('the seal key must be 32 bytes');
  }

  encrypt(plaintext: Uint8Array, context: string): Promise<Uint8Array> {
    return aesGcmSeal(this.key, plaintext, utf8(`coffer-seal:${context}`));
  }

  async decrypt(blob: Uint8Array, context: string): Promise<Uint8Array> {
    const plain = await aesGcmOpen(this.key, blob, utf8(`coffer-seal:${context}`));
    if (plain === null) {
      const other = otherSealType(blob);
      if (other) throw new SealError(`the stored root key was sealed by the ${other} seal, not the static one: set SEAL_TYPE=${other} (migrating between seal types is not supported)`);
      throw new SealError('the seal key cannot decrypt the stored root key (is SEAL_KEY the key this cluster was initialised with?)');
    }
    return plain;
  }
}

/** The type of a blob made by another seal: those (the managed-key seals') are JSON beginning {"seal":"<type>". */
function otherSealType(blob: Uint8Array): string | null {
  const head = /^\{"seal":"([a-z0-9]+)"/.exec(fromUtf8(blob.subarray(0, 32)));
  return head ? head[1] : null;
}

/** Parses SEAL_KEY (64 hex characters or base64 of 32 bytes). Returns null when unset. */
export function sealFromSecret(secret: string | undefined): Seal | null {
  if (secret === undefined || secret.trim() === '') return null;
  const s = secret.trim();
  const key = (s.length === 64 ? fromHex(s) : null) ?? fromBase64(s);
  if (!key || key.length !== 32) {
    throw new SealError('SEAL_KEY must be 32 bytes encoded as 64 hex characters or base64');
  }
  return new StaticKeySeal(key);
}
