// Bringing keys and CA certificates into the mount (reference §1.5): config/ca,
// issuers/import/{bundle,cert} and intermediate/set-signed, and the two primitives every path that
// adds an issuer or a key goes through. Keys are deduplicated by public key and certificates by
// their DER; a new key is linked to key-less issuers holding its public key, a new issuer to the
// key matching its certificate. The first issuer with a key (and the first key) become defaults.

import { parseCertificate, type ParsedCert } from '../../../crypto/pki/certificate';
import { parsePrivateKeyPem, type PkiKey } from '../../../crypto/pki/keys';
import { fromBase64, toBase64 } from '../../../crypto/encoding';
import { pemMatches, toPem } from '../../../crypto/pem';
import { randomUUID } from '../../../crypto/random';
import type { LogicalRequest, LogicalResponse, PathDef } from '../../../framework/backend';
import { asCofferError, badRequest, CofferError } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import type { Storage } from '../../../framework/storage';
import type { ManagedKeyMaterial } from '../kms';
import { entrySpki, samePublicKey } from '../signers';
import { aiaEmpty, hasDefaultIssuer, NO_AIA_WARNING, setDefaultIssuer } from './config';
import { markCrlsStale } from '../revoked-store';
import {
  ALL_USAGES,
  issuersConfig,
  keysConfig,
  loadAllIssuers,
  loadAllKeys,
  loadKey,
  saveIssuer,
  saveKey,
  saveKeysConfig,
  urlsConfig,
  type IssuerEntry,
  type KeyEntry,
} from '../store';

// ---- PEM bundles ----

export interface PemItem {
  label: string;
  der: Uint8Array;
  /** The block re-encoded (Go's pem.EncodeToMemory form, trailing newline). */
  pem: string;
}

/**
 * Every PEM block of a bundle, as Go's pem.Decode loop reads one: text between blocks (OpenSSL's
 * human-readable dumps) is skipped, but input left over that holds no block is an error.
 */
export function pemItems(text: string): PemItem[] {
  const out: PemItem[] = [];
  let end = 0;
  for (const b of pemMatches(text)) {
    if (!b.der) break;
    out.push({ label: b.label, der: b.der, pem: toPem(b.label, b.der) });
    end = b.end;
  }
  if (out.length === 0 || text.slice(end).trim() !== '') throw badRequest('provided PEM block contained no data');
  return out;
}

export const TOO_SHORT = 'provided data for import was too short; perhaps a path was passed to the API rather than the contents of a PEM file';

// ---- primitives ----

const hasUsage = (cert: ParsedCert, usage: string): boolean => cert.keyUsage.some((u) => u.toLowerCase() === usage.toLowerCase());

/** Stores a local key unless a key with the same public key exists; links key-less issuers to it. */
export const importKey = (storage: Storage, key: PkiKey, name: string): Promise<{ entry: KeyEntry; existing: boolean }> =>
  storeKey(storage, { type: key.type, bits: key.bits, pkcs8: toBase64(key.pkcs8), spki: toBase64(key.spki) }, name);

/** importKey for a managed key: only its UUID and public half are kept. */
export const importManagedKey = (storage: Storage, m: ManagedKeyMaterial, name: string): Promise<{ entry: KeyEntry; existing: boolean }> =>
  storeKey(storage, { type: m.type, bits: m.bits, pkcs8: '', spki: toBase64(m.spki), managedKeyId: m.managedKeyId }, name);

