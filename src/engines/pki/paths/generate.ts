// Making authorities (reference §1.4, §1.7): root/generate/:type and its aliases
// issuers/generate/root/:type and root/rotate/:type, intermediate/generate/:type with
// issuers/generate/intermediate/:type and intermediate/cross-sign (existing key), and
// keys/generate/:type. :type is internal, exported (the private key is returned once), existing
// (key_ref names a key of the mount) or kms (a managed key: kms.ts; it signs at its HSM and is
// never returned). Also the request handling a CA certificate shares with sign-intermediate:
// names, validity, path length, usages.

import { buildCertificate, parseCertificate, type CertTemplate, type ParsedCert } from '../../../crypto/pki/certificate';
import { buildCsr } from '../../../crypto/pki/csr';
import { encodePrivateKey, generateKey, resolveKeyBits, signerFor, subjectKeyId, type PkiKey, type Signer } from '../../../crypto/pki/keys';
import { randomSerial } from '../../../crypto/pki/serial';
import { toBase64 } from '../../../crypto/encoding';
import { toPem } from '../../../crypto/pem';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef } from '../../../framework/backend';
import { asCofferError, badRequest, CofferError } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import type { Storage } from '../../../framework/storage';
import { checkFormat, storeIssued, type CertFormat } from '../authority';
import { aiaEmpty, NO_AIA_WARNING, setDefaultIssuer, templateAia } from './config';
import { importIssuer, importKey, importManagedKey } from './import';
import { requestedKeyName } from './keys';
import { nameRequest } from '../leaf';
import { leafNames, type LeafNames } from '../request-policy';
import { markCrlsStale } from '../revoked-store';
import { notAfterFrom, permissiveRole, type RoleEntry } from '../role';
import { checkIssuerName, emptyAia, findIssuer, issuersConfig, resolveKeyRef, saveIssuer, urlsConfig, type AiaUrls } from '../store';
import type { ParsedCsr } from '../../../crypto/pki/csr';
import type { ManagedKeyAccess } from '../../../managed-keys/access';
import { requestedManagedKey, type ManagedKeyMaterial } from '../kms';
import { entrySpki, isManaged, keyFromEntry, keySigner, publicOnly, requestKeyAccess, type KeyAccess } from '../signers';
import type { KeyEntry } from '../store';

const NAME_RE = /^\w(?:[\w.-]*\w)?$/;

// ---- the request fields every CA certificate or CSR takes ----

export const CA_NAME_FIELDS: FieldSchemas = {
  common_name: { type: 'string', description: 'Subject common name' },
  alt_names: { type: 'comma-string-list', description: 'DNS and email SANs' },
  ip_sans: { type: 'comma-string-list', description: 'IP SANs' },
  uri_sans: { type: 'comma-string-list', description: 'URI SANs' },
  other_sans: { type: 'comma-string-list', description: 'Other SANs: <oid>;UTF8:<value>' },
  exclude_cn_from_sans: { type: 'bool', description: 'Keep the common name out of the SANs' },
  serial_number: { type: 'string', description: 'Subject serialNumber attribute (not the certificate serial)' },
  ou: { type: 'comma-string-list', description: 'Subject OU' },
  organization: { type: 'comma-string-list', description: 'Subject O' },
  country: { type: 'comma-string-list', description: 'Subject C' },
  locality: { type: 'comma-string-list', description: 'Subject L' },
  province: { type: 'comma-string-list', description: 'Subject ST' },
  street_address: { type: 'comma-string-list', description: 'Subject street address' },
  postal_code: { type: 'comma-string-list', description: 'Subject postal code' },
  ttl: { type: 'duration', description: 'Validity (default: the mount default; at most the mount maximum)' },
  not_after: { type: 'string', description: 'Fixed NotAfter, RFC 3339 (excludes ttl)' },
  not_before_duration: { type: 'duration', description: 'Backdating of NotBefore', default: 30 },
  format: { type: 'string', description: 'pem, der or pem_bundle', default: 'pem' },
  signature_bits: { type: 'int', description: 'Hash size of RSA signatures: 256, 384 or 512 (0: default)', default: 0 },
  key_usage: { type: 'comma-string-list', description: 'Key usages (CA certificates: DigitalSignature may be added)' },
};

