// The Cloud KMS v1 REST methods the emulator answers (gRPC transcoding of KeyManagementService):
// key rings (create, get, list), crypto keys (create, get, list), versions (create, get, list),
// getPublicKey, asymmetricSign and asymmetricDecrypt, each checked for its IAM permission on the
// caller's projects. Answers and errors in Google's JSON; int64 checksums as decimal strings.
import { createHash } from 'node:crypto';
import { crc32c } from './crc32c';
import { enumName } from './enums';
import { alreadyExists, GcpError, invalidArgument, notEnabled, notFound, permissionDenied } from './errors';
import { ALGORITHMS, decrypt, DIGEST_LENGTH, signDigest, type Hash } from './keys';
import type { Principal } from './auth';
import type { CryptoKey, KeyRing, Project, Version, World } from './state';

const ID_RE = /^[a-zA-Z0-9_-]{1,63}$/;
const DESTROY_SCHEDULED_DURATION = '2592000s';

export interface KmsRequest {
  method: string;
  /** The path after /v1/. */
  path: string;
  query: URLSearchParams;
  body: Record<string, unknown>;
}

/** A request resolved to its RPC: which method, on what resource, needing which permission. */
export interface Route {
  rpc: string;
  project: string;
  /** The resource the call names (the parent for create and list). */
  name: string;
  permission: string;
}

export function route(method: string, path: string): Route {
  const colon = path.lastIndexOf(':');
  const [base, verb] = colon > path.lastIndexOf('/') ? [path.slice(0, colon), path.slice(colon + 1)] : [path, ''];
  const s = base.split('/');
  const shaped =
    s[0] === 'projects' && s[2] === 'locations' && s[4] === 'keyRings' && (s.length < 7 || s[6] === 'cryptoKeys') && (s.length < 9 || s[8] === 'cryptoKeyVersions') && s.every((x) => x !== '');
  const at = (rpc: string, permission: string, n: number): Route => ({ rpc, project: s[1], name: s.slice(0, n).join('/'), permission: `cloudkms.${permission}` });
  if (shaped) {
    const m = `${method} ${s.length}${verb ? `:${verb}` : ''}${s.length === 7 || s.length === 9 || s.length === 11 ? `/${s[s.length - 1]}` : ''}`;
    switch (m) {
      case 'POST 5':
        return at('CreateKeyRing', 'keyRings.create', 4);
      case 'GET 5':
        return at('ListKeyRings', 'keyRings.list', 4);
      case 'GET 6':
        return at('GetKeyRing', 'keyRings.get', 6);
      case 'POST 7/cryptoKeys':
        return at('CreateCryptoKey', 'cryptoKeys.create', 6);
      case 'GET 7/cryptoKeys':
        return at('ListCryptoKeys', 'cryptoKeys.list', 6);
      case 'GET 8':
        return at('GetCryptoKey', 'cryptoKeys.get', 8);
      case 'POST 9/cryptoKeyVersions':
        return at('CreateCryptoKeyVersion', 'cryptoKeyVersions.create', 8);
      case 'GET 9/cryptoKeyVersions':
        return at('ListCryptoKeyVersions', 'cryptoKeyVersions.list', 8);
      case 'GET 10':
        return at('GetCryptoKeyVersion', 'cryptoKeyVersions.get', 10);
      case 'GET 11/publicKey':
        return at('GetPublicKey', 'cryptoKeyVersions.viewPublicKey', 10);
      case 'POST 10:asymmetricSign':
        return at('AsymmetricSign', 'cryptoKeyVersions.useToSign', 10);
      case 'POST 10:asymmetricDecrypt':
        return at('AsymmetricDecrypt', 'cryptoKeyVersions.useToDecrypt', 10);
    }
  }
  throw new GcpError('NOT_FOUND', `The requested URL /v1/${path} was not found on this server (method ${method}).`);
}

/** The IAM check: the account may use the project, and holds the permission. */
export function authorize(p: Principal, r: Route): void {
  const { account } = p;
  if (!account.projects.has(r.project) || (account.permissions && !account.permissions.has(r.permission))) throw permissionDenied(r.permission, r.name);
}

