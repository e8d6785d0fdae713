// Key Vault's key material and algorithm names: the JSON Web Key of a key bundle as a PEM public key
// (WebCrypto imports the JWK and exports SPKI), the JWS algorithm for a signature request, and
// ECDSA signatures between Key Vault's raw r‖s and the ASN.1 DER the ManagedKey interface speaks.

import { fromBase64Url } from '../crypto/encoding';
import { toPem } from '../crypto/pem';
import { ecdsaDerFromRaw } from '../crypto/ecdsa-der';
import { AsnEcSignatureFormatter } from '../crypto/pki/x509';
import { hashLength, type HashName } from '../crypto/transit/hashes';
import { ManagedKeyError, type PublicKeyInfo, type SignOptions } from './types';

/** A key bundle as Key Vault returns it (GET /keys/<n>, POST /keys/<n>/create). */
export interface KeyBundle {
  key?: { kid?: string; kty?: string; key_ops?: string[]; n?: string; e?: string; crv?: string; x?: string; y?: string };
  attributes?: { enabled?: boolean; nbf?: number; exp?: number };
}

export interface AzureKey {
  /** The key version's identifier (…/keys/<name>/<version>). */
  kid: string;
  version: string;
  info: PublicKeyInfo;
}

type Curve = NonNullable<PublicKeyInfo['curve']>;
const CURVES: readonly Curve[] = ['P-256', 'P-384', 'P-521'];
const RSA_TYPES = ['RSA', 'RSA-HSM'];
const EC_TYPES = ['EC', 'EC-HSM'];

/** The bundle's key version and public key; a 400 for a disabled key or one that cannot sign. */
export async function keyFromBundle(bundle: KeyBundle, name: string): Promise<AzureKey> {
  const jwk = bundle.key;
  const kid = jwk?.kid ?? '';
  const version = kid.split('?')[0].split('/').filter(Boolean).pop() ?? '';
  if (!jwk || !kid || !version) throw new ManagedKeyError(502, `Azure Key Vault answered for key ${JSON.stringify(name)} without a key identifier`);
  if (bundle.attributes?.enabled === false) throw new ManagedKeyError(400, `the Azure Key Vault key ${JSON.stringify(name)} (version ${version}) is disabled`);
  const kty = jwk.kty ?? '';
  let info: PublicKeyInfo;
  if (RSA_TYPES.includes(kty)) info = await rsaInfo(jwk.n, jwk.e, name);
  else if (EC_TYPES.includes(kty)) info = await ecInfo(jwk.crv, jwk.x, jwk.y, name);
  else throw new ManagedKeyError(400, `the Azure Key Vault key ${JSON.stringify(name)} is of type ${JSON.stringify(kty)}: only RSA and EC keys (P-256, P-384, P-521) can be used`);
  return { kid, version, info };
}

async function spkiPem(jwk: JsonWebKey, alg: SubtleCryptoImportKeyAlgorithm, name: string): Promise<string> {
  try {
    const key = await crypto.subtle.importKey('jwk', jwk, alg, true, ['verify']);
    return toPem('PUBLIC KEY', new Uint8Array((await crypto.subtle.exportKey('spki', key)) as ArrayBuffer));
  } catch (e) {
    throw new ManagedKeyError(502, `Azure Key Vault answered with a public key for ${JSON.stringify(name)} that cannot be read: ${(e as Error).message}`);
  }
}

async function rsaInfo(n: string | undefined, e: string | undefined, name: string): Promise<PublicKeyInfo> {
  const modulus = n ? fromBase64Url(n) : null;
  if (!modulus || !e) throw new ManagedKeyError(502, `Azure Key Vault answered with an RSA key for ${JSON.stringify(name)} without its modulus and exponent`);
  const pem = await spkiPem({ kty: 'RSA', n, e, ext: true }, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, name);
  let i = 0;
  while (i < modulus.length && modulus[i] === 0) i++;
  const bits = i === modulus.length ? 0 : (modulus.length - i - 1) * 8 + (32 - Math.clz32(modulus[i]));
  return { pem, keyType: 'rsa', bits };
}

