// Where the PKI engine keeps its issuers, keys, engine-wide configuration and issued certificates,
// and how an issuer_ref / key_ref (an id, a name or `default`) resolves to a record. Issuers and keys
// are few per mount, so "all of them" is read whole where a name must be unique or resolved.

import type { PkiKeyType } from '../../crypto/pki/keys';
import { badRequest } from '../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../framework/storage';

export type IssuerUsage = 'read-only' | 'issuing-certificates' | 'crl-signing' | 'ocsp-signing';
export const ALL_USAGES: readonly IssuerUsage[] = ['read-only', 'issuing-certificates', 'crl-signing', 'ocsp-signing'];
export type LeafNotAfterBehavior = 'err' | 'truncate' | 'permit';

export interface AiaUrls {
  issuingCertificates: string[];
  crlDistributionPoints: string[];
  deltaCrlDistributionPoints: string[];
  ocspServers: string[];
  enableTemplating: boolean;
}

export interface IssuerEntry {
  id: string;
  name: string;
  /** '' when the issuer was imported without its key. */
  keyId: string;
  /** Trimmed PEM. */
  certificate: string;
  /** Colon hex. */
  serial: string;
  manualChain: string[] | null;
  leafNotAfterBehavior: LeafNotAfterBehavior;
  usage: IssuerUsage[];
  /** Go name (SHA256WithRSA, ...) or '' for the key's default. */
  revocationSignatureAlgorithm: string;
  /** Issuer-level AIA; when set it replaces config/urls for this issuer as a whole. */
  aia: AiaUrls | null;
  revoked: boolean;
  /** Unix seconds, 0 unless revoked. */
  revocationTime: number;
  /** RFC 3339 with nanoseconds, '' unless revoked. */
  revocationTimeNanos: string;
  /** When the issuer (its certificate or chain) last changed, ms since the epoch (Last-Modified). */
  lastModified: number;
}

export interface KeyEntry {
  id: string;
  name: string;
  type: PkiKeyType;
  bits: number;
  /** PKCS#8 DER, base64; '' for a managed key. */
  pkcs8: string;
  /** SubjectPublicKeyInfo DER, base64. */
  spki: string;
  /**
   * A managed key (*generate/kms): the UUID of its sys/managed-keys entry, resolved at every use.
   * Nothing else of the entry (its PIN, its configuration) is kept here.
   */
  managedKeyId?: string;
}

export interface CertEntry {
  /** DER, base64. */
  certificate: string;
  /** The issuer that signed it ('' when unknown). */
  issuerId: string;
  /** NotAfter, unix seconds (tidy reads it without parsing the certificate). */
  expiresAt: number;
}

export interface IssuersConfig {
  default: string;
  defaultFollowsLatestIssuer: boolean;
}

export interface ClusterConfig {
  path: string;
  aiaPath: string;
}

const ISSUER_PREFIX = 'issuer/';
const KEY_PREFIX = 'key/';
export const CERTS_PREFIX = 'certs/';
const ISSUERS_CONFIG = 'config/issuers';
const KEYS_CONFIG = 'config/keys';
const URLS_CONFIG = 'config/urls';
const CLUSTER_CONFIG = 'config/cluster';
const ISSUERS_REVISION = 'config/issuers-revision';

export const emptyAia = (): AiaUrls => ({
  issuingCertificates: [],
  crlDistributionPoints: [],
  deltaCrlDistributionPoints: [],
  ocspServers: [],
  enableTemplating: false,
});

// ---- issuers ----

export const loadIssuer = (storage: Storage, id: string): Promise<IssuerEntry | null> => getJSON<IssuerEntry>(storage, ISSUER_PREFIX + id);

export async function saveIssuer(storage: Storage, e: IssuerEntry): Promise<void> {
  await putJSON(storage, ISSUER_PREFIX + e.id, e);
  await bumpIssuersRevision(storage);
}

export async function deleteIssuer(storage: Storage, id: string): Promise<void> {
  await storage.delete(ISSUER_PREFIX + id);
  await bumpIssuersRevision(storage);
}

/**
 * Changes whenever any issuer is written or deleted: what is derived from the whole issuer set
 * (CA chains) is cached under it, so issuing reads one value instead of every issuer.
 */
export async function issuersRevision(storage: Storage): Promise<string> {
  return (await getJSON<string>(storage, ISSUERS_REVISION)) ?? '';
}
const bumpIssuersRevision = (storage: Storage): Promise<void> => putJSON(storage, ISSUERS_REVISION, crypto.randomUUID());
export const listIssuerIds = (storage: Storage): Promise<string[]> => storage.list(ISSUER_PREFIX);

export async function loadAllIssuers(storage: Storage): Promise<IssuerEntry[]> {
  const out: IssuerEntry[] = [];
  for (const id of await listIssuerIds(storage)) {
    const e = await loadIssuer(storage, id);
    if (e) out.push(e);
  }
  return out;
}

/** The issuer an issuer_ref names: its id, its name, or `default`. */
export async function resolveIssuerRef(storage: Storage, ref: string): Promise<IssuerEntry> {
  const found = await findIssuer(storage, ref);
  if (found) return found;
  if (ref === 'default' || ref === '') throw badRequest('no default issuer currently configured');
  throw badRequest(`unable to find PKI issuer for reference: ${ref}`);
}