// ---- JSON views

const keyRingJson = (r: KeyRing) => ({ name: r.name, createTime: r.createTime });
const cryptoKeyJson = (k: CryptoKey) => ({
  name: k.name,
  purpose: k.purpose,
  createTime: k.createTime,
  versionTemplate: { protectionLevel: k.protectionLevel, algorithm: k.algorithm },
  destroyScheduledDuration: DESTROY_SCHEDULED_DURATION,
});
const versionJson = (v: Version) => ({
  name: v.name,
  state: v.state,
  protectionLevel: v.protectionLevel,
  algorithm: v.algorithm,
  createTime: v.createTime,
  ...(v.generateTime && v.state !== 'PENDING_GENERATION' ? { generateTime: v.generateTime } : {}),
});

// ---- lookups

function ring(p: Project, name: string): KeyRing {
  const r = p.keyRings.get(name);
  if (!r) throw notFound('KeyRing', name);
  return r;
}

function cryptoKey(p: Project, name: string): CryptoKey {
  const ringName = name.slice(0, name.indexOf('/cryptoKeys/'));
  const k = p.keyRings.get(ringName)?.cryptoKeys.get(name);
  if (!k) throw notFound('CryptoKey', name);
  return k;
}

function version(p: Project, name: string): { key: CryptoKey; v: Version } {
  const key = cryptoKey(p, name.slice(0, name.indexOf('/cryptoKeyVersions/')));
  const v = key.versions.find((x) => x.name === name);
  if (!v) throw notFound('CryptoKeyVersion', name);
  return { key, v };
}

function enabled(v: Version): Required<Pick<Version, 'privateKey' | 'publicPem'>> {
  if (v.state !== 'ENABLED' || !v.privateKey || !v.publicPem) throw notEnabled(v.name, v.state);
  return { privateKey: v.privateKey, publicPem: v.publicPem };
}

// ---- request fields

/** proto3 JSON bytes: standard or URL-safe base64. */
function bytes(value: unknown, field: string): Buffer | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) throw invalidArgument(`Invalid value at '${field}' (TYPE_BYTES), Base64 decoding failed for "${String(value).slice(0, 40)}"`);
  return Buffer.from(value, 'base64');
}

/** A google.protobuf.Int64Value: a decimal string (or a number). */
function int64(value: unknown, field: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,19}$/.test(value)) return Number(value);
  throw invalidArgument(`Invalid value at '${field}' (TYPE_INT64), "${String(value)}"`);
}

/** Checks a payload against the CRC32C the caller sent; true when one was sent (and matched). */
function verifyCrc(data: Buffer, sum: number | null, field: string, sumField: string): boolean {
  if (sum === null) return false;
  if (sum !== crc32c(data)) throw invalidArgument(`The checksum in field ${sumField} did not match the data in field ${field}.`);
  return true;
}

const crcText = (data: Buffer | string, corrupt: boolean) => String((crc32c(typeof data === 'string' ? Buffer.from(data) : data) ^ (corrupt ? 1 : 0)) >>> 0);

// ---- the methods

