// What issuing code needs from an issuer: its parsed certificate, its key, its chain and the AIA
// URLs its certificates carry; the leaf NotAfter rule; and the response shape every issue/sign
// path shares (reference §1.2–1.3).

import { encodePrivateKey, type PkiKey, type Signer } from '../../crypto/pki/keys';
import { certPem, parseCertificate, type ParsedCert } from '../../crypto/pki/certificate';
import { toBase64 } from '../../crypto/encoding';
import { formatRFC3339Nano } from '../../framework/duration';
import { badRequest } from '../../framework/errors';
import type { Storage } from '../../framework/storage';
import { buildChain } from './chain';
import { templateAia } from './paths/config';
import { keySigner, type KeyAccess, type SignatureChoice } from './signers';
import {
  issuersRevision,
  loadAllIssuers,
  loadKey,
  resolveIssuerRef,
  saveCert,
  urlsConfig,
  type AiaUrls,
  type IssuerEntry,
  type IssuerUsage,
  type KeyEntry,
} from './store';

export interface SigningIssuer {
  entry: IssuerEntry;
  cert: ParsedCert;
  /** The issuer's key (local or managed: sign through issuerSigner). */
  keyEntry: KeyEntry;
  /** How a managed key is reached, for this request. */
  access: KeyAccess;
  /** ca_chain: the issuer first, up to and including its root. */
  chainPems: string[];
  /** Issuer-level AIA when set, else the mount's config/urls; templates filled in. */
  aia: AiaUrls;
}

// Per-isolate caches. Certificates are cached by their stored encoding, so a changed record never
// meets a stale entry. Chains are keyed by the issuer and the mount's issuers revision (store.ts),
// which every issuer write changes.
const CACHE_MAX = 256;
const certs = new Map<string, ParsedCert>();
const chains = new Map<string, string[]>();

function remember<V>(cache: Map<string, V>, k: string, v: V): V {
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(k, v);
  return v;
}

/** The parsed issuer certificate (shared: callers must not modify it). */
export const issuerCert = (e: IssuerEntry): ParsedCert => certs.get(e.certificate) ?? remember(certs, e.certificate, parseCertificate(e.certificate));

/** Vault's usage refusal, naming the issuer as Vault does. */
function usageError(e: IssuerEntry, usage: IssuerUsage): never {
  const label = e.name ? `${e.id} (${e.name})` : e.id;
  throw badRequest(`requested usage ${usage} for issuer [${label}] but only had usage ${e.usage.join(',')}`);
}

/** The issuer `ref` names, ready to sign for `usage`: it must allow that usage and hold a key. */
export async function signingIssuer(storage: Storage, ref: string, usage: IssuerUsage, access: KeyAccess): Promise<SigningIssuer> {
  const entry = await resolveIssuerRef(storage, ref);
  if (!entry.usage.includes(usage)) usageError(entry, usage);
  if (usage === 'issuing-certificates' && entry.revoked) {
    throw badRequest(`issuer ${entry.id} has been revoked and can no longer issue certificates`);
  }
  const keyEntry = entry.keyId ? await loadKey(storage, entry.keyId) : null;
  if (!keyEntry) throw badRequest(`issuer ${entry.id} has no private key and cannot sign`);
  return {
    entry,
    cert: issuerCert(entry),
    keyEntry,
    access,
    chainPems: await caChain(storage, entry),
    aia: await issuerAia(storage, entry),
  };
}

/** The issuer's signer: its key with the chosen algorithm (a managed key is resolved now). */
export const issuerSigner = (s: SigningIssuer, choice: SignatureChoice): Promise<Signer> => keySigner(s.access, s.keyEntry, choice);

/** The issuer's ca_chain as trimmed PEMs, the issuer first. */
export async function caChain(storage: Storage, issuer: IssuerEntry): Promise<string[]> {
  // Issuer ids are random UUIDs and the revision changes with any issuer write: the key cannot
  // meet another mount's chain or an outdated one.
  const cacheKey = `${issuer.id}|${await issuersRevision(storage)}`;
  const hit = chains.get(cacheKey);
  if (hit) return hit;
  const chain = await buildChain(await loadAllIssuers(storage), issuer);
  return remember(
    chains,
    cacheKey,
    chain.map((e) => e.certificate),
  );
}

