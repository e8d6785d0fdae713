// Issuing one leaf certificate, shared by issue/, sign/ and sign-verbatim/: the issuer, the
// names the role allows, the validity window, the certificate's extensions, a fresh serial, the
// response shape, storage under certs/ and the optional lease (reference §1.3, §1.15).

import { buildCertificate, type CertTemplate } from '../../crypto/pki/certificate';
import type { ParsedCsr } from '../../crypto/pki/csr';
import { generateKey, subjectKeyId, type PkiKey } from '../../crypto/pki/keys';
import { randomSerial, timeOrderedSerial } from '../../crypto/pki/serial';
import type { LogicalRequest, LogicalResponse, MountConfigView } from '../../framework/backend';
import { asCofferError, badRequest, CofferError } from '../../framework/errors';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import { applyNotAfterBehavior, checkFormat, issuedData, issuerSigner, signingIssuer, storeIssued, type IssuedCert, type SigningIssuer } from './authority';
import type { NameContext } from './name-policy';
import { leafNames, type LeafNameRequest } from './request-policy';
import { notAfterFrom, type RoleEntry } from './role';
import type { KeyAccess } from './signers';
import { loadCert } from './store';

/** Request fields every issue/sign path takes (Vault's addNonCACommonFields). */
export const LEAF_FIELDS: FieldSchemas = {
  common_name: { type: 'string', description: 'Requested common name' },
  alt_names: { type: 'comma-string-list', description: 'DNS names and email addresses for the SAN' },
  ip_sans: { type: 'comma-string-list', description: 'IP SANs' },
  uri_sans: { type: 'comma-string-list', description: 'URI SANs' },
  other_sans: { type: 'comma-string-list', description: 'Other SANs, <oid>;UTF8:<value>' },
  serial_number: { type: 'string', description: "The subject's serialNumber attribute (not the certificate serial)" },
  user_ids: { type: 'comma-string-list', description: 'UID attributes of the subject' },
  ttl: { type: 'duration', description: 'Requested validity' },
  not_after: { type: 'string', description: 'Fixed NotAfter, YYYY-MM-ddTHH:MM:SSZ (instead of ttl)' },
  format: { type: 'string', description: 'pem, der or pem_bundle', default: 'pem' },
  private_key_format: { type: 'string', description: 'der or pkcs8', default: 'der' },
  exclude_cn_from_sans: { type: 'bool', description: 'Keep the CN out of the SANs' },
  remove_roots_from_chain: { type: 'bool', description: 'Drop self-signed certificates from ca_chain' },
};

export const ROLE_PATH_FIELD = { type: 'string', description: 'Role name', required: true } as const;
export const ISSUER_REF_FIELD = { type: 'string', description: 'Issuer id, name or default', required: true } as const;

/** Vault's KeyUsage names (lowercased) in canonical spelling; unknown names are ignored as Vault does. */
const KEY_USAGES = ['DigitalSignature', 'ContentCommitment', 'KeyEncipherment', 'DataEncipherment', 'KeyAgreement', 'CertSign', 'CRLSign', 'EncipherOnly', 'DecipherOnly'];
/** ExtKeyUsage names in the order Vault adds them to a certificate. */
const EXT_KEY_USAGES = [
  'Any',
  'ServerAuth',
  'ClientAuth',
  'CodeSigning',
  'EmailProtection',
  'IPSECEndSystem',
  'IPSECTunnel',
  'IPSECUser',
  'TimeStamping',
  'OCSPSigning',
  'MicrosoftServerGatedCrypto',
  'NetscapeServerGatedCrypto',
];

const canonical = (names: readonly string[], known: readonly string[]): string[] => {
  const wanted = new Set(names.map((n) => n.trim().toLowerCase()));
  return known.filter((k) => wanted.has(k.toLowerCase()));
};

export const keyUsageNames = (role: RoleEntry): string[] => canonical(role.keyUsage, KEY_USAGES);

/** The role's EKU flags plus its ext_key_usage names, deduplicated in Vault's order. */
export function extKeyUsageNames(role: RoleEntry): string[] {
  const names = [...role.extKeyUsage];
  if (role.serverFlag) names.push('ServerAuth');
  if (role.clientFlag) names.push('ClientAuth');
  if (role.codeSigningFlag) names.push('CodeSigning');
  if (role.emailProtectionFlag) names.push('EmailProtection');
  return canonical(names, EXT_KEY_USAGES);
}

/** The name fields of a request (CA requests pass `userIds` themselves: they take no user_ids field). */
export function nameRequest(f: FieldData, userIds: string[] = f.get<string[]>('user_ids')): LeafNameRequest {
  return {
    commonName: f.get<string>('common_name'),
    altNames: f.has('alt_names') ? f.get<string[]>('alt_names') : null,
    ipSans: f.get<string[]>('ip_sans'),
    uriSans: f.get<string[]>('uri_sans'),
    otherSans: f.get<string[]>('other_sans'),
    serialNumber: f.get<string>('serial_number'),
    excludeCnFromSans: f.get<boolean>('exclude_cn_from_sans'),
    userIds,
  };
}