async function storeKey(storage: Storage, fields: Omit<KeyEntry, 'id' | 'name'>, name: string): Promise<{ entry: KeyEntry; existing: boolean }> {
  const spki = fromBase64(fields.spki) ?? new Uint8Array(0);
  const known = await loadAllKeys(storage);
  for (const k of known) {
    if (samePublicKey(spki, entrySpki(k))) return { entry: k, existing: true };
  }
  if (name && known.some((k) => k.name === name)) throw badRequest(`an existing key is using the requested key name value: ${name}`);
  const entry: KeyEntry = { id: randomUUID(), name, ...fields };
  await saveKey(storage, entry);

  let haveDefault = await hasDefaultIssuer(storage);
  for (const issuer of await loadAllIssuers(storage)) {
    if (issuer.keyId || !samePublicKey(spki, parseCertificate(issuer.certificate).spki)) continue;
    await saveIssuer(storage, { ...issuer, keyId: entry.id, lastModified: Date.now() });
    if (!haveDefault) {
      await setDefaultIssuer(storage, issuer.id);
      haveDefault = true;
    }
  }
  const { default: defaultKey } = await keysConfig(storage);
  if (known.length === 0 || !defaultKey || !(await loadKey(storage, defaultKey))) await saveKeysConfig(storage, { default: entry.id });
  return { entry, existing: false };
}

/** Stores a CA certificate as an issuer unless the same certificate is one already. */
export async function importIssuer(storage: Storage, cert: ParsedCert, name: string): Promise<{ entry: IssuerEntry; existing: boolean }> {
  if (!cert.isCA) throw badRequest('Refusing to import non-CA certificate');
  const known = await loadAllIssuers(storage);
  for (const e of known) {
    const der = parseCertificate(e.certificate).der;
    if (der.length === cert.der.length && der.every((b, i) => b === cert.der[i])) return { entry: e, existing: true };
  }
  if (name && known.some((e) => e.name === name)) throw badRequest(`another issuer is using the requested name: ${name}`);
  let keyId = '';
  for (const k of await loadAllKeys(storage)) {
    if (samePublicKey(entrySpki(k), cert.spki)) {
      keyId = k.id;
      break;
    }
  }
  const entry: IssuerEntry = {
    id: randomUUID(),
    name,
    keyId,
    certificate: cert.pem.trim(),
    serial: cert.serial,
    manualChain: null,
    leafNotAfterBehavior: 'err',
    // A certificate without the CRLSign key usage cannot sign CRLs.
    usage: ALL_USAGES.filter((u) => u !== 'crl-signing' || hasUsage(cert, 'CRLSign')),
    revocationSignatureAlgorithm: '',
    aia: null,
    revoked: false,
    revocationTime: 0,
    revocationTimeNanos: '',
    lastModified: Date.now(),
  };
  await saveIssuer(storage, entry);
  if ((known.length === 0 || !(await hasDefaultIssuer(storage))) && keyId) await setDefaultIssuer(storage, entry.id);
  return { entry, existing: false };
}

// ---- import paths ----

const CERT_LABELS = ['CERTIFICATE', 'X509 CERTIFICATE'];
const IGNORED_LABELS = ['CRL', 'X509 CRL', 'EC PARAMS', 'EC PARAMETERS'];

