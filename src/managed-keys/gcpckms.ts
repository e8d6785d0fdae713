// The cloudckms (Vault: gcpckms) backend: one version of a Google Cloud KMS crypto key
// (projects/<project>/locations/<region>/keyRings/<key_ring>/cryptoKeys/<crypto_key>/
// cryptoKeyVersions/<crypto_key_version>), reached through the REST API with a service account.
//
// Cloud KMS signs digests (asymmetricSign) and decrypts (asymmetricDecrypt); it has no verify or
// asymmetric encrypt: both are done here with the version's public key, as Google intends. Every
// payload carries a CRC32C both ways, checked as Google asks. The version's algorithm fixes hash
// and padding, so requests for others are refused rather than answered with another signature.
// Finding, awaiting and generating the version: ./gcp-versions.

import { crc32c } from '@aws-crypto/crc32c';
import { fromBase64, toBase64, utf8 } from '../crypto/encoding';
import { verify as verifyLocally, type AsymmetricKey, type AsymmetricType } from '../crypto/transit/asymmetric';
import { hashLength, type HashName } from '../crypto/transit/hashes';
import { parsePublicKeyPem } from '../crypto/transit/key-encoding';
import { DIGEST_FIELDS, gcpAlgorithm, publicKeyInfo, type GcpAlgorithm } from './gcp-algorithms';
import { parseServiceAccount } from './gcp-auth';
import { isKmsError, kmsClient } from './gcp-rest';
import { createVersion, missing, untilEnabled, versionRef } from './gcp-versions';
import { ManagedKeyError, type BackendDeps, type ManagedKey, type ManagedKeyEntry, type PublicKeyInfo, type SignOptions } from './types';

const WEB_HASHES: Partial<Record<HashName, string>> = { sha1: 'SHA-1', 'sha2-256': 'SHA-256', 'sha2-384': 'SHA-384', 'sha2-512': 'SHA-512' };

interface PublicKeyDoc {
  pem?: string;
  algorithm?: string;
  pemCrc32c?: string | number;
  name?: string;
}

/** Google's int64 (a decimal string in JSON) as a number; null when absent or malformed. */
const int64 = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,20}$/.test(v) ? Number(v) : null);
const crc = (b: Uint8Array): string => String(crc32c(b));