/** The caller as the name rules see it: token display name, entity for templates. */
export async function nameContext(req: LogicalRequest, role: RoleEntry): Promise<NameContext> {
  const auth = req.auth;
  const displayName = auth?.displayName ?? '';
  if (!auth?.entityId) return { displayName, identity: null };
  // The entity's name and aliases are fetched only for roles whose templates may need them.
  const entity = role.allowedDomainsTemplate || role.allowedUriSansTemplate ? await req.entity?.() : null;
  return {
    displayName,
    identity: {
      entityId: auth.entityId,
      entityName: entity?.name,
      aliasNames: entity ? Object.fromEntries(entity.aliases.map((a) => [a.mountAccessor, a.name])) : undefined,
    },
  };
}

/** The issuer, with Vault's wrapping of "no such issuer" style refusals. */
export async function fetchIssuer(req: LogicalRequest, ref: string, access: KeyAccess): Promise<SigningIssuer> {
  try {
    return await signingIssuer(req.storage, ref, 'issuing-certificates', access);
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError && e.status === 400) {
      throw badRequest(`could not fetch the CA certificate (was one set?): ${e.errors.join('; ')}`);
    }
    throw e;
  }
}

/**
 * NotAfter (Vault's GetCertificateNotAfter): request ttl, else the role's, else the mount default;
 * capped by the role's max_ttl (else the mount's) with a warning; not_after (the role's wins)
 * instead of a ttl; then the issuer's leaf_not_after_behavior.
 */
export function leafNotAfter(
  role: RoleEntry,
  request: { ttl: number; notAfter: string },
  mount: MountConfigView,
  issuer: SigningIssuer,
  now: number,
): { notAfter: Date; warnings: string[] } {
  const warnings: string[] = [];
  const fixed = role.notAfter !== '' ? role.notAfter : request.notAfter;
  const fallbackTtl = role.ttl > 0 ? role.ttl : mount.defaultLeaseTTL;
  const maxTtl = role.maxTtl > 0 ? role.maxTtl : mount.maxLeaseTTL;
  let notAfter = notAfterFrom(request.ttl, fallbackTtl, fixed, maxTtl, now, warnings);
  notAfter = applyNotAfterBehavior(issuer, notAfter);
  if (notAfter.getTime() < now - role.notBeforeDuration * 1000) throw badRequest('notAfter before notBefore');
  return { notAfter, warnings };
}

/** A time-ordered serial not yet used by a stored certificate of this mount. */
export async function freshSerial(req: LogicalRequest): Promise<string> {
  for (;;) {
    const serial = timeOrderedSerial();
    if (!(await loadCert(req.storage, serial))) return serial;
  }
}

/**
 * A CSR's key against the role (Vault's SignCert checks): the type must match unless the role
 * says `any`, and the size must reach the role's key_bits (`any`: RSA 2048, EC 224).
 */
export function checkCsrKey(role: RoleEntry, csr: ParsedCsr): void {
  // parseCsr refused a key publicKeyInfo could not read, with Vault's text for it.
  const info = csr.keyInfo;
  let min = role.keyBits;
  if (role.keyType === 'any') {
    if (info.type === 'rsa' && info.bits < 2048) throw badRequest('RSA keys < 2048 bits are unsafe and not supported');
    min = info.type === 'rsa' ? 2048 : info.type === 'ec' ? 224 : 0;
  } else if (info.type !== role.keyType) {
    throw badRequest(`role requires keys of type ${role.keyType}`);
  }
  if (info.type === 'rsa' || info.type === 'ec') {
    if (info.bits < min) throw badRequest(`role requires a minimum of a ${min}-bit key, but CSR's key is ${info.bits} bits`);
  }
  if (info.type === 'rsa' && info.bits < 2048) {
    throw badRequest(`Vault requires a minimum of a 2048-bit key, but CSR's key is ${info.bits} bits`);
  }
}

/** What differs between issue, sign and sign-verbatim. */
export type LeafSource =
  | { kind: 'issue'; keyType: PkiKey['type']; keyBits: number }
  | { kind: 'sign'; csr: ParsedCsr }
  | { kind: 'verbatim'; csr: ParsedCsr; requestedOtherSans: boolean };

const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';

/**
 * Issues, stores (unless no_store) and answers. `role` is the effective role (sign-verbatim's is
 * built on the fly); `issuer` has been fetched (and a CSR's key checked) by the caller.
 */