/** Like resolveIssuerRef, but null when nothing matches (reads answer 404/204 then). */
export async function findIssuer(storage: Storage, ref: string): Promise<IssuerEntry | null> {
  if (ref === 'default' || ref === '') {
    const { default: id } = await issuersConfig(storage);
    return id ? await loadIssuer(storage, id) : null;
  }
  const byId = await loadIssuer(storage, ref);
  if (byId) return byId;
  for (const e of await loadAllIssuers(storage)) if (e.name === ref) return e;
  return null;
}

// ---- keys ----

export const loadKey = (storage: Storage, id: string): Promise<KeyEntry | null> => getJSON<KeyEntry>(storage, KEY_PREFIX + id);
export const saveKey = (storage: Storage, e: KeyEntry): Promise<void> => putJSON(storage, KEY_PREFIX + e.id, e);
export const deleteKey = (storage: Storage, id: string): Promise<void> => storage.delete(KEY_PREFIX + id);
export const listKeyIds = (storage: Storage): Promise<string[]> => storage.list(KEY_PREFIX);

export async function loadAllKeys(storage: Storage): Promise<KeyEntry[]> {
  const out: KeyEntry[] = [];
  for (const id of await listKeyIds(storage)) {
    const e = await loadKey(storage, id);
    if (e) out.push(e);
  }
  return out;
}

/** The key a key_ref names: its id, its name, or `default`. */
export async function resolveKeyRef(storage: Storage, ref: string): Promise<KeyEntry> {
  if (ref === 'default' || ref === '') {
    const { default: id } = await keysConfig(storage);
    const e = id ? await loadKey(storage, id) : null;
    if (!e) throw badRequest('no default key currently configured');
    return e;
  }
  const byId = await loadKey(storage, ref);
  if (byId) return byId;
  for (const e of await loadAllKeys(storage)) if (e.name === ref) return e;
  throw badRequest(`unable to find PKI key for reference: ${ref}`);
}

// ---- names ----

/** Vault's GenericNameRegex. */
const NAME_RE = /^\w(?:[\w.-]*\w)?$/;

function checkName(name: string, what: 'issuer' | 'key'): void {
  if (name === 'default') throw badRequest(`reserved keyword 'default' can not be used as ${what} name`);
  if (!NAME_RE.test(name)) throw badRequest(`${what} name contained invalid characters`);
}

/** An issuer name may be '' (unnamed); otherwise valid and unique among the mount's issuers. */
export async function checkIssuerName(storage: Storage, name: string, exceptId: string): Promise<void> {
  if (name === '') return;
  checkName(name, 'issuer');
  for (const e of await loadAllIssuers(storage)) {
    if (e.name === name && e.id !== exceptId) throw badRequest('issuer name already in use');
  }
}

export async function checkKeyName(storage: Storage, name: string, exceptId: string): Promise<void> {
  if (name === '') return;
  checkName(name, 'key');
  for (const e of await loadAllKeys(storage)) {
    if (e.name === name && e.id !== exceptId) throw badRequest('key name already in use');
  }
}

// ---- engine-wide configuration ----

export async function issuersConfig(storage: Storage): Promise<IssuersConfig> {
  return (await getJSON<IssuersConfig>(storage, ISSUERS_CONFIG)) ?? { default: '', defaultFollowsLatestIssuer: false };
}
export const saveIssuersConfig = (storage: Storage, c: IssuersConfig): Promise<void> => putJSON(storage, ISSUERS_CONFIG, c);

export async function keysConfig(storage: Storage): Promise<{ default: string }> {
  return (await getJSON<{ default: string }>(storage, KEYS_CONFIG)) ?? { default: '' };
}
export const saveKeysConfig = (storage: Storage, c: { default: string }): Promise<void> => putJSON(storage, KEYS_CONFIG, c);

/** config/urls, or null when never written (its read answers nothing then). */
export const storedUrlsConfig = (storage: Storage): Promise<AiaUrls | null> => getJSON<AiaUrls>(storage, URLS_CONFIG);
export async function urlsConfig(storage: Storage): Promise<AiaUrls> {
  return (await storedUrlsConfig(storage)) ?? emptyAia();
}
export const saveUrlsConfig = (storage: Storage, c: AiaUrls): Promise<void> => putJSON(storage, URLS_CONFIG, c);

export async function clusterConfig(storage: Storage): Promise<ClusterConfig> {
  return (await getJSON<ClusterConfig>(storage, CLUSTER_CONFIG)) ?? { path: '', aiaPath: '' };
}
export const saveClusterConfig = (storage: Storage, c: ClusterConfig): Promise<void> => putJSON(storage, CLUSTER_CONFIG, c);

// ---- issued certificates ----

const certKey = (serial: string): string => CERTS_PREFIX + serial.toLowerCase().replace(/:/g, '-');

export const loadCert = (storage: Storage, serial: string): Promise<CertEntry | null> => getJSON<CertEntry>(storage, certKey(serial));
export const saveCert = (storage: Storage, serial: string, e: CertEntry): Promise<void> => putJSON(storage, certKey(serial), e);
export const deleteCert = (storage: Storage, serial: string): Promise<void> => storage.delete(certKey(serial));