export function perform(p: Project, r: Route, req: KmsRequest, corrupt: boolean): unknown {
  const body = req.body;
  switch (r.rpc) {
    case 'CreateKeyRing': {
      const id = req.query.get('keyRingId') ?? '';
      if (!ID_RE.test(id)) throw invalidArgument(`Invalid value for key_ring_id "${id}": it must match [a-zA-Z0-9_-]{1,63}.`);
      const name = `${r.name}/keyRings/${id}`;
      if (p.keyRings.has(name)) throw alreadyExists('KeyRing', name);
      const kr: KeyRing = { name, createTime: new Date().toISOString(), cryptoKeys: new Map() };
      p.keyRings.set(name, kr);
      return keyRingJson(kr);
    }
    case 'ListKeyRings': {
      const rings = [...p.keyRings.values()].filter((x) => x.name.startsWith(`${r.name}/`));
      return { ...(rings.length ? { keyRings: rings.map(keyRingJson) } : {}), totalSize: rings.length };
    }
    case 'GetKeyRing':
      return keyRingJson(ring(p, r.name));
    case 'CreateCryptoKey':
      return cryptoKeyJson(createCryptoKey(p, r, req));
    case 'ListCryptoKeys': {
      const keys = [...ring(p, r.name).cryptoKeys.values()];
      return { ...(keys.length ? { cryptoKeys: keys.map(cryptoKeyJson) } : {}), totalSize: keys.length };
    }
    case 'GetCryptoKey':
      return cryptoKeyJson(cryptoKey(p, r.name));
    case 'CreateCryptoKeyVersion': {
      const key = cryptoKey(p, r.name);
      return versionJson(p.startVersion(key, ALGORITHMS[key.algorithm]));
    }
    case 'ListCryptoKeyVersions':
      return listVersions(cryptoKey(p, r.name), req.query);
    case 'GetCryptoKeyVersion':
      return versionJson(version(p, r.name).v);
    case 'GetPublicKey': {
      const { v } = version(p, r.name);
      const { publicPem } = enabled(v);
      return { pem: publicPem, algorithm: v.algorithm, pemCrc32c: crcText(publicPem, corrupt), name: v.name, protectionLevel: v.protectionLevel };
    }
    case 'AsymmetricSign':
      return asymmetricSign(p, r, body, corrupt);
    case 'AsymmetricDecrypt':
      return asymmetricDecrypt(p, r, body, corrupt);
  }
  throw new GcpError('UNIMPLEMENTED', `${r.rpc} is not implemented by the emulator`);
}

function createCryptoKey(p: Project, r: Route, req: KmsRequest): CryptoKey {
  const id = req.query.get('cryptoKeyId') ?? '';
  if (!ID_RE.test(id)) throw invalidArgument(`Invalid value for crypto_key_id "${id}": it must match [a-zA-Z0-9_-]{1,63}.`);
  const kr = ring(p, r.name);
  const name = `${kr.name}/cryptoKeys/${id}`;
  if (kr.cryptoKeys.has(name)) throw alreadyExists('CryptoKey', name);
  const purpose = enumName('purpose', req.body.purpose);
  const template = (req.body.versionTemplate ?? {}) as Record<string, unknown>;
  const algorithm = enumName('algorithm', template.algorithm);
  const protectionLevel = enumName('protectionLevel', template.protectionLevel) || 'SOFTWARE';
  if (purpose === '' || purpose === 'CRYPTO_KEY_PURPOSE_UNSPECIFIED') throw invalidArgument('crypto_key.purpose: Field is required.');
  if (purpose !== 'ASYMMETRIC_SIGN' && purpose !== 'ASYMMETRIC_DECRYPT') throw invalidArgument(`The emulator implements asymmetric keys only, not purpose ${purpose}.`);
  if (algorithm === '') throw invalidArgument(`crypto_key.version_template.algorithm: Field is required for purpose ${purpose}.`);
  const alg = ALGORITHMS[algorithm];
  if (!alg) throw invalidArgument(`Algorithm ${algorithm} is not supported (by the emulator).`);
  if (alg.purpose !== purpose) throw invalidArgument(`Algorithm ${algorithm} is not compatible with purpose ${purpose}.`);
  if (protectionLevel !== 'SOFTWARE' && protectionLevel !== 'HSM') throw invalidArgument(`Protection level ${protectionLevel} is not supported for this key.`);
  const key: CryptoKey = { name, purpose, createTime: new Date().toISOString(), algorithm, protectionLevel, versions: [] };
  kr.cryptoKeys.set(name, key);
  if (req.query.get('skipInitialVersionCreation') !== 'true') p.startVersion(key, alg);
  return key;
}

function listVersions(key: CryptoKey, query: URLSearchParams): unknown {
  const size = Math.min(Math.max(Number(query.get('pageSize') ?? '0') || 25, 1), 1000);
  const start = Number(query.get('pageToken') || '0');
  if (!Number.isInteger(start) || start < 0) throw invalidArgument('Invalid page_token.');
  const page = key.versions.slice(start, start + size);
  const next = start + size < key.versions.length ? String(start + size) : '';
  return { ...(page.length ? { cryptoKeyVersions: page.map(versionJson) } : {}), ...(next ? { nextPageToken: next } : {}), totalSize: key.versions.length };
}