export async function issueLeaf(
  req: LogicalRequest,
  f: FieldData,
  role: RoleEntry,
  issuer: SigningIssuer,
  source: LeafSource,
): Promise<{ response: LogicalResponse; cert: IssuedCert }> {
  const format = checkFormat(f.get<string>('format'));
  const now = Date.now();
  const csr = source.kind === 'issue' ? null : source.csr;
  const names = leafNames(role, nameRequest(f), csr, await nameContext(req, role));
  const { notAfter, warnings } = leafNotAfter(role, { ttl: f.get<number>('ttl'), notAfter: f.get<string>('not_after') }, req.mountConfig, issuer, now);

  const key = source.kind === 'issue' ? await generateKey(source.keyType, source.keyBits, req.rsaPairs) : null;
  const spki = key ? key.spki : (csr as ParsedCsr).spki;
  const backdate = role.notBeforeDuration > 0 ? role.notBeforeDuration : 30;
  const template: CertTemplate = {
    // A stored certificate never reuses a stored serial; an unstored one leaves nothing to collide
    // with, and 159 random bits make meeting a stored serial beyond improbable. Only stored ones
    // begin with their time: their rows are what the order helps.
    serial: role.noStore ? randomSerial() : await freshSerial(req),
    subject: names.subject,
    sans: names.sans,
    notBefore: new Date(now - backdate * 1000),
    notAfter,
    spki,
    isCA: false,
    maxPathLength: -1,
    basicConstraintsForNonCA: role.basicConstraintsValidForNonCa,
    keyUsage: keyUsageNames(role),
    extKeyUsage: extKeyUsageNames(role),
    extKeyUsageOids: [...role.extKeyUsageOids],
    permittedDnsDomains: [],
    policyIdentifiers: [...role.policyIdentifiers],
    issuingCertificates: issuer.aia.issuingCertificates,
    ocspServers: issuer.aia.ocspServers,
    crlDistributionPoints: issuer.aia.crlDistributionPoints,
    deltaCrlDistributionPoints: issuer.aia.deltaCrlDistributionPoints,
  };

  if (csr?.basicConstraints) warnings.push('specified CSR contained a Basic Constraints extension that was ignored during issuance');
  if (source.kind === 'verbatim') {
    // Values come from the CSR as they are; its own key usage / EKU extensions win over the
    // request's defaults, and its basic constraints never make it into a leaf.
    template.subject = { der: source.csr.subjectDer };
    // Other SANs: the CSR's plus the request's other_sans (which then replace the CSR's SAN extension).
    template.sans = { ...source.csr.sans, otherNames: names.sans.otherNames };
    if (source.csr.keyUsage !== null) template.keyUsage = [];
    if (source.csr.extKeyUsage !== null) {
      template.extKeyUsage = [];
      template.extKeyUsageOids = [];
    }
    template.extraExtensions = source.csr.extensions
      .filter((e) => e.oid !== OID_BASIC_CONSTRAINTS && !(source.requestedOtherSans && e.oid === OID_SUBJECT_ALT_NAME))
      .map((e) => e.der);
  }

  const signer = await issuerSigner(issuer, { signatureBits: role.signatureBits, usePss: role.usePss });
  const issuerSkid = issuer.cert.skid ?? (await subjectKeyId(issuer.cert.spki));
  const der = await buildCertificate(template, { subjectDer: issuer.cert.subjectDer, skid: issuerSkid, signer });
  // What the certificate holds is what the template said (its NotAfter to the second).
  const cert: IssuedCert = { der, serial: template.serial, notAfter: new Date(Math.floor(template.notAfter.getTime() / 1000) * 1000) };

  const data = issuedData({
    cert,
    issuer,
    format,
    removeRootsFromChain: f.get<boolean>('remove_roots_from_chain'),
    privateKey: key ? { key, keyFormat: f.get<string>('private_key_format') === 'pkcs8' ? 'pkcs8' : 'der' } : undefined,
  });
  if (!role.noStore) await storeIssued(req.storage, cert, issuer.entry.id);

  const response: LogicalResponse = { data };
  if (role.generateLease) {
    response.secret = {
      type: 'pki',
      ttl: Math.max(1, Math.floor((cert.notAfter.getTime() - Date.now()) / 1000)),
      renewable: false,
      internal: { serial_number: cert.serial },
    };
  }
  if (csr) {
    if (role.useCsrCommonName && f.get<string>('common_name') !== '') {
      warnings.push('the common_name field was provided but the role is set with "use_csr_common_name" set to true');
    }
    if (role.useCsrSans && f.has('alt_names') && f.get<string[]>('alt_names').length > 0) {
      warnings.push('the alt_names field was provided but the role is set with "use_csr_sans" set to true');
    }
  }
  if (warnings.length > 0) response.warnings = warnings;
  return { response, cert };
}