export const CA_ISSUE_FIELDS: FieldSchemas = {
  max_path_length: { type: 'int', description: 'Basic constraints path length (-1: none)', default: -1 },
  permitted_dns_domains: { type: 'comma-string-list', description: 'Name constraints: permitted DNS domains' },
};

const KEY_GEN_FIELDS: FieldSchemas = {
  key_type: { type: 'string', description: 'rsa, ec or ed25519', default: 'rsa' },
  key_bits: { type: 'int', description: 'Key size (0: the type default)', default: 0 },
  key_ref: { type: 'string', description: 'existing: the key to use (id, name or "default")', default: 'default' },
  key_name: { type: 'string', description: 'Name for a new key' },
  managed_key_name: { type: 'string', description: 'kms: managed key name' },
  managed_key_id: { type: 'string', description: 'kms: managed key id' },
  private_key_format: { type: 'string', description: 'der (PKCS#1/SEC1) or pkcs8', default: 'der', allowed: ['', 'der', 'pem', 'pkcs8'] },
};

/** The permissive role Vault builds for CA requests: any name, no hostname rules, CN checks off. */
export function caRole(f: FieldData): RoleEntry {
  return permissiveRole({
    notBeforeDuration: f.get<number>('not_before_duration'),
    ou: f.get<string[]>('ou'),
    organization: f.get<string[]>('organization'),
    country: f.get<string[]>('country'),
    locality: f.get<string[]>('locality'),
    province: f.get<string[]>('province'),
    streetAddress: f.get<string[]>('street_address'),
    postalCode: f.get<string[]>('postal_code'),
  });
}

/** Subject and SANs of a CA request; with `csr`, a blank common_name takes the CSR's. */
export function caNames(f: FieldData, csr: ParsedCsr | null = null): LeafNames {
  const role = caRole(f);
  if (csr && f.get<string>('common_name') === '') role.useCsrCommonName = true;
  return leafNames(
    role,
    nameRequest(f, []),
    csr,
    { displayName: '', identity: null },
  );
}

/**
 * NotAfter from ttl or not_after (not both): a missing ttl is the mount's default lease TTL, and a
 * ttl above the mount's maximum is clamped with Vault's warning.
 */
export function requestedValidity(req: LogicalRequest, f: FieldData, warnings: string[]): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  const { defaultLeaseTTL, maxLeaseTTL } = req.mountConfig;
  const notAfter = notAfterFrom(f.get<number>('ttl'), defaultLeaseTTL, f.get<string>('not_after'), maxLeaseTTL, now, warnings);
  const notBefore = new Date(now - f.get<number>('not_before_duration') * 1000);
  if (notAfter.getTime() < notBefore.getTime()) throw badRequest('notAfter before notBefore');
  return { notBefore, notAfter };
}

export function checkMaxPathLength(n: number): void {
  if (n < -1) throw badRequest(`requested max_path_length ${n} is invalid: must be a non-negative integer or -1 for no constraint`);
}

const CA_USAGES = ['crlsign', 'certsign', 'digitalsignature'];
const LEAF_ONLY_USAGES = ['contentcommitment', 'keyencipherment', 'dataencipherment', 'keyagreement', 'encipheronly', 'decipheronly'];

/** Vault's validateCaKeyUsages: the problems with a CA key_usage list, '' when none. */
export function caKeyUsageProblems(list: string[]): string {
  const problems: string[] = [];
  for (const u of list) {
    const clean = u.trim().toLowerCase();
    if (CA_USAGES.includes(clean)) continue;
    problems.push(LEAF_ONLY_USAGES.includes(clean) ? `key usage ${u} is only valid for non-Ca certs` : `unrecognized key usage ${u}`);
  }
  return problems.join('; ');
}

/** CA certificates always get CertSign and CRLSign; DigitalSignature only when asked for. */
export const caKeyUsage = (list: string[]): string[] =>
  list.some((u) => u.trim().toLowerCase() === 'digitalsignature') ? ['DigitalSignature', 'CertSign', 'CRLSign'] : ['CertSign', 'CRLSign'];

/** A certificate in the response's format: PEM (trimmed) or base64 DER. */
export const certOut = (cert: ParsedCert, format: CertFormat): string => (format === 'der' ? toBase64(cert.der) : cert.pem);