async function ecInfo(crv: string | undefined, x: string | undefined, y: string | undefined, name: string): Promise<PublicKeyInfo> {
  const curve = CURVES.find((c) => c === crv);
  if (!curve) throw new ManagedKeyError(400, `the Azure Key Vault key ${JSON.stringify(name)} is on curve ${JSON.stringify(crv ?? '')}: only P-256, P-384 and P-521 can be used`);
  if (!x || !y) throw new ManagedKeyError(502, `Azure Key Vault answered with an EC key for ${JSON.stringify(name)} without its coordinates`);
  const pem = await spkiPem({ kty: 'EC', crv: curve, x, y, ext: true }, { name: 'ECDSA', namedCurve: curve }, name);
  return { pem, keyType: 'ec', curve };
}

const SHA2_BITS: Partial<Record<HashName, '256' | '384' | '512'>> = { 'sha2-256': '256', 'sha2-384': '384', 'sha2-512': '512' };
/** Each curve's one JWS algorithm (Key Vault pairs ES256 with P-256, and so on). */
const EC_HASH: Record<Curve, HashName> = { 'P-256': 'sha2-256', 'P-384': 'sha2-384', 'P-521': 'sha2-512' };

/** The JWS algorithm Key Vault signs `digest` with: RS*, PS* (salt = hash length) or ES*; 400 for what it cannot do. */
export function signAlgorithm(info: PublicKeyInfo, digest: Uint8Array, opts: SignOptions): string {
  const bits = SHA2_BITS[opts.hash];
  if (!bits) throw new ManagedKeyError(400, `Azure Key Vault signs only SHA-2 digests (sha2-256, sha2-384, sha2-512), not ${opts.hash}`);
  if (digest.length !== hashLength(opts.hash)) throw new ManagedKeyError(400, `a ${opts.hash} digest is ${hashLength(opts.hash)} bytes, not ${digest.length}`);
  if (info.keyType === 'ec') {
    if (opts.pss) throw new ManagedKeyError(400, 'PSS applies only to RSA keys');
    const curve = info.curve ?? 'P-256';
    if (EC_HASH[curve] !== opts.hash) throw new ManagedKeyError(400, `Azure Key Vault signs with a ${curve} key only ${EC_HASH[curve]} digests (ES${SHA2_BITS[EC_HASH[curve]]}), not ${opts.hash}`);
    return `ES${bits}`;
  }
  if (!opts.pss) return `RS${bits}`;
  if (opts.saltLength !== undefined && opts.saltLength !== hashLength(opts.hash)) {
    throw new ManagedKeyError(400, `Azure Key Vault's PSS signatures use a salt as long as the hash (${hashLength(opts.hash)} bytes), not ${opts.saltLength}`);
  }
  return `PS${bits}`;
}

/** RSA-OAEP's Key Vault name for the hash (OAEP and MGF1 alike). */
export function oaepAlgorithm(info: PublicKeyInfo, hash: HashName): string {
  if (info.keyType !== 'rsa') throw new ManagedKeyError(400, 'only RSA keys can encrypt and decrypt');
  if (hash === 'sha1') return 'RSA-OAEP';
  if (hash === 'sha2-256') return 'RSA-OAEP-256';
  throw new ManagedKeyError(400, `Azure Key Vault's RSA-OAEP uses SHA-1 (RSA-OAEP) or SHA-256 (RSA-OAEP-256), not ${hash}`);
}

const formatter = new AsnEcSignatureFormatter();
const coordinateSize = (curve: Curve) => ({ 'P-256': 32, 'P-384': 48, 'P-521': 66 })[curve];

/** Key Vault's r‖s as DER ECDSA-Sig-Value. */
export function rawToDer(raw: Uint8Array, curve: Curve): Uint8Array {
  if (raw.length !== 2 * coordinateSize(curve)) throw new ManagedKeyError(502, `Azure Key Vault answered with a ${raw.length}-byte ECDSA signature for a ${curve} key`);
  return ecdsaDerFromRaw(raw);
}

/** DER ECDSA-Sig-Value as r‖s; null when it is not one (or does not fit the curve). */
export function derToRaw(der: Uint8Array, curve: Curve): Uint8Array | null {
  try {
    const raw = formatter.toWebSignature({ name: 'ECDSA', namedCurve: curve }, der);
    return raw && raw.byteLength === 2 * coordinateSize(curve) ? new Uint8Array(raw) : null;
  } catch {
    return null;
  }
}
