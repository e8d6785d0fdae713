// BYOK (reference §6.11): the mount's wrapping key, keys/:name/import, keys/:name/import_version
// and byok-export/:destination/:source(/:version).

import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { AsymmetricError, type AsymmetricKey } from '../../../crypto/transit/asymmetric';
import { cipherKeyLength } from '../../../crypto/transit/cipher';
import { ecParts, ed25519Private64, ed25519PublicRaw, parsePkcs8, parsePublicKeyPem, publicKeyPem, rsaPublicParts } from '../../../crypto/transit/key-encoding';
import { generateWrappingKey, KeyWrapError, parseOaepHash, unwrapImport, WRAPPING_KEY_BITS, wrapForImport } from '../../../crypto/transit/key-wrap';
import { fromBase64, fromUtf8, toBase64, utf8 } from '../../../crypto/encoding';
import { randomBytes } from '../../../crypto/random';
import { badRequest, CofferError } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { buildPolicy, checkCreateOptions, HMAC_KEY_SIZE_MAX, HMAC_KEY_SIZE_MIN, type CreateOptions } from '../create';
import { exportVersions } from './export';
import { isAsymmetric, isCipher, isEcdsa, isKeyType, isRsa, supportsSigning, type KeyType } from '../key-types';
import { CREATION_FIELDS, scheduleRotation } from './keys';
import { HMAC_KEY_BYTES } from '../material';
import { editable, type KeyPolicy, type KeyVersion } from '../policy';
import { loadPolicy, savePolicy, WRAPPING_KEY } from '../store';

// ---- the wrapping key -------------------------------------------------------------------------

interface WrappingKey {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
}

// Parsed once per mount and stored text: handing out the same arrays keeps key-wrap's per-key
// caches hitting (the storage returns a fresh copy of the record on every read).
const parsedWrapping = new Map<string, { text: string; key: WrappingKey }>();

function decodeWrapping(mount: string, bytes: Uint8Array): WrappingKey {
  const text = fromUtf8(bytes);
  const cached = parsedWrapping.get(mount);
  if (cached?.text === text) return cached.key;
  const stored = JSON.parse(text) as { private_key?: string; public_key?: string };
  const privateKey = fromBase64(stored.private_key ?? '');
  const publicKey = fromBase64(stored.public_key ?? '');
  if (!privateKey?.length || !publicKey?.length) throw new Error('stored transit wrapping key is malformed');
  const key = { privateKey, publicKey };
  parsedWrapping.set(mount, { text, key });
  return key;
}

/** The mount's RSA-4096 wrapping key, made and stored on first use (reads of it are serialised). */
async function wrappingKey(req: LogicalRequest): Promise<WrappingKey> {
  const stored = await req.storage.get(WRAPPING_KEY);
  if (stored) return decodeWrapping(req.mountAccessor, stored);
  const key = await generateWrappingKey(req.rsaPairs);
  await req.storage.put(WRAPPING_KEY, utf8(JSON.stringify({ private_key: toBase64(key.privateKey), public_key: toBase64(key.publicKey) })));
  return key;
}

/** The first use of the wrapping key makes it: outside the mount's object. */
const wrappingKeyNeeded = async (req: LogicalRequest): Promise<number[]> => ((await req.storage.get(WRAPPING_KEY)) ? [] : [WRAPPING_KEY_BITS]);

const wrappingPublic = (k: WrappingKey): AsymmetricKey => ({ type: 'rsa-4096', privateKey: null, publicKey: k.publicKey });

// ---- key material from a request -----------------------------------------------------------------

type Material = { private: true; bytes: Uint8Array } | { private: false; pem: string };

/** Vault's client errors for wrapped material and key parsing, as 400s. */
async function clientErrors<T>(run: () => Promise<T>, prefix = ''): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof KeyWrapError || e instanceof AsymmetricError) throw badRequest(prefix + e.message);
    if (prefix && e instanceof CofferError && e.status === 400) throw badRequest(prefix + e.errors.join('; '));
    throw e;
  }
}