async function importPems(req: LogicalRequest, f: FieldData, keysAllowedByPath: boolean): Promise<LogicalResponse> {
  const bundle = f.has('pem_bundle') ? f.get<string>('pem_bundle') : '';
  const certificate = f.has('certificate') ? f.get<string>('certificate') : '';
  if (!bundle && !certificate) throw badRequest("'pem_bundle' and 'certificate' parameters were empty");
  if (bundle && certificate) throw badRequest("'pem_bundle' and 'certificate' parameters were both provided");
  const text = bundle || certificate;
  const keysAllowed = keysAllowedByPath && !certificate;
  if (text.length < 75) throw badRequest(TOO_SHORT);

  const items = pemItems(text);
  const certs = items.filter((i) => CERT_LABELS.includes(i.label));
  const keys = items.filter((i) => !CERT_LABELS.includes(i.label) && !IGNORED_LABELS.includes(i.label));
  if (keys.length > 0 && !keysAllowed) throw badRequest('private keys found in the PEM bundle but not allowed by the path; use /issuers/import/bundle');

  const importedKeys: string[] = [];
  const existingKeys: string[] = [];
  for (const [index, item] of keys.entries()) {
    let key: PkiKey;
    try {
      key = await parsePrivateKeyPem(item.pem);
    } catch (e) {
      e = asCofferError(e);
      if (e instanceof CofferError && e.status === 400) throw badRequest(`Error parsing key ${index}: ${e.errors[0]}`);
      throw e;
    }
    const r = await importKey(req.storage, key, '');
    (r.existing ? existingKeys : importedKeys).push(r.entry.id);
  }

  const mapping: Record<string, string> = {};
  const importedIssuers: string[] = [];
  const existingIssuers: string[] = [];
  for (const [index, item] of certs.entries()) {
    let r: { entry: IssuerEntry; existing: boolean };
    try {
      r = await importIssuer(req.storage, parseCertificate(item.der), '');
    } catch (e) {
      e = asCofferError(e);
      if (e instanceof CofferError && e.status === 400) throw badRequest(`Error parsing issuer ${index}: ${e.errors[0]}\n${item.pem}`);
      throw e;
    }
    mapping[r.entry.id] = r.entry.keyId;
    (r.existing ? existingIssuers : importedIssuers).push(r.entry.id);
  }

  const warnings: string[] = [];
  if (importedIssuers.length > 0) {
    await markCrlsStale(req.storage, { complete: true, force: true });
    const withKeys = importedIssuers.filter((id) => mapping[id] !== '');
    if ((await issuersConfig(req.storage)).defaultFollowsLatestIssuer) {
      if (withKeys.length === 1) await setDefaultIssuer(req.storage, withKeys[0]);
      else if (withKeys.length > 1) {
        warnings.push('Default issuer left unchanged: could not select new issuer automatically as multiple imported issuers had key material in Vault.');
      }
    }
  }
  const { default: defaultId } = await issuersConfig(req.storage);
  if (defaultId && mapping[defaultId] === '') {
    warnings.push(
      'The default issuer has no key associated with it. Some operations like issuing certificates and signing CRLs will be unavailable with the requested default issuer until a key is imported or the default issuer is changed.',
    );
  }
  if (defaultId && importedIssuers.length > 1 && importedIssuers.includes(defaultId) && importedIssuers.filter((id) => mapping[id] !== '').length > 1) {
    warnings.push('The imported bundle contained multiple certs matching keys, the default issuer that was selected should be verified and manually changed if incorrect.');
  }
  const urls = await urlsConfig(req.storage);
  if (aiaEmpty({ ...urls, deltaCrlDistributionPoints: [] })) warnings.push(NO_AIA_WARNING);

  // Go marshals the empty lists it never appended to as null.
  const orNull = (list: string[]) => (list.length ? list : null);
  return {
    data: {
      mapping,
      imported_keys: orNull(importedKeys),
      imported_issuers: orNull(importedIssuers),
      existing_keys: orNull(existingKeys),
      existing_issuers: orNull(existingIssuers),
    },
    ...(warnings.length ? { warnings } : {}),
  };
}

export function importPaths(): PathDef[] {
  const pemBundle = { type: 'string', description: 'PEM: CA certificates and (bundle paths only) their unencrypted private keys' } as const;
  return [
    {
      pattern: 'config/ca',
      fields: { pem_bundle: pemBundle },
      summary: 'Import CA certificates and keys (legacy alias of issuers/import/bundle).',
      operations: { update: (req, f) => importPems(req, f, true) },
    },
    {
      pattern: 'issuers/import/(?<kind>bundle|cert)',
      fields: { pem_bundle: pemBundle, kind: { type: 'string', description: 'bundle (keys allowed) or cert' } },
      summary: 'Import CA certificates (and, for bundle, their keys).',
      operations: { update: (req, f) => importPems(req, f, f.get<string>('kind') === 'bundle') },
    },
    {
      pattern: 'intermediate/set-signed',
      fields: { certificate: { type: 'string', description: 'PEM: the signed intermediate, optionally followed by its parents' } },
      summary: 'Import the certificate signed for an intermediate CSR generated here.',
      operations: { update: (req, f) => importPems(req, f, false) },
    },
  ];
}