export const EMPTY_SUBJECT_WARNING =
  'This issuer certificate was generated without a Subject; this makes it likely that issuing leaf certs with this certificate will cause TLS validation libraries to reject this certificate.';

export const certAiaEmpty = (a: { issuingCertificates: string[]; crlDistributionPoints: string[]; ocspServers: string[]; deltaCrlDistributionPoints: string[] }): boolean =>
  a.issuingCertificates.length === 0 && a.crlDistributionPoints.length === 0 && a.ocspServers.length === 0 && a.deltaCrlDistributionPoints.length === 0;

// ---- keys for CA requests ----

type KeySource = 'internal' | 'exported' | 'existing' | 'kms';

function keySource(raw: string): KeySource {
  if (raw === 'internal' || raw === 'exported' || raw === 'existing' || raw === 'kms') return raw;
  throw badRequest('the "exported" path parameter must be "internal", "existing", exported" or "kms"');
}

/** The RSA key size a CA or key generation request makes (none: not RSA, not new, or invalid). */
async function newRsaKeyBits(_req: LogicalRequest, f: FieldData): Promise<number[]> {
  const source = f.get<string>('type');
  if (source !== 'internal' && source !== 'exported') return [];
  try {
    const { type, bits } = resolveKeyBits(f.get<string>('key_type'), f.get<number>('key_bits'));
    return type === 'rsa' ? [bits] : [];
  } catch {
    return []; // the handler reports the invalid key type or size
  }
}

/**
 * The key a CA request signs with: a new local one (internal/exported), one of the mount's
 * (existing: local or managed) or a managed key (kms).
 */
interface CaKey {
  /** A local key, or a managed key's public half (its private half is in the HSM). */
  key: PkiKey;
  signer(signatureBits: number, usePss: boolean): Promise<Signer>;
  /** Records it among the mount's keys (an existing key is found again, not copied). */
  save(storage: Storage, name: string): Promise<KeyEntry>;
}

const localCaKey = (key: PkiKey): CaKey => ({
  key,
  signer: (signatureBits, usePss) => signerFor(key, signatureBits, usePss),
  save: async (storage, name) => (await importKey(storage, key, name)).entry,
});

function managedCaKey(access: KeyAccess, m: ManagedKeyMaterial): CaKey {
  // Not stored yet: the entry the signer needs is the one save would write.
  const pending: KeyEntry = { id: '(new)', name: '', type: m.type, bits: m.bits, pkcs8: '', spki: toBase64(m.spki), managedKeyId: m.managedKeyId };
  return {
    key: publicOnly(m.type, m.bits, m.spki),
    signer: (signatureBits, usePss) => keySigner(access, pending, { signatureBits, usePss }),
    save: async (storage, name) => (await importManagedKey(storage, m, name)).entry,
  };
}

const KMS_EXISTING_KEY_PARAMS = 'invalid parameter for the kms/existing path parameter, key_type nor key_bits arguments can be set in this mode';

async function requestKey(req: LogicalRequest, f: FieldData, source: KeySource, access: KeyAccess): Promise<CaKey> {
  if (source === 'internal' || source === 'exported') {
    const { type, bits } = resolveKeyBits(f.get<string>('key_type'), f.get<number>('key_bits'));
    return localCaKey(await generateKey(type, bits, req.rsaPairs));
  }
  if ('key_type' in f.raw || 'key_bits' in f.raw) throw badRequest(KMS_EXISTING_KEY_PARAMS);
  if (source === 'kms') return managedCaKey(access, await requestedManagedKey(access, f));
  const ref = f.get<string>('key_ref').trim();
  if (ref === '') throw badRequest('missing argument key_ref for existing type');
  const entry = await resolveKeyRef(req.storage, ref.toLowerCase() === 'default' ? 'default' : ref);
  if (!isManaged(entry)) return localCaKey(keyFromEntry(entry));
  return managedCaKey(access, { managedKeyId: entry.managedKeyId!, type: entry.type, bits: entry.bits, spki: entrySpki(entry) });
}