const DIGEST_FIELD: Partial<Record<Hash, string>> = { sha256: 'sha256', sha384: 'sha384', sha512: 'sha512' };

function asymmetricSign(p: Project, r: Route, body: Record<string, unknown>, corrupt: boolean): unknown {
  const { key, v } = version(p, r.name);
  const alg = ALGORITHMS[v.algorithm];
  if (key.purpose !== 'ASYMMETRIC_SIGN') throw new GcpError('FAILED_PRECONDITION', `${key.name} has purpose ${key.purpose}: asymmetricSign needs ASYMMETRIC_SIGN.`);
  const { privateKey } = enabled(v);
  const digestDoc = (body.digest ?? null) as Record<string, unknown> | null;
  const data = bytes(body.data, 'data');
  let digest: Buffer;
  let verifiedDigest = false;
  let verifiedData = false;
  if (digestDoc && data) throw invalidArgument('Only one of digest and data may be set.');
  if (digestDoc) {
    const given = Object.keys(digestDoc).filter((k) => digestDoc[k] !== undefined && digestDoc[k] !== null);
    if (given.length !== 1) throw invalidArgument('Exactly one digest field must be set.');
    if (given[0] !== DIGEST_FIELD[alg.hash]) throw invalidArgument(`The digest type ${given[0]} does not match the algorithm ${v.algorithm}, which expects ${DIGEST_FIELD[alg.hash]}.`);
    digest = bytes(digestDoc[given[0]], `digest.${given[0]}`)!;
    if (digest.length !== DIGEST_LENGTH[alg.hash]) throw invalidArgument(`Digest length ${digest.length} is wrong for ${given[0]}: expected ${DIGEST_LENGTH[alg.hash]} bytes.`);
    verifiedDigest = verifyCrc(digest, int64(body.digestCrc32c, 'digest_crc32c'), 'digest', 'digest_crc32c');
  } else if (data) {
    verifiedData = verifyCrc(data, int64(body.dataCrc32c, 'data_crc32c'), 'data', 'data_crc32c');
    digest = createHash(alg.hash).update(data).digest();
  } else throw invalidArgument('One of digest and data must be set.');
  const signature = signDigest(alg, privateKey, digest);
  return {
    signature: signature.toString('base64'),
    signatureCrc32c: crcText(signature, corrupt),
    verifiedDigestCrc32c: verifiedDigest,
    name: v.name,
    verifiedDataCrc32c: verifiedData,
    protectionLevel: v.protectionLevel,
  };
}

function asymmetricDecrypt(p: Project, r: Route, body: Record<string, unknown>, corrupt: boolean): unknown {
  const { key, v } = version(p, r.name);
  const alg = ALGORITHMS[v.algorithm];
  if (key.purpose !== 'ASYMMETRIC_DECRYPT') throw new GcpError('FAILED_PRECONDITION', `${key.name} has purpose ${key.purpose}: asymmetricDecrypt needs ASYMMETRIC_DECRYPT.`);
  const { privateKey } = enabled(v);
  const ciphertext = bytes(body.ciphertext, 'ciphertext');
  if (!ciphertext || ciphertext.length === 0) throw invalidArgument('ciphertext: Field is required.');
  const verified = verifyCrc(ciphertext, int64(body.ciphertextCrc32c, 'ciphertext_crc32c'), 'ciphertext', 'ciphertext_crc32c');
  const plaintext = decrypt(alg, privateKey, ciphertext);
  if (!plaintext) throw invalidArgument('Decryption failed: the ciphertext is invalid.');
  return {
    ...(plaintext.length ? { plaintext: plaintext.toString('base64') } : {}),
    plaintextCrc32c: crcText(plaintext, corrupt),
    verifiedCiphertextCrc32c: verified,
    protectionLevel: v.protectionLevel,
  };
}