export function gcpCkmsBackend(entry: ManagedKeyEntry, deps: BackendDeps): ManagedKey {
  if (entry.type !== 'cloudckms') throw new Error(`cloudckms backend given a ${entry.type} key`);
  const known = gcpAlgorithm(entry.config.algorithm);
  if (!known) throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${entry.config.algorithm} cannot be used by this server`);
  const alg: GcpAlgorithm = known;
  const kms = kmsClient(parseServiceAccount(entry.config.credentials), deps);
  const ref = versionRef(entry.config, kms, alg);
  let cached: { info: PublicKeyInfo; key: AsymmetricKey } | undefined;

  async function fetchPublicKey(): Promise<PublicKeyDoc> {
    try {
      return await kms.call<PublicKeyDoc>('GET', `${ref.name}/publicKey`);
    } catch (e) {
      if (isKmsError(e, 'NOT_FOUND')) return await missing(ref);
      if (!isKmsError(e, 'FAILED_PRECONDITION')) throw e;
    }
    // Not ENABLED: a version just created is generated in the background.
    await untilEnabled(ref);
    return await kms.call<PublicKeyDoc>('GET', `${ref.name}/publicKey`);
  }

  async function publicKey(): Promise<{ info: PublicKeyInfo; key: AsymmetricKey }> {
    if (cached) return cached;
    const doc = await fetchPublicKey();
    if (typeof doc.pem !== 'string' || !doc.name?.endsWith(ref.tail)) throw new ManagedKeyError(502, `Google Cloud KMS answered GetPublicKey of ${ref.name} without its PEM`);
    if (int64(doc.pemCrc32c) !== crc32c(utf8(doc.pem))) throw new ManagedKeyError(502, `the public key of ${ref.name} was corrupted on its way from Google Cloud KMS (CRC32C mismatch)`);
    if (doc.algorithm !== alg.name) {
      throw new ManagedKeyError(400, `Google Cloud KMS key version ${ref.name} is ${doc.algorithm ?? 'of an unknown algorithm'}, but the managed key's algorithm is ${alg.name}`);
    }
    let key: AsymmetricKey;
    try {
      key = await parsePublicKeyPem(asymmetricType(alg), doc.pem);
    } catch (e) {
      throw new ManagedKeyError(502, `the public key of ${ref.name} cannot be used: ${e instanceof Error ? e.message : String(e)}`);
    }
    return (cached = { info: publicKeyInfo(alg, doc.pem), key });
  }

  /** Refuses what the version's algorithm does not do (Cloud KMS fixes hash and padding). */
  function checkSigning(opts: SignOptions, digestLength: number): void {
    if (alg.purpose !== 'ASYMMETRIC_SIGN') throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${alg.name} decrypts: it cannot sign or verify`);
    if (opts.hash !== alg.hash) throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${alg.name} signs ${alg.hash} digests only, not ${opts.hash}`);
    if (alg.keyType === 'ec' && opts.pss) throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${alg.name} is ECDSA: PSS applies to RSA keys only`);
    if (alg.padding === 'pss' && !opts.pss) throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${alg.name} signs with RSA-PSS only: PKCS#1 v1.5 was asked`);
    if (alg.padding === 'pkcs1' && opts.pss) throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${alg.name} signs with PKCS#1 v1.5 only: PSS was asked`);
    if (opts.pss && opts.saltLength !== undefined && opts.saltLength !== hashLength(alg.hash)) {
      throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${alg.name} uses a PSS salt of ${hashLength(alg.hash)} bytes (the digest's length), not ${opts.saltLength}`);
    }
    if (digestLength !== hashLength(alg.hash)) throw new ManagedKeyError(400, `a ${alg.hash} digest is ${hashLength(alg.hash)} bytes, not ${digestLength}`);
  }

  function checkOaep(hash: HashName): void {
    if (alg.padding !== 'oaep') throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${alg.name} signs: encryption needs an RSA_DECRYPT_OAEP_* key`);
    if (hash !== alg.hash) throw new ManagedKeyError(400, `Google Cloud KMS algorithm ${alg.name} uses OAEP with ${alg.hash} only, not ${hash}`);
  }

  /** Decodes a base64 payload whose CRC32C Google sent along; a 502 when it was corrupted. */
  function checked(b64: string | undefined, sum: unknown, what: string): Uint8Array {
    const bytes = fromBase64(b64 ?? '');
    if (!bytes) throw new ManagedKeyError(502, `Google Cloud KMS answered with a malformed ${what}`);
    if (int64(sum) !== crc32c(bytes)) throw new ManagedKeyError(502, `the ${what} from Google Cloud KMS was corrupted on its way (CRC32C mismatch)`);
    return bytes;
  }

  return {
    publicKey: async () => (await publicKey()).info,

    async generate() {
      await createVersion(ref);
      await untilEnabled(ref);
      cached = undefined;
      return (await publicKey()).info;
    },

    async sign(digest, opts) {
      checkSigning(opts, digest.length);
      const field = DIGEST_FIELDS[alg.hash]!;
      const r = await kms.call<{ signature?: string; signatureCrc32c?: string; verifiedDigestCrc32c?: boolean; name?: string }>('POST', `${ref.name}:asymmetricSign`, {
        digest: { [field]: toBase64(digest) },
        digestCrc32c: crc(digest),
      });
      if (r.verifiedDigestCrc32c !== true) throw new ManagedKeyError(502, 'Google Cloud KMS did not confirm the CRC32C of the digest it signed');
      if (!r.name?.endsWith(ref.tail)) throw new ManagedKeyError(502, `Google Cloud KMS signed with ${r.name ?? 'an unnamed key'} instead of ${ref.name}`);
      // ECDSA signatures come DER-encoded, as ManagedKey promises.
      return checked(r.signature, r.signatureCrc32c, 'signature');
    },

    async verify(digest, signature, opts) {
      checkSigning(opts, digest.length);
      const { key } = await publicKey();
      return await verifyLocally(key, digest, signature, {
        hash: alg.hash,
        prehashed: true,
        signatureAlgorithm: opts.pss ? 'pss' : 'pkcs1v15',
        saltLength: hashLength(alg.hash),
        marshaling: 'asn1',
      });
    },

    async encrypt(plaintext, opts) {
      checkOaep(opts.hash);
      const { key } = await publicKey();
      const web = await crypto.subtle.importKey('spki', key.publicKey, { name: 'RSA-OAEP', hash: WEB_HASHES[alg.hash]! }, false, ['encrypt']);
      try {
        return new Uint8Array(await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, web, plaintext));
      } catch {
        throw new ManagedKeyError(400, `the plaintext is too long for RSA-OAEP with ${alg.name} (${plaintext.length} bytes)`);
      }
    },

    async decrypt(ciphertext, opts) {
      checkOaep(opts.hash);
      const r = await kms.call<{ plaintext?: string; plaintextCrc32c?: string; verifiedCiphertextCrc32c?: boolean }>('POST', `${ref.name}:asymmetricDecrypt`, {
        ciphertext: toBase64(ciphertext),
        ciphertextCrc32c: crc(ciphertext),
      });
      if (r.verifiedCiphertextCrc32c !== true) throw new ManagedKeyError(502, 'Google Cloud KMS did not confirm the CRC32C of the ciphertext it decrypted');
      // An empty plaintext is left out of the JSON (proto3 default).
      return checked(r.plaintext ?? '', r.plaintextCrc32c, 'plaintext');
    },
  };
}

function asymmetricType(a: GcpAlgorithm): AsymmetricType {
  if (a.keyType === 'rsa') return `rsa-${a.bits}` as AsymmetricType;
  return a.curve === 'P-384' ? 'ecdsa-p384' : 'ecdsa-p256';
}
