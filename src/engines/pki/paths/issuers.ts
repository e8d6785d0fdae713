// The mount's issuers (reference §1.6): LIST issuers, issuer/:issuer_ref read, replace (POST),
// merge-patch (PATCH) and delete, and DELETE root. Revoking an issuer is revoke.ts's.

import { parseCertificate, verifySignedBy, type ParsedCert } from '../../../crypto/pki/certificate';
import { GO_SIGNATURE_ALGORITHMS, publicKeyInfo, signerForGoName } from '../../../crypto/pki/keys';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef } from '../../../framework/backend';
import { badRequest, notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import type { Storage } from '../../../framework/storage';
import { caChain } from '../authority';
import { isManaged, keyFromEntry } from '../signers';
import { AIA_LISTS, aiaEmpty, checkAiaUrls, templatingWarning } from './config';
import { markCrlsStale } from '../revoked-store';
import { listRoles, loadRole } from '../role';
import {
  ALL_USAGES,
  checkIssuerName,
  deleteIssuer,
  deleteKey,
  emptyAia,
  findIssuer,
  issuersConfig,
  keysConfig,
  loadAllIssuers,
  loadAllKeys,
  loadKey,
  resolveIssuerRef,
  saveIssuer,
  saveIssuersConfig,
  saveKeysConfig,
  type AiaUrls,
  type IssuerEntry,
  type IssuerUsage,
  type LeafNotAfterBehavior,
} from '../store';

const NAME_RE = /^\w(?:[\w.-]*\w)?$/;
const PSS_WARNING =
  'Issuer uses a PSS Revocation Signature Algorithm. This algorithm will be downgraded to PKCS#1v1.5 signature scheme on OCSP responses, due to limitations in the OCSP library.';

// ---- the issuer read shape ----

/** GET issuer/:ref `data` (also the answer of updates and of issuer revocation). */
export async function issuerView(storage: Storage, e: IssuerEntry): Promise<Record<string, unknown>> {
  const aia = e.aia;
  const data: Record<string, unknown> = {
    issuer_id: e.id,
    issuer_name: e.name,
    key_id: e.keyId,
    certificate: e.certificate,
    ca_chain: await caChain(storage, e),
    manual_chain: e.manualChain && e.manualChain.length > 0 ? e.manualChain : null,
    leaf_not_after_behavior: e.leafNotAfterBehavior,
    usage: ALL_USAGES.filter((u) => u === 'read-only' || e.usage.includes(u)).join(','),
    revocation_signature_algorithm: e.revocationSignatureAlgorithm,
    revoked: e.revoked,
    issuing_certificates: aia?.issuingCertificates ?? [],
    crl_distribution_points: aia?.crlDistributionPoints ?? [],
    delta_crl_distribution_points: aia?.deltaCrlDistributionPoints ?? [],
    ocsp_servers: aia?.ocspServers ?? [],
    enable_aia_url_templating: aia?.enableTemplating ?? false,
  };
  if (e.revoked) {
    data.revocation_time = e.revocationTime;
    data.revocation_time_rfc3339 = e.revocationTimeNanos;
  }
  return data;
}

/** The issuer read response, with Vault's PSS warning. */
export async function issuerResponse(storage: Storage, e: IssuerEntry, warnings: string[] = []): Promise<LogicalResponse> {
  const all = [...warnings];
  if (/PSS$/.test(e.revocationSignatureAlgorithm)) all.push(PSS_WARNING);
  return { data: await issuerView(storage, e), ...(all.length ? { warnings: all } : {}) };
}

// ---- validation of issuer fields ----

function parseLeafBehavior(v: string): LeafNotAfterBehavior {
  if (v === 'err' || v === 'truncate' || v === 'permit') return v;
  throw badRequest('Unknown value for field `leaf_not_after_behavior`. Possible values are `err`, `truncate`, and `permit`.');
}

function parseUsage(raw: string[]): IssuerUsage[] {
  const wanted = new Set<string>(['read-only']);
  for (const r of raw) {
    const u = r.trim().toLowerCase();
    if (!(ALL_USAGES as readonly string[]).includes(u)) {
      throw badRequest(`Unable to parse specified usages: [${raw.join(' ')}] - valid values are ${ALL_USAGES.join(',')}`);
    }
    wanted.add(u);
  }
  return ALL_USAGES.filter((u) => wanted.has(u));
}

const hasKeyUsage = (cert: ParsedCert, name: string): boolean => cert.keyUsage.some((u) => u.toLowerCase() === name.toLowerCase());

function checkUsageChange(e: IssuerEntry, cert: ParsedCert, usage: IssuerUsage[]): void {
  if (e.revoked && usage.includes('issuing-certificates')) {
    throw badRequest(
      'This issuer was revoked; unable to modify its usage to include certificate signing again. Reissue this certificate (preferably with a new key) and modify that entry instead.',
    );
  }
  if (usage.includes('crl-signing') && !hasKeyUsage(cert, 'CRLSign')) {
    throw badRequest("This issuer's underlying certificate lacks the CRLSign KeyUsage value; unable to set CRLSigningUsage on this issuer as a result.");
  }
}

const FAMILY: Record<string, RegExp> = { rsa: /RSA/, ec: /^ECDSA/, ed25519: /Ed25519$/ };

/** '' or the canonical Go name; 400 when unknown or unusable with the issuer's key. */
async function parseRevocationAlgorithm(storage: Storage, e: IssuerEntry, cert: ParsedCert, v: string): Promise<string> {
  if (v === '') return '';
  const name = GO_SIGNATURE_ALGORITHMS.find((n) => n.toLowerCase() === v.toLowerCase());
  if (!name) throw badRequest(`Unknown signature algorithm value: ${v} - valid values are ${GO_SIGNATURE_ALGORITHMS.join(', ')}`);
  const key = e.keyId ? await loadKey(storage, e.keyId) : null;
  if (key && !isManaged(key)) {
    await signerForGoName(keyFromEntry(key), name);
  } else {
    // No key here to try (none, or in an HSM): the key type decides.
    const type = key ? key.type : publicKeyInfo(cert.spki).type;
    if (!FAMILY[type].test(name)) throw badRequest(`signature algorithm ${name} cannot be used with a key of type ${type}`);
  }
  return name;
}

/** manual_chain references → issuer ids; the first must be the issuer itself, each later one signs the one before. */
async function resolveManualChain(storage: Storage, e: IssuerEntry, refs: string[]): Promise<string[] | null> {
  if (refs.length === 0) return null;
  const chain: IssuerEntry[] = [];
  for (const [i, raw] of refs.entries()) {
    const ref = i === 0 && raw === 'self' ? e.id : raw;
    const found = ref === e.id ? e : await resolveIssuerRef(storage, ref);
    if (i === 0 && found.id !== e.id) throw badRequest(`expected first cert in chain to be a self-reference, but was: ${raw}/${found.id}`);
    chain.push(found);
  }
  const certs = chain.map((c) => parseCertificate(c.certificate));
  for (let i = 1; i < certs.length; i++) {
    if (!(await verifySignedBy(certs[i - 1], certs[i].spki))) {
      throw badRequest(`invalid manual_chain: issuer ${chain[i].id} did not sign the certificate of issuer ${chain[i - 1].id}`);
    }
  }
  const last = certs[certs.length - 1];
  if (!last.selfIssued || !(await verifySignedBy(last, last.spki))) {
    throw badRequest(`invalid manual_chain: the last issuer (${chain[chain.length - 1].id}) is not a self-signed root`);
  }
  return chain.map((c) => c.id);
}

/** Warnings naming how many roles use `name` as their issuer_ref (Vault's addWarningOnDereferencing). */
async function roleReferenceWarnings(storage: Storage, name: string): Promise<string[]> {
  let count = 0;
  for (const r of (await listRoles(storage)).filter((n) => !n.endsWith('/'))) {
    if ((await loadRole(storage, r))?.issuerRef === name) count++;
  }
  return count > 0 ? [`${count} roles reference ${name}`] : [];
}

// ---- handlers ----

async function listIssuers(req: LogicalRequest) {
  const issuers = await loadAllIssuers(req.storage);
  if (issuers.length === 0) throw notFound();
  const { default: defaultId } = await issuersConfig(req.storage);
  const keyInfo: Record<string, unknown> = {};
  for (const e of issuers) {
    keyInfo[e.id] = { issuer_name: e.name, is_default: e.id === defaultId, serial_number: e.serial, key_id: e.keyId };
  }
  return { data: { keys: issuers.map((e) => e.id), key_info: keyInfo } };
}

const issuerRef = (f: FieldData): string => {
  const ref = f.get<string>('issuer_ref').trim();
  return ref.toLowerCase() === 'default' ? 'default' : ref;
};

/**
 * POST (`patch` false) replaces every field, missing ones taking their defaults; PATCH changes
 * only the fields given. Everything is checked before anything is written.
 */
async function updateIssuer(req: LogicalRequest, f: FieldData, patch: boolean): Promise<LogicalResponse> {
  const e = await resolveIssuerRef(req.storage, issuerRef(f));
  const cert = parseCertificate(e.certificate);
  const given = (name: string) => !patch || f.has(name);
  const next: IssuerEntry = { ...e };
  const warnings: string[] = [];

  if (given('issuer_name')) {
    const name = f.has('issuer_name') ? f.get<string>('issuer_name').trim() : '';
    if (!patch && f.has('issuer_name') && name === '') throw badRequest('expected non-empty issuer name');
    if (name !== '') {
      if (name.toLowerCase() === 'default') throw badRequest("reserved keyword 'default' can not be used as issuer name");
      if (!NAME_RE.test(name)) throw badRequest('issuer name contained invalid characters');
      await checkIssuerName(req.storage, name, e.id);
    }
    next.name = name;
  }
  if (given('leaf_not_after_behavior')) next.leafNotAfterBehavior = parseLeafBehavior(f.get<string>('leaf_not_after_behavior'));
  if (given('usage')) {
    const usage = parseUsage(f.get<string[]>('usage'));
    if (usage.join() !== e.usage.join()) checkUsageChange(e, cert, usage);
    next.usage = usage;
  }
  if (given('revocation_signature_algorithm')) {
    next.revocationSignatureAlgorithm = await parseRevocationAlgorithm(req.storage, e, cert, f.get<string>('revocation_signature_algorithm').trim());
  }

  // AIA: POST replaces the set; PATCH merges into the issuer's current one.
  const aia: AiaUrls = patch && e.aia ? { ...e.aia } : emptyAia();
  if (given('enable_aia_url_templating')) aia.enableTemplating = f.get<boolean>('enable_aia_url_templating');
  for (const [field, k] of AIA_LISTS) if (given(field)) aia[k] = f.get<string[]>(field);
  checkAiaUrls(aia);
  next.aia = aiaEmpty(aia) ? null : aia;

  if (given('manual_chain')) next.manualChain = await resolveManualChain(req.storage, e, f.get<string[]>('manual_chain'));

  if (JSON.stringify(next) !== JSON.stringify(e)) {
    next.lastModified = Date.now();
    await saveIssuer(req.storage, next);
    await markCrlsStale(req.storage, { complete: true });
  }
  if (next.name !== e.name && e.name) warnings.push(...(await roleReferenceWarnings(req.storage, e.name)));
  if (next.aia?.enableTemplating) {
    const w = await templatingWarning(req.storage, next.id, next.aia);
    if (w) warnings.push(w);
  }
  if (next.aia && next.aia.deltaCrlDistributionPoints.length > 0 && next.aia.crlDistributionPoints.length === 0) {
    warnings.push(
      `delta crl distribution points were set: ${next.aia.deltaCrlDistributionPoints.join(', ')} but no base crl distribution point was set, consider setting base crl distribution point.`,
    );
  }
  return await issuerResponse(req.storage, next, warnings);
}

async function removeIssuer(req: LogicalRequest, f: FieldData): Promise<LogicalResponse | null> {
  const ref = issuerRef(f);
  const e = await findIssuer(req.storage, ref);
  if (!e) return null; // As Vault: deleting what is not there succeeds.
  const warnings: string[] = [];
  if (e.name) warnings.push(...(await roleReferenceWarnings(req.storage, e.name)));
  warnings.push(...(await roleReferenceWarnings(req.storage, e.id)));
  await deleteIssuer(req.storage, e.id);
  const cfg = await issuersConfig(req.storage);
  if (cfg.default === e.id) {
    await saveIssuersConfig(req.storage, { ...cfg, default: '' });
    warnings.push(
      `Deleted issuer ${e.id} (via issuer_ref ${ref}); this was configured as the default issuer. Operations without an explicit issuer will not work until a new default is configured.`,
    );
    warnings.push(...(await roleReferenceWarnings(req.storage, 'default')));
  }
  await markCrlsStale(req.storage, { complete: true, force: true });
  return warnings.length ? { warnings } : null;
}

async function deleteRoot(req: LogicalRequest): Promise<LogicalResponse> {
  for (const e of await loadAllIssuers(req.storage)) await deleteIssuer(req.storage, e.id);
  for (const k of await loadAllKeys(req.storage)) await deleteKey(req.storage, k.id);
  const cfg = await issuersConfig(req.storage);
  if (cfg.default) await saveIssuersConfig(req.storage, { ...cfg, default: '' });
  if ((await keysConfig(req.storage)).default) await saveKeysConfig(req.storage, { default: '' });
  await markCrlsStale(req.storage, { complete: true, force: true });
  return {
    warnings: [
      'DELETE /root deletes all keys and issuers; prefer the new DELETE /key/:key_ref and DELETE /issuer/:issuer_ref for finer granularity, unless removal of all keys and issuers is desired.',
    ],
  };
}

export const ISSUER_UPDATE_FIELDS: FieldSchemas = {
  issuer_name: { type: 'string', description: 'Name of the issuer (unique; not "default")' },
  manual_chain: { type: 'comma-string-list', description: 'Issuer references the CA chain is built from; the first is this issuer ("self")' },
  leaf_not_after_behavior: { type: 'string', description: 'err, truncate or permit: leaves outliving this issuer', default: 'err' },
  usage: { type: 'comma-string-list', description: 'read-only, issuing-certificates, crl-signing, ocsp-signing', default: [...ALL_USAGES] },
  revocation_signature_algorithm: { type: 'string', description: 'Go name of the CRL/OCSP signature algorithm ("" = the key default)', default: '' },
  issuing_certificates: { type: 'comma-string-list', description: 'AIA caIssuers URLs for this issuer' },
  crl_distribution_points: { type: 'comma-string-list', description: 'CRL distribution point URLs for this issuer' },
  delta_crl_distribution_points: { type: 'comma-string-list', description: 'Delta CRL distribution point URLs for this issuer' },
  ocsp_servers: { type: 'comma-string-list', description: 'OCSP responder URLs for this issuer' },
  enable_aia_url_templating: { type: 'bool', description: 'Fill {{issuer_id}}, {{cluster_path}}, {{cluster_aia_path}} in the AIA URLs' },
};

export function issuerPaths(): PathDef[] {
  const ref = { type: 'string', description: 'Issuer id, name, or "default"', default: 'default' } as const;
  return [
    {
      pattern: 'issuers/?',
      summary: "List the mount's issuers.",
      operations: { list: listIssuers },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}`,
      fields: { issuer_ref: ref, ...ISSUER_UPDATE_FIELDS },
      summary: 'Read, replace, patch or delete an issuer.',
      operations: {
        read: async (req, f) => await issuerResponse(req.storage, await resolveIssuerRef(req.storage, issuerRef(f))),
        update: (req, f) => updateIssuer(req, f, false),
        patch: (req, f) => updateIssuer(req, f, true),
        delete: removeIssuer,
      },
    },
    {
      pattern: 'root',
      summary: 'Delete every issuer and key of the mount (sudo).',
      operations: { delete: deleteRoot },
    },
  ];
}