/** True for ciphertext, false for public_key; exactly one of them must be given. */
function privateGiven(f: FieldData): boolean {
  // As in Vault, an empty (or null) value is not given.
  const ciphertext = f.get<string>('ciphertext') !== '';
  const publicKey = f.get<string>('public_key') !== '';
  if (ciphertext && publicKey) throw badRequest('only one of the following fields, ciphertext and public_key, can be set');
  if (!ciphertext && !publicKey) throw badRequest('one of the following fields, ciphertext xor public_key, has to be set');
  return ciphertext;
}

async function readMaterial(req: LogicalRequest, f: FieldData, type: KeyType, isPrivate: boolean): Promise<Material> {
  if (!isPrivate) {
    if (!isAsymmetric(type)) throw badRequest('provided type does not support public_key import');
    return { private: false, pem: f.get<string>('public_key') };
  }
  const hashName = f.get<string>('hash_function');
  const hash = parseOaepHash(hashName);
  if (!hash) throw badRequest(`unknown hash function: ${hashName}`);
  const blob = fromBase64(f.get<string>('ciphertext'));
  if (!blob) throw badRequest('failed to base64-decode ciphertext');
  const key = await wrappingKey(req);
  return { private: true, bytes: await clientErrors(() => unwrapImport(key.privateKey, blob, hash)) };
}

/** A new version holding imported material (Vault's size and type rules). */
async function importedVersion(type: KeyType, derived: boolean, m: Material, now: number): Promise<KeyVersion> {
  if (type === 'ed25519' && derived && !m.private) {
    throw badRequest('unable to import only public key for derived Ed25519 key: imported key should not be an Ed25519 key pair but is instead an HKDF key');
  }
  const v: KeyVersion = { created: now, hmacKey: randomBytes(HMAC_KEY_BYTES) };
  if (!m.private) {
    if (!isAsymmetric(type)) throw badRequest('provided type does not support public_key import');
    v.asym = await clientErrors(() => parsePublicKeyPem(type, m.pem));
    return v;
  }
  const n = m.bytes.length;
  if ((isCipher(type) && n !== cipherKeyLength(type)) || (type === 'hmac' && (n < HMAC_KEY_SIZE_MIN || n > HMAC_KEY_SIZE_MAX))) {
    throw badRequest(`invalid key size ${n} bytes for key type ${type}`);
  }
  if (type === 'hmac') v.hmacKey = m.bytes;
  else if (isCipher(type)) v.key = m.bytes;
  else if (isAsymmetric(type)) {
    v.asym = await clientErrors(() => parsePkcs8(type, m.bytes));
    // Derivation of ed25519 keys starts from Vault's 64-byte private key.
    if (type === 'ed25519') v.key = ed25519Private64(v.asym);
  } else throw badRequest(`keys of type ${type} cannot be imported`);
  return v;
}

const hasPrivate = (v: KeyVersion | undefined): boolean => v?.asym?.privateKey != null;

async function samePublicKey(a: AsymmetricKey, b: AsymmetricKey): Promise<boolean> {
  if (isRsa(a.type)) {
    const [x, y] = await Promise.all([rsaPublicParts(a), rsaPublicParts(b)]);
    return x.n === y.n && x.e === y.e;
  }
  if (isEcdsa(a.type)) {
    const [x, y] = await Promise.all([ecParts(a), ecParts(b)]);
    return x.x === y.x && x.y === y.y;
  }
  return toBase64(ed25519PublicRaw(a)) === toBase64(ed25519PublicRaw(b));
}

/** The version with its private half filled in from PKCS#8 material that matches its public key. */
async function withPrivateHalf(p: KeyPolicy, v: KeyVersion, der: Uint8Array): Promise<KeyVersion> {
  const asym = await clientErrors(() => parsePkcs8(p.type as AsymmetricKey['type'], der));
  if (!v.asym || !(await samePublicKey(v.asym, asym))) throw badRequest('cannot import key, key pair does not match');
  return { ...v, asym, ...(p.type === 'ed25519' ? { key: ed25519Private64(asym) } : {}) };
}

// ---- handlers -----------------------------------------------------------------------------------