/** The AIA URLs certificates signed by this issuer carry: its own, else config/urls, templated. */
export async function issuerAia(storage: Storage, issuer: IssuerEntry): Promise<AiaUrls> {
  return await templateAia(storage, issuer.id, issuer.aia ?? (await urlsConfig(storage)));
}

/** The issuer's leaf_not_after_behavior applied to a certificate it is about to sign. */
export function applyNotAfterBehavior(s: SigningIssuer, notAfter: Date): Date {
  const caEnd = s.cert.notAfter;
  if (notAfter.getTime() <= caEnd.getTime()) return notAfter;
  switch (s.entry.leafNotAfterBehavior) {
    case 'permit':
      return notAfter;
    case 'truncate':
      return caEnd;
    default:
      throw badRequest(
        `cannot satisfy request, as TTL would result in notAfter of ${formatRFC3339Nano(notAfter)} that is beyond the expiration of the CA certificate at ${formatRFC3339Nano(caEnd)}`,
      );
  }
}

/** What the response and the store need of a certificate just signed (no need to parse it back). */
export type IssuedCert = Pick<ParsedCert, 'der' | 'serial' | 'notAfter'>;

/** Records an issued certificate under certs/ (not for no_store roles). */
export async function storeIssued(storage: Storage, cert: IssuedCert, issuerId: string): Promise<void> {
  await saveCert(storage, cert.serial, {
    certificate: toBase64(cert.der),
    issuerId,
    expiresAt: Math.floor(cert.notAfter.getTime() / 1000),
  });
}

export type CertFormat = 'pem' | 'der' | 'pem_bundle';

export function checkFormat(format: string): CertFormat {
  if (format === 'pem' || format === 'der' || format === 'pem_bundle') return format;
  throw badRequest('the "format" path parameter must be "pem", "der", or "pem_bundle"');
}

const pemToDerB64 = (pem: string): string => toBase64(parseCertificate(pem).der);

export interface IssuedShapeInput {
  cert: IssuedCert;
  issuer: SigningIssuer;
  format: CertFormat;
  removeRootsFromChain: boolean;
  /** issue/*: the generated key and how to encode it. */
  privateKey?: { key: PkiKey; keyFormat: 'der' | 'pkcs8' };
}

/** The `data` of issue/sign responses: certificate, issuing_ca, ca_chain, private key, serial, expiration. */
export function issuedData(i: IssuedShapeInput): Record<string, unknown> {
  const { cert, issuer, format } = i;
  let chain = issuer.chainPems;
  if (i.removeRootsFromChain) chain = chain.filter((p) => !parseCertificate(p).selfIssued);
  const der = format === 'der';
  const pem = certPem(cert.der);
  const data: Record<string, unknown> = {
    certificate: der ? toBase64(cert.der) : pem,
    issuing_ca: der ? pemToDerB64(issuer.entry.certificate) : issuer.entry.certificate,
  };
  if (chain.length > 0) data.ca_chain = der ? chain.map(pemToDerB64) : chain;
  if (i.privateKey) {
    const { key, keyFormat } = i.privateKey;
    data.private_key = encodePrivateKey(key, keyFormat, der ? 'der' : 'pem');
    data.private_key_type = key.type;
  }
  if (format === 'pem_bundle') {
    // The bundle: key (issue only; private_key_format does not apply inside it), certificate, and
    // the issuing CA unless it is a self-signed root.
    const parts: string[] = [];
    if (i.privateKey) parts.push(encodePrivateKey(i.privateKey.key, 'der', 'pem'));
    parts.push(pem);
    if (!issuer.cert.selfIssued) parts.push(issuer.entry.certificate);
    data.certificate = parts.join('\n');
  }
  data.serial_number = cert.serial;
  data.expiration = Math.floor(cert.notAfter.getTime() / 1000);
  return data;
}