/** issuer_name of a new issuer: absent → '' (root/rotate: "next" when free). */
async function requestedIssuerName(storage: Storage, f: FieldData, rotate: boolean): Promise<string> {
  if (!f.has('issuer_name')) {
    if (rotate && !(await findIssuer(storage, 'next'))) return 'next';
    return '';
  }
  const name = f.get<string>('issuer_name').trim();
  if (name === '') throw badRequest('expected non-empty issuer name');
  if (name.toLowerCase() === 'default') throw badRequest("reserved keyword 'default' can not be used as issuer name");
  if (!NAME_RE.test(name)) throw badRequest('issuer name contained invalid characters');
  await checkIssuerName(storage, name, '');
  return name;
}

const privateKeyFormat = (f: FieldData): 'der' | 'pkcs8' => (f.get<string>('private_key_format') === 'pkcs8' ? 'pkcs8' : 'der');

/** The mount's AIA URLs for a new root: {{issuer_id}} cannot be filled yet, so such a config is skipped with a warning. */
async function rootAia(storage: Storage, warnings: string[]): Promise<AiaUrls> {
  const global = await urlsConfig(storage);
  try {
    return await templateAia(storage, '', global);
  } catch (e) {
    e = asCofferError(e);
    if (!(e instanceof CofferError)) throw e;
    try {
      await templateAia(storage, 'empty-issuer-id', global);
    } catch (again) {
      again = asCofferError(again);
      if (!(again instanceof CofferError)) throw again;
      throw badRequest(
        `unable to parse AIA URL information: ${e.errors[0]}\nUsing templated AIA URL's {{issuer_id}} field when generating root certificates is not supported.`,
      );
    }
    warnings.push(
      'When generating root CA, found global AIA configuration with issuer_id template unsuitable for root generation. This AIA configuration has been ignored. To include AIA on this root CA, set the global AIA configuration to not include issuer_id and instead to refer to a static issuer name.',
    );
    return emptyAia();
  }
}

// ---- root ----

async function generateRoot(req: LogicalRequest, f: FieldData, rotate: boolean, access: KeyAccess): Promise<LogicalResponse> {
  const source = keySource(f.get<string>('type'));
  const format = checkFormat(f.get<string>('format'));
  const maxPathLength = f.get<number>('max_path_length');
  checkMaxPathLength(maxPathLength);
  const issuerName = await requestedIssuerName(req.storage, f, rotate);
  const keyName = await requestedKeyName(req.storage, f);
  const later: string[] = []; // generateCert's warnings, which Vault lists last
  const names = caNames(f);
  const { notBefore, notAfter } = requestedValidity(req, f, later);
  const caKey = await requestKey(req, f, source, access);
  const key = caKey.key;
  const signer = await caKey.signer(f.get<number>('signature_bits'), f.get<boolean>('use_pss'));
  const aia = await rootAia(req.storage, later);

  const template: CertTemplate = {
    serial: randomSerial(),
    subject: names.subject,
    sans: names.sans,
    notBefore,
    notAfter,
    spki: key.spki,
    isCA: true,
    maxPathLength,
    basicConstraintsForNonCA: false,
    keyUsage: caKeyUsage(f.get<string[]>('key_usage')),
    extKeyUsage: [],
    extKeyUsageOids: [],
    permittedDnsDomains: f.get<string[]>('permitted_dns_domains'),
    policyIdentifiers: [],
    issuingCertificates: aia.issuingCertificates,
    ocspServers: aia.ocspServers,
    crlDistributionPoints: aia.crlDistributionPoints,
    deltaCrlDistributionPoints: aia.deltaCrlDistributionPoints,
  };
  const cert = parseCertificate(await buildCertificate(template, { subjectDer: null, skid: await subjectKeyId(key.spki), signer }));

  const keyEntry = await caKey.save(req.storage, keyName);
  const issuer = (await importIssuer(req.storage, cert, issuerName)).entry;
  // A fresh root's own signature algorithm is the one its CRLs use.
  await saveIssuer(req.storage, { ...issuer, revocationSignatureAlgorithm: cert.signatureGoName, lastModified: Date.now() });
  await storeIssued(req.storage, cert, issuer.id);
  await markCrlsStale(req.storage, { complete: true, force: true });
  if ((await issuersConfig(req.storage)).defaultFollowsLatestIssuer) await setDefaultIssuer(req.storage, issuer.id);

  const warnings: string[] = [];
  if (f.has('key_usage')) {
    const problems = caKeyUsageProblems(f.get<string[]>('key_usage'));
    if (problems) warnings.push(`Invalid key usage will be ignored: ${problems}`);
  }
  if (cert.subjectDer.length <= 2) warnings.push(EMPTY_SUBJECT_WARNING);
  if (certAiaEmpty(aia)) warnings.push(NO_AIA_WARNING);
  if (aia.deltaCrlDistributionPoints.length > 0 && aia.crlDistributionPoints.length === 0) {
    warnings.push('This mount has configured Delta CRL distribution points are set but no CRL Distribution Points.');
  }
  if (cert.pathLen === 0) warnings.push('Max path length of the generated certificate is zero. This certificate cannot be used to issue intermediate CA certificates.');
  warnings.push(...later);

  const data: Record<string, unknown> = {
    expiration: Math.floor(cert.notAfter.getTime() / 1000),
    serial_number: cert.serial,
    certificate: certOut(cert, format),
    issuing_ca: certOut(cert, format),
  };
  if (source === 'exported') {
    data.private_key = encodePrivateKey(key, privateKeyFormat(f), format === 'der' ? 'der' : 'pem');
    data.private_key_type = key.type;
    if (format === 'pem_bundle') data.certificate = `${encodePrivateKey(key, 'der', 'pem')}\n${cert.pem}`;
  }
  data.issuer_id = issuer.id;
  data.issuer_name = issuer.name;
  data.key_id = keyEntry.id;
  data.key_name = keyEntry.name;
  return { data, ...(warnings.length ? { warnings } : {}) };
}