async function importKey(req: LogicalRequest, f: FieldData) {
  const name = f.get<string>('name');
  const allowRotation = f.get<boolean>('allow_rotation');
  const autoRotatePeriod = f.get<number>('auto_rotate_period');
  if (f.get<boolean>('convergent_encryption')) throw badRequest('import cannot be used on keys with convergent encryption enabled');
  if (autoRotatePeriod > 0 && !allowRotation) throw badRequest('allow_rotation must be set to true if auto-rotation is enabled');
  const isPrivate = privateGiven(f);
  const typeName = f.get<string>('type');
  const type = typeName.toLowerCase();
  if (!isKeyType(type)) throw badRequest(`unknown key type: ${typeName}`);
  if (await loadPolicy(req.storage, name)) {
    throw badRequest('the import path cannot be used with an existing key; use import-version to rotate an existing imported key');
  }
  const options: CreateOptions = {
    type,
    derived: f.get<boolean>('derived'),
    convergent: false,
    exportable: f.get<boolean>('exportable'),
    allowPlaintextBackup: f.get<boolean>('allow_plaintext_backup'),
    keySize: 0,
    autoRotatePeriod,
  };
  checkCreateOptions(options);
  const material = await readMaterial(req, f, type, isPrivate);
  const first = await clientErrors(() => importedVersion(type, options.derived, material, Date.now()), 'error importing key: ');
  if (type === 'hmac') options.keySize = first.hmacKey.length;
  const p = await buildPolicy(name, options, first.created, first);
  p.imported = true;
  p.allowRotation = allowRotation;
  await savePolicy(req.storage, p);
  scheduleRotation(req, p);
  return null;
}

async function importVersion(req: LogicalRequest, f: FieldData) {
  const name = f.get<string>('name');
  const isPrivate = privateGiven(f);
  const p = await loadPolicy(req.storage, name);
  if (!p) throw badRequest(`no key found with name ${name}; to import a new key, use the import/ endpoint`);
  // A rotation inside the service makes the key one of ours (Vault clears its imported flag).
  if (!p.imported || p.rotatedHere) throw badRequest('the import_version endpoint can only be used with an imported key');
  if (p.convergent) throw badRequest('import_version cannot be used on keys with convergent encryption enabled');
  const material = await readMaterial(req, f, p.type, isPrivate);
  const next = editable(p);
  if (f.has('version')) {
    const n = f.get<number>('version');
    const entry = p.versions.get(n);
    if (!entry) throw badRequest('no such key version');
    if (!isAsymmetric(p.type)) throw badRequest('provided type does not support importing key versions');
    if (hasPrivate(entry)) throw badRequest('private key imported, key version cannot be updated');
    if (!material.private) throw badRequest('cannot add a public key to a key version that already has a public key set');
    next.versions.set(n, await withPrivateHalf(p, entry, material.bytes));
  } else {
    const latest = p.versions.get(p.latestVersion);
    let filled: KeyVersion | null = null;
    // The private half of a public-only latest version fills it; anything else is a new version.
    if (latest && isAsymmetric(p.type) && !hasPrivate(latest) && material.private) {
      filled = await withPrivateHalf(p, latest, material.bytes).catch((e: unknown) => {
        if (e instanceof CofferError && e.status === 400) return null;
        throw e;
      });
    }
    if (filled) next.versions.set(p.latestVersion, filled);
    else {
      const v = await importedVersion(p.type, p.derived, material, Date.now());
      next.latestVersion = p.latestVersion + 1;
      next.versions.set(next.latestVersion, v);
      if (p.type === 'hmac') next.keySize = v.hmacKey.length;
    }
  }
  await savePolicy(req.storage, next);
  return null;
}

/** The bytes byok-export wraps: raw symmetric keys, PKCS#8 for asymmetric ones. */
function exportMaterial(p: KeyPolicy, n: number, v: KeyVersion): Uint8Array {
  if (p.type === 'hmac') return v.hmacKey;
  if (isCipher(p.type) && v.key) return v.key;
  if (v.asym?.privateKey) return v.asym.privateKey;
  throw badRequest(`failed to wrap target key for import: key version ${n} has no private key`);
}

