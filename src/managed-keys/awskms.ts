// The cloudakms (Vault: awskms) backend: an asymmetric AWS KMS key named by kms_key (key id, key
// ARN or alias/<name>), reached with the entry's access key over KMS's JSON API (./awskms-client).
// Digests are signed at KMS (MessageType DIGEST), which adds the DigestInfo for PKCS#1 v1.5 and
// answers ECDSA as DER; the public key comes from GetPublicKey. A generated key is created with
// CreateKey and named by pointing the alias at it: the alias is what the entry keeps using.

import { fromBase64, toBase64 } from '../crypto/encoding';
import { CryptoInputError } from '../crypto/errors';
import { publicKeyInfo } from '../crypto/pki/keys';
import { toPem } from '../crypto/pem';
import { KmsCallError, KmsClient } from './awskms-client';
import { configuredKeySpec, encryptionAlgorithm, generatedKeyUsage, signingAlgorithm, specKey, usageMismatch } from './awskms-specs';
import { ManagedKeyError, ManagedKeyMissing, type AwsKmsConfig, type BackendDeps, type ManagedKey, type ManagedKeyEntry, type PublicKeyInfo } from './types';

interface KeyMetadata {
  KeyId?: string;
  Arn?: string;
  KeySpec?: string;
  CustomerMasterKeySpec?: string;
  KeyUsage?: string;
  KeyState?: string;
  Enabled?: boolean;
}

interface PublicKeyAnswer {
  KeyId?: string;
  PublicKey?: string;
  KeySpec?: string;
  CustomerMasterKeySpec?: string;
  KeyUsage?: string;
}

const CURVE_BITS: Record<string, number> = { 'P-256': 256, 'P-384': 384, 'P-521': 521 };

/** What a key state other than Enabled asks of the operator. */
const STATE_HINTS: Record<string, string> = {
  Disabled: 'it cannot be used until it is enabled',
  PendingDeletion: 'it cannot be used unless its deletion is cancelled and it is enabled',
};