// ---- intermediate CSR ----

async function generateIntermediate(req: LogicalRequest, f: FieldData, source: KeySource, access: KeyAccess): Promise<LogicalResponse> {
  const format = checkFormat(f.get<string>('format'));
  const keyName = await requestedKeyName(req.storage, f);
  const names = caNames(f);
  requestedValidity(req, f, []); // refuses ttl together with not_after, as Vault does here too
  const caKey = await requestKey(req, f, source, access);
  const key = caKey.key;
  // CSRs are never PSS-signed (Go cannot), whatever use_pss says.
  const signer = await caKey.signer(f.get<number>('signature_bits'), false);
  const csrDer = await buildCsr(
    {
      subject: names.subject,
      sans: names.sans,
      keyUsage: f.has('key_usage') ? f.get<string[]>('key_usage') : [],
      basicConstraintsCA: f.get<boolean>('add_basic_constraints'),
    },
    key,
    signer,
  );
  const keyEntry = await caKey.save(req.storage, keyName);

  const warnings: string[] = [];
  const global = await urlsConfig(req.storage);
  if (aiaEmpty(global)) {
    warnings.push(
      `${NO_AIA_WARNING} Since this certificate is an intermediate, it might be useful to regenerate this certificate after fixing this problem for the root mount.`,
    );
  }
  if (global.deltaCrlDistributionPoints.length > 0 && global.crlDistributionPoints.length === 0) {
    warnings.push('This mount has configured delta crl distribution points but no base crl distribution points were set.');
  }

  const csrPem = toPem('CERTIFICATE REQUEST', csrDer).trim();
  const data: Record<string, unknown> = { csr: format === 'der' ? toBase64(csrDer) : csrPem };
  if (source === 'exported') {
    data.private_key = encodePrivateKey(key, privateKeyFormat(f), format === 'der' ? 'der' : 'pem');
    data.private_key_type = key.type;
    if (format === 'pem_bundle') data.csr = `${encodePrivateKey(key, 'der', 'pem')}\n${csrPem}`;
  }
  data.key_id = keyEntry.id;
  return { data, ...(warnings.length ? { warnings } : {}) };
}

// ---- bare keys ----