async function byokExport(req: LogicalRequest, f: FieldData) {
  const dst = await loadPolicy(req.storage, f.get<string>('destination'));
  if (!dst) throw badRequest('no such destination key to export to');
  const src = await loadPolicy(req.storage, f.get<string>('source'));
  if (!src) throw badRequest('no such source key for export');
  if (!src.exportable) throw badRequest('key is not exportable');
  const versions = exportVersions(src, f.get<string>('version'));
  const hashName = f.get<string>('hash');
  const hash = parseOaepHash(hashName);
  if (!hash) throw badRequest(`unknown hash function: ${hashName}`);
  if (!supportsSigning(dst.type)) throw badRequest(`message signing not supported for key type ${dst.type}`);
  const wrapping = dst.versions.get(dst.latestVersion)?.asym;
  if (!isRsa(dst.type) || !wrapping) throw badRequest('unsupported key type in use; must be a rsa key');
  const keys: Record<string, string> = {};
  for (const [n, v] of versions) {
    const wrapped = await clientErrors(() => wrapForImport(wrapping.publicKey, exportMaterial(src, n, v), hash), 'failed to wrap target key for import: ');
    keys[n] = toBase64(wrapped);
  }
  return { data: { name: src.name, type: src.type, keys } };
}

export function importPaths(): PathDef[] {
  const name = { type: 'string', description: 'Key name', required: true } as const;
  const material = {
    ciphertext: { type: 'string', description: 'Base64 RSA-OAEP(ephemeral AES key) ‖ AES-KWP(key material)' },
    public_key: { type: 'string', description: 'PEM public key (asymmetric keys; instead of ciphertext)' },
    hash_function: { type: 'string', description: 'OAEP hash: SHA1, SHA224, SHA256 (default), SHA384 or SHA512', default: 'SHA256' },
  } as const;
  return [
    {
      pattern: 'wrapping_key',
      summary: "The mount's RSA-4096 public key for wrapping imported keys.",
      rsaKeysNeeded: wrappingKeyNeeded,
      operations: {
        read: async (req) => ({ data: { public_key: publicKeyPem(wrappingPublic(await wrappingKey(req))) } }),
      },
    },
    {
      pattern: `keys/${nameRegex('name')}/import`,
      fields: {
        name,
        ...material,
        type: CREATION_FIELDS.type,
        derived: CREATION_FIELDS.derived,
        exportable: CREATION_FIELDS.exportable,
        allow_plaintext_backup: CREATION_FIELDS.allow_plaintext_backup,
        auto_rotate_period: CREATION_FIELDS.auto_rotate_period,
        context: CREATION_FIELDS.context,
        allow_rotation: { type: 'bool', description: 'Allow rotating the imported key inside the service' },
        convergent_encryption: { type: 'bool', description: 'Not supported for imported keys' },
      },
      summary: 'Import externally generated key material as a new key.',
      rsaKeysNeeded: wrappingKeyNeeded,
      operations: { update: importKey },
    },
    {
      pattern: `keys/${nameRegex('name')}/import_version`,
      fields: {
        name,
        ...material,
        version: { type: 'int', description: 'Version whose private half to import (default: a new version)' },
      },
      summary: 'Import a new version, or the private half of a public-only version, into an imported key.',
      rsaKeysNeeded: wrappingKeyNeeded,
      operations: { update: importVersion },
    },
    {
      pattern: `byok-export/${nameRegex('destination')}/${nameRegex('source')}(?:/(?<version>[^/]+))?`,
      fields: {
        destination: { type: 'string', description: 'RSA key to wrap for (e.g. another mount’s wrapping key)', required: true },
        source: { type: 'string', description: 'Exportable key to export', required: true },
        version: { type: 'string', description: 'Version to export: a number or "latest" (default: all)' },
        hash: { type: 'string', description: 'OAEP hash (default SHA256)', default: 'SHA256' },
      },
      summary: "Export a key wrapped for another Vault's import.",
      operations: { read: byokExport },
    },
  ];
}