export function awsKmsBackend(entry: ManagedKeyEntry, deps: BackendDeps): ManagedKey {
  if (entry.type !== 'cloudakms') throw new Error(`awskms backend given a ${entry.type} key`);
  const config: AwsKmsConfig = entry.config;
  const kms = new KmsClient({ accessKeyId: config.access_key, secretAccessKey: config.secret_key, region: config.region, endpoint: config.endpoint, fetch: deps.fetch });
  const wantedSpec = configuredKeySpec(config);
  const keyRef = config.kms_key;

  /** Calls KMS; a key it does not know (NotFoundException) is ManagedKeyMissing, which the guards may generate. */
  async function call<T>(operation: string, body: Record<string, unknown>): Promise<T> {
    try {
      return await kms.call<T>(operation, body);
    } catch (e) {
      if (e instanceof KmsCallError && e.code === 'NotFoundException') throw new ManagedKeyMissing(`${e.message} (kms_key ${JSON.stringify(keyRef)} in ${config.region})`);
      throw e;
    }
  }

  const describe = async (ref: string): Promise<Required<Pick<KeyMetadata, 'KeyId' | 'Arn'>> & KeyMetadata> => {
    const meta = (await call<{ KeyMetadata?: KeyMetadata }>('DescribeKey', { KeyId: ref })).KeyMetadata;
    if (!meta?.KeyId || !meta.Arn) throw new ManagedKeyError(502, 'AWS KMS answered DescribeKey without KeyMetadata');
    return meta as Required<Pick<KeyMetadata, 'KeyId' | 'Arn'>> & KeyMetadata;
  };

  /** Refuses a key that is not usable, or not the kind the configuration describes. */
  function checkKey(arn: string, meta: { KeySpec?: string; CustomerMasterKeySpec?: string; KeyUsage?: string; KeyState?: string }): void {
    const spec = meta.KeySpec ?? meta.CustomerMasterKeySpec ?? '';
    if (meta.KeyState !== undefined && meta.KeyState !== 'Enabled') {
      throw new ManagedKeyError(400, `AWS KMS key ${arn} is ${meta.KeyState}: ${STATE_HINTS[meta.KeyState] ?? 'it cannot be used in that state'}`);
    }
    if (!specKey(spec)) throw new ManagedKeyError(400, `AWS KMS key ${arn} is a ${spec || 'key of unknown spec'} key: managed keys use RSA_2048/3072/4096 or ECC_NIST_P256/P384/P521 keys`);
    if (spec !== wantedSpec) {
      const asked = config.key_type === 'RSA' ? `key_type RSA, key_bits ${config.key_bits}` : `key_type ECDSA, curve ${config.curve}`;
      throw new ManagedKeyError(400, `AWS KMS key ${arn} is ${spec}, but the managed key is configured for ${wantedSpec} (${asked})`);
    }
    const mismatch = usageMismatch(meta.KeyUsage ?? '', entry.usages);
    if (mismatch) throw new ManagedKeyError(400, `AWS KMS key ${arn} cannot serve managed key ${JSON.stringify(entry.name)}: ${mismatch}`);
  }

  /** GetPublicKey of a key, as PEM; the SubjectPublicKeyInfo must be the key its KeySpec says. */
  async function publicKeyOf(ref: string): Promise<PublicKeyInfo> {
    const answer = await call<PublicKeyAnswer>('GetPublicKey', { KeyId: ref });
    const der = typeof answer.PublicKey === 'string' ? fromBase64(answer.PublicKey) : null;
    if (!der) throw new ManagedKeyError(502, 'AWS KMS answered GetPublicKey without a public key');
    const arn = answer.KeyId ?? ref;
    checkKey(arn, answer);
    const shape = specKey(answer.KeySpec ?? answer.CustomerMasterKeySpec ?? '')!;
    let found: { type: string; bits: number };
    try {
      found = publicKeyInfo(der);
    } catch (e) {
      if (e instanceof CryptoInputError) throw new ManagedKeyError(502, `AWS KMS answered GetPublicKey with a public key that cannot be read: ${e.message}`);
      throw e;
    }
    const expectedBits = shape.keyType === 'rsa' ? shape.bits : CURVE_BITS[shape.curve!];
    if (found.type !== shape.keyType || found.bits !== expectedBits) {
      throw new ManagedKeyError(502, `AWS KMS answered GetPublicKey for ${arn} with a ${found.type} ${found.bits}-bit key, not the ${answer.KeySpec} key it describes`);
    }
    return { pem: toPem('PUBLIC KEY', der), ...shape };
  }

  const bytes = (b64: unknown, operation: string, member: string): Uint8Array => {
    const out = typeof b64 === 'string' ? fromBase64(b64) : null;
    if (!out) throw new ManagedKeyError(502, `AWS KMS answered ${operation} without a valid ${member}`);
    return out;
  };

  /** Schedules the deletion of a key made by a generate that could not name it (best effort, the shortest window). */
  const discard = (keyId: string) => kms.call('ScheduleKeyDeletion', { KeyId: keyId, PendingWindowInDays: 7 }).catch(() => undefined);

  const publicKey = async (): Promise<PublicKeyInfo> => {
    const meta = await describe(keyRef);
    checkKey(meta.Arn, meta);
    return await publicKeyOf(meta.Arn);
  };

  return {
    publicKey,

    async generate() {
      if (!keyRef.startsWith('alias/')) {
        throw new ManagedKeyError(
          400,
          `AWS KMS assigns key ids itself: kms_key ${JSON.stringify(keyRef)} cannot be created; to let allow_generate_key create the key, set kms_key to an alias ("alias/<name>") that names it`,
        );
      }
      // The caller checked allow_replace_key (./guard) before replacing: an existing alias is moved to the new key.
      const existed = await describe(keyRef).then(
        () => true,
        (e: unknown) => {
          if (e instanceof ManagedKeyMissing) return false;
          throw e;
        },
      );
      const created = await kms.call<{ KeyMetadata?: KeyMetadata }>('CreateKey', {
        KeySpec: wantedSpec,
        KeyUsage: generatedKeyUsage(config, entry.usages),
        Description: `Coffer managed key ${JSON.stringify(entry.name)} (${entry.uuid})`,
      });
      const keyId = created.KeyMetadata?.KeyId;
      if (!keyId) throw new ManagedKeyError(502, 'AWS KMS answered CreateKey without a KeyId');
      try {
        await kms.call(existed ? 'UpdateAlias' : 'CreateAlias', { AliasName: keyRef, TargetKeyId: keyId });
      } catch (e) {
        await discard(keyId);
        // Another generate named its key first: that key is the managed key's now.
        if (e instanceof KmsCallError && e.code === 'AlreadyExistsException' && !existed) return await publicKey();
        throw e;
      }
      return await publicKeyOf(keyId);
    },

    async sign(digest, opts) {
      const SigningAlgorithm = signingAlgorithm(config, opts);
      const answer = await call<{ Signature?: string }>('Sign', { KeyId: keyRef, Message: toBase64(digest), MessageType: 'DIGEST', SigningAlgorithm });
      return bytes(answer.Signature, 'Sign', 'Signature');
    },

    async verify(digest, signature, opts) {
      const SigningAlgorithm = signingAlgorithm(config, opts);
      try {
        const answer = await call<{ SignatureValid?: boolean }>('Verify', { KeyId: keyRef, Message: toBase64(digest), MessageType: 'DIGEST', Signature: toBase64(signature), SigningAlgorithm });
        return answer.SignatureValid === true;
      } catch (e) {
        // KMS answers an invalid signature with an error rather than SignatureValid: false.
        if (e instanceof KmsCallError && e.code === 'KMSInvalidSignatureException') return false;
        throw e;
      }
    },

    async encrypt(plaintext, opts) {
      const EncryptionAlgorithm = encryptionAlgorithm(config, opts.hash);
      const answer = await call<{ CiphertextBlob?: string }>('Encrypt', { KeyId: keyRef, Plaintext: toBase64(plaintext), EncryptionAlgorithm });
      return bytes(answer.CiphertextBlob, 'Encrypt', 'CiphertextBlob');
    },

    async decrypt(ciphertext, opts) {
      const EncryptionAlgorithm = encryptionAlgorithm(config, opts.hash);
      const answer = await call<{ Plaintext?: string }>('Decrypt', { KeyId: keyRef, CiphertextBlob: toBase64(ciphertext), EncryptionAlgorithm });
      return bytes(answer.Plaintext, 'Decrypt', 'Plaintext');
    },
  };
}