async function generateBareKey(req: LogicalRequest, f: FieldData, access: KeyAccess): Promise<LogicalResponse> {
  const source = f.get<string>('type') as KeySource;
  const keyName = await requestedKeyName(req.storage, f);
  if (source === 'kms') {
    if ('key_type' in f.raw || 'key_bits' in f.raw) throw badRequest(KMS_EXISTING_KEY_PARAMS);
    const { entry } = await importManagedKey(req.storage, await requestedManagedKey(access, f), keyName);
    return { data: { key_id: entry.id, key_name: entry.name, key_type: entry.type } };
  }
  let key: PkiKey;
  try {
    const { type, bits } = resolveKeyBits(f.get<string>('key_type'), f.get<number>('key_bits'));
    key = await generateKey(type, bits, req.rsaPairs);
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError && e.status === 400) throw badRequest(`Validation for key_type, key_bits failed: ${e.errors[0]}`);
    throw e;
  }
  const { entry } = await importKey(req.storage, key, keyName);
  const data: Record<string, unknown> = { key_id: entry.id, key_name: entry.name, key_type: entry.type };
  if (source === 'exported') data.private_key = encodePrivateKey(key, 'der', 'pem');
  return { data };
}

// ---- paths ----

export function generatePaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  const type = { type: 'string', description: 'internal, exported, existing or kms' } as const;
  const rootFields: FieldSchemas = {
    type,
    ...CA_NAME_FIELDS,
    ...CA_ISSUE_FIELDS,
    ...KEY_GEN_FIELDS,
    use_pss: { type: 'bool', description: 'RSA-PSS signature' },
    issuer_name: { type: 'string', description: 'Name for the new issuer' },
  };
  const intermediateFields: FieldSchemas = {
    ...CA_NAME_FIELDS,
    ...KEY_GEN_FIELDS,
    add_basic_constraints: { type: 'bool', description: 'Put CA:TRUE basic constraints in the CSR' },
  };
  const root = (rotate: boolean) => (req: LogicalRequest, f: FieldData) => generateRoot(req, f, rotate, requestKeyAccess(managedKeys, req));
  // A new key of the request's type: an RSA one is made outside the mount's object.
  const rsaKeysNeeded = newRsaKeyBits;
  const intermediate = (req: LogicalRequest, f: FieldData) =>
    generateIntermediate(req, f, keySource(f.get<string>('type')), requestKeyAccess(managedKeys, req));
  return [
    {
      pattern: `root/generate/${nameRegex('type')}`,
      fields: rootFields,
      rsaKeysNeeded,
      summary: 'Generate a self-signed root CA (a new issuer).',
      operations: { update: root(false) },
    },
    {
      pattern: `issuers/generate/root/${nameRegex('type')}`,
      fields: rootFields,
      rsaKeysNeeded,
      summary: 'Generate a self-signed root CA (a new issuer).',
      operations: { update: root(false) },
    },
    {
      pattern: `root/rotate/${nameRegex('type')}`,
      fields: rootFields,
      rsaKeysNeeded,
      summary: 'Generate a replacement root, named "next" unless told otherwise.',
      operations: { update: root(true) },
    },
    {
      pattern: `intermediate/generate/${nameRegex('type')}`,
      fields: { type, ...intermediateFields },
      rsaKeysNeeded,
      summary: 'Generate an intermediate CA key and CSR.',
      operations: { update: intermediate },
    },
    {
      pattern: `issuers/generate/intermediate/${nameRegex('type')}`,
      fields: { type, ...intermediateFields },
      rsaKeysNeeded,
      summary: 'Generate an intermediate CA key and CSR.',
      operations: { update: intermediate },
    },
    {
      pattern: 'intermediate/cross-sign',
      fields: intermediateFields,
      summary: 'A CSR for an existing key (cross-signing).',
      operations: { update: (req, f) => generateIntermediate(req, f, 'existing', requestKeyAccess(managedKeys, req)) },
    },
    {
      pattern: 'keys/generate/(?<type>internal|exported|kms)',
      fields: {
        type: { type: 'string', description: 'internal, exported or kms' },
        key_name: KEY_GEN_FIELDS.key_name,
        key_type: { type: 'string', description: 'rsa, ec or ed25519', default: 'rsa', allowed: ['rsa', 'ec', 'ed25519'] },
        key_bits: KEY_GEN_FIELDS.key_bits,
        managed_key_name: KEY_GEN_FIELDS.managed_key_name,
        managed_key_id: KEY_GEN_FIELDS.managed_key_id,
      },
      summary: 'Generate a key (no certificate).',
      rsaKeysNeeded,
      operations: { update: (req, f) => generateBareKey(req, f, requestKeyAccess(managedKeys, req)) },
    },
  ];
}
