// The PKI role record (storage `role/<name>`): its field schema with Vault's defaults, how a write
// (POST: every omitted field takes its default; PATCH: omitted fields keep their value) becomes a
// record, the validation Vault runs on every write, and the read shape (reference §1.14).

import { formatGoDuration } from '../../framework/duration';
import { badRequest } from '../../framework/errors';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { parseOtherSans } from './other-sans';

export interface RoleEntry {
  /** Seconds (0: the mount's default / maximum). */
  ttl: number;
  maxTtl: number;
  notBeforeDuration: number;
  /** RFC 3339 end date ('' = none). */
  notAfter: string;
  allowLocalhost: boolean;
  allowedDomains: string[];
  allowedDomainsTemplate: boolean;
  allowBareDomains: boolean;
  allowSubdomains: boolean;
  allowGlobDomains: boolean;
  allowWildcardCertificates: boolean;
  allowAnyName: boolean;
  allowTokenDisplayname: boolean;
  enforceHostnames: boolean;
  allowIpSans: boolean;
  allowedUriSans: string[];
  allowedUriSansTemplate: boolean;
  allowedOtherSans: string[];
  allowedSerialNumbers: string[];
  allowedUserIds: string[];
  serverFlag: boolean;
  clientFlag: boolean;
  codeSigningFlag: boolean;
  emailProtectionFlag: boolean;
  /** rsa | ec | ed25519 | any. */
  keyType: string;
  keyBits: number;
  signatureBits: number;
  usePss: boolean;
  keyUsage: string[];
  extKeyUsage: string[];
  extKeyUsageOids: string[];
  useCsrCommonName: boolean;
  useCsrSans: boolean;
  ou: string[];
  organization: string[];
  country: string[];
  locality: string[];
  province: string[];
  streetAddress: string[];
  postalCode: string[];
  /** null only for roles that never had it set (read then omits it). */
  generateLease: boolean | null;
  noStore: boolean;
  requireCn: boolean;
  cnValidations: string[];
  /** OIDs, or JSON objects {"oid","cps","notice"} as Vault stores qualified policies. */
  policyIdentifiers: string[];
  basicConstraintsValidForNonCa: boolean;
  /** Stored as given: a name is resolved only when the role is used. */
  issuerRef: string;
  /** Internal roles only (never settable through roles/); read shows it only when set. */
  maxPathLength: number | null;
}

export const DEFAULT_KEY_USAGE = ['DigitalSignature', 'KeyAgreement', 'KeyEncipherment'];

/** The request fields of roles/:name, with Vault's defaults for a POST. */
export const ROLE_FIELDS: FieldSchemas = {
  ttl: { type: 'duration', description: 'Default validity of issued certificates' },
  max_ttl: { type: 'duration', description: 'Maximum validity of issued certificates' },
  allow_localhost: { type: 'bool', description: 'Allow localhost and localdomain', default: true },
  allowed_domains: { type: 'comma-string-list', description: 'Domains this role may issue for' },
  allowed_domains_template: { type: 'bool', description: 'allowed_domains may hold identity templates' },
  allow_bare_domains: { type: 'bool', description: 'Allow the allowed domains themselves' },
  allow_subdomains: { type: 'bool', description: 'Allow subdomains of the allowed domains' },
  allow_glob_domains: { type: 'bool', description: 'allowed_domains may hold globs' },
  allow_wildcard_certificates: { type: 'bool', description: 'Allow RFC 6125 wildcards', default: true },
  allow_any_name: { type: 'bool', description: 'Allow any name' },
  allow_token_displayname: { type: 'bool', description: "Allow the token's display name" },
  enforce_hostnames: { type: 'bool', description: 'Only valid host names', default: true },
  allow_ip_sans: { type: 'bool', description: 'Allow IP SANs', default: true },
  allowed_uri_sans: { type: 'comma-string-list', description: 'Allowed URI SANs (globs)' },
  allowed_uri_sans_template: { type: 'bool', description: 'allowed_uri_sans may hold identity templates' },
  allowed_other_sans: { type: 'comma-string-list', description: 'Allowed other SANs, <oid>;UTF8:<value> (globs)' },
  allowed_serial_numbers: { type: 'comma-string-list', description: 'Allowed subject serial numbers (globs)' },
  allowed_user_ids: { type: 'comma-string-list', description: 'Allowed user ids (globs)' },
  server_flag: { type: 'bool', description: 'serverAuth EKU', default: true },
  client_flag: { type: 'bool', description: 'clientAuth EKU', default: true },
  code_signing_flag: { type: 'bool', description: 'codeSigning EKU' },
  email_protection_flag: { type: 'bool', description: 'emailProtection EKU' },
  key_type: { type: 'string', description: 'rsa, ec, ed25519 or any', default: 'rsa' },
  key_bits: { type: 'int', description: 'Key size (0: the type default)', default: 0 },
  signature_bits: { type: 'int', description: 'Hash size of RSA signatures (0: default)', default: 0 },
  use_pss: { type: 'bool', description: 'PSS signatures from RSA issuers' },
  key_usage: { type: 'comma-string-list', description: 'Key usages', default: DEFAULT_KEY_USAGE },
  ext_key_usage: { type: 'comma-string-list', description: 'Extended key usages' },
  ext_key_usage_oids: { type: 'comma-string-list', description: 'Extra extended key usage OIDs' },
  use_csr_common_name: { type: 'bool', description: "Sign: use the CSR's common name", default: true },
  use_csr_sans: { type: 'bool', description: "Sign: use the CSR's SANs", default: true },
  ou: { type: 'comma-string-list', description: 'Subject OU' },
  organization: { type: 'comma-string-list', description: 'Subject O' },
  country: { type: 'comma-string-list', description: 'Subject C' },
  locality: { type: 'comma-string-list', description: 'Subject L' },
  province: { type: 'comma-string-list', description: 'Subject ST' },
  street_address: { type: 'comma-string-list', description: 'Subject street' },
  postal_code: { type: 'comma-string-list', description: 'Subject postal code' },
  generate_lease: { type: 'bool', description: 'Attach leases to issued certificates' },
  no_store: { type: 'bool', description: 'Do not store issued certificates' },
  require_cn: { type: 'bool', description: 'common_name is required', default: true },
  cn_validations: { type: 'comma-string-list', description: 'email, hostname, or disabled', default: ['email', 'hostname'] },
  policy_identifiers: { type: 'comma-string-list', description: 'Policy OIDs, or a JSON list of qualified policies' },
  basic_constraints_valid_for_non_ca: { type: 'bool', description: 'CA:FALSE basic constraints on leaves' },
  not_before_duration: { type: 'duration', description: 'Backdating of NotBefore', default: 30 },
  not_after: { type: 'string', description: 'Fixed NotAfter, YYYY-MM-ddTHH:MM:SSZ' },
  issuer_ref: { type: 'string', description: 'Issuer used by issue/ and sign/', default: 'default' },
};

type Scalar = string | number | boolean | string[];
type SettableKey = Exclude<keyof RoleEntry, 'generateLease' | 'maxPathLength' | 'policyIdentifiers'>;

/** Wire name → record field, for the fields that copy straight across. */
const DIRECT: readonly (readonly [string, SettableKey])[] = [
  ['ttl', 'ttl'],
  ['max_ttl', 'maxTtl'],
  ['not_before_duration', 'notBeforeDuration'],
  ['not_after', 'notAfter'],
  ['allow_localhost', 'allowLocalhost'],
  ['allowed_domains', 'allowedDomains'],
  ['allowed_domains_template', 'allowedDomainsTemplate'],
  ['allow_bare_domains', 'allowBareDomains'],
  ['allow_subdomains', 'allowSubdomains'],
  ['allow_glob_domains', 'allowGlobDomains'],
  ['allow_wildcard_certificates', 'allowWildcardCertificates'],
  ['allow_any_name', 'allowAnyName'],
  ['allow_token_displayname', 'allowTokenDisplayname'],
  ['enforce_hostnames', 'enforceHostnames'],
  ['allow_ip_sans', 'allowIpSans'],
  ['allowed_uri_sans', 'allowedUriSans'],
  ['allowed_uri_sans_template', 'allowedUriSansTemplate'],
  ['allowed_other_sans', 'allowedOtherSans'],
  ['allowed_serial_numbers', 'allowedSerialNumbers'],
  ['allowed_user_ids', 'allowedUserIds'],
  ['server_flag', 'serverFlag'],
  ['client_flag', 'clientFlag'],
  ['code_signing_flag', 'codeSigningFlag'],
  ['email_protection_flag', 'emailProtectionFlag'],
  ['key_type', 'keyType'],
  ['key_bits', 'keyBits'],
  ['signature_bits', 'signatureBits'],
  ['use_pss', 'usePss'],
  ['key_usage', 'keyUsage'],
  ['ext_key_usage', 'extKeyUsage'],
  ['ext_key_usage_oids', 'extKeyUsageOids'],
  ['use_csr_common_name', 'useCsrCommonName'],
  ['use_csr_sans', 'useCsrSans'],
  ['ou', 'ou'],
  ['organization', 'organization'],
  ['country', 'country'],
  ['locality', 'locality'],
  ['province', 'province'],
  ['street_address', 'streetAddress'],
  ['postal_code', 'postalCode'],
  ['no_store', 'noStore'],
  ['require_cn', 'requireCn'],
  ['cn_validations', 'cnValidations'],
  ['basic_constraints_valid_for_non_ca', 'basicConstraintsValidForNonCa'],
  ['issuer_ref', 'issuerRef'],
];

const ROLE_PREFIX = 'role/';

export const loadRole = (storage: Storage, name: string): Promise<RoleEntry | null> => getJSON<RoleEntry>(storage, ROLE_PREFIX + name);
export const saveRole = (storage: Storage, name: string, role: RoleEntry): Promise<void> => putJSON(storage, ROLE_PREFIX + name, role);
export const deleteRole = (storage: Storage, name: string): Promise<void> => storage.delete(ROLE_PREFIX + name);
export const listRoles = (storage: Storage): Promise<string[]> => storage.list(ROLE_PREFIX);

/**
 * policy_identifiers: a list of OIDs, or (as one string) a JSON list of {oid, cps, notice}
 * objects, each kept as its own JSON string the way Vault stores it.
 */
function policyIdentifiers(f: FieldData): string[] {
  const raw = f.raw.policy_identifiers;
  if (typeof raw === 'string') {
    const trimmed = raw.trim();
    if (trimmed.startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch {
        parsed = null;
      }
      if (Array.isArray(parsed) && parsed.every((e) => typeof e === 'object' && e !== null && !Array.isArray(e))) {
        return parsed.map((e: Record<string, unknown>) => {
          const out: Record<string, string> = { oid: typeof e.oid === 'string' ? e.oid : '' };
          if (typeof e.cps === 'string' && e.cps) out.cps = e.cps;
          if (typeof e.notice === 'string' && e.notice) out.notice = e.notice;
          return JSON.stringify(out);
        });
      }
    }
  }
  return f.get<string[]>('policy_identifiers');
}

/** Builds a role from a write: POST starts from the defaults, PATCH from the stored role. */
export function roleFromWrite(f: FieldData, base: RoleEntry | null): { role: RoleEntry; warnings: string[] } {
  const role = {} as RoleEntry;
  const target = role as unknown as Record<string, Scalar | null>;
  for (const [wire, key] of DIRECT) {
    target[key] = base && !f.has(wire) ? (base[key] as Scalar) : f.get<Scalar>(wire);
  }
  role.policyIdentifiers = base && !f.has('policy_identifiers') ? base.policyIdentifiers : policyIdentifiers(f);
  role.maxPathLength = base ? base.maxPathLength : null;

  const warnings: string[] = [];
  const leaseGiven = f.has('generate_lease');
  const leaseAsked = leaseGiven ? f.get<boolean>('generate_lease') : base ? base.generateLease === true : false;
  if (role.noStore) {
    // no_store implies generate_lease=false.
    role.generateLease = false;
    if (leaseAsked) warnings.push('mutually exclusive values no_store=true and generate_lease=true were both specified; no_store=true takes priority');
  } else {
    role.generateLease = leaseGiven || !base ? leaseAsked : base.generateLease;
    if (role.generateLease) {
      warnings.push(
        "it is encouraged to disable generate_lease and rely on PKI's native capabilities when possible; this option can cause Vault-wide issues with large numbers of issued certificates",
      );
    }
  }
  return { role, warnings };
}

const RSA_BITS = new Set([2048, 3072, 4096, 8192]);
const EC_BITS = new Set([224, 256, 384, 521]);

/**
 * Vault's key type / key bits / signature bits rules: 0 bits become the type's default (RSA 2048,
 * EC 256), RSA signatures default to SHA-256; returns the settled values or throws a 400.
 */
export function settleKeyParams(keyType: string, keyBits: number, signatureBits: number): { keyBits: number; signatureBits: number } {
  let bits = keyBits;
  if (bits === 0 && keyType === 'rsa') bits = 2048;
  if (bits === 0 && keyType === 'ec') bits = 256;
  switch (keyType) {
    case 'rsa':
      if (bits < 2048) throw badRequest(`RSA keys < 2048 bits are unsafe and not supported: got ${bits}`);
      if (!RSA_BITS.has(bits)) throw badRequest(`unsupported bit length for RSA key: ${bits}`);
      break;
    case 'ec':
      if (!EC_BITS.has(bits)) throw badRequest(`unsupported bit length for EC key: ${bits}`);
      break;
    case 'ed25519':
    case 'any':
      break;
    default:
      throw badRequest(`unknown key type ${keyType}`);
  }
  let hash = signatureBits;
  if (keyType === 'rsa') {
    if (hash === 0) hash = 256;
    if (hash !== 256 && hash !== 384 && hash !== 512) throw badRequest(`unsupported hash signature algorithm: ${hash}`);
  } else if (keyType !== 'ec') {
    hash = 0; // ed25519 hashes internally; `any` cannot know yet
  }
  return { keyBits: bits, signatureBits: hash };
}

/** Dotted-decimal OID as Go's StringToOid accepts it (every arc an integer). */
export const isOid = (s: string): boolean => /^\d+(\.\d+)*$/.test(s);

/** Checks one stored policy identifier: an OID, or a JSON {oid, cps, notice} object with a valid OID. */
export function policyOid(entry: string): string | null {
  if (entry.trim().startsWith('{')) {
    try {
      const parsed = JSON.parse(entry) as { oid?: unknown };
      return typeof parsed.oid === 'string' && isOid(parsed.oid) ? parsed.oid : null;
    } catch {
      return null;
    }
  }
  return isOid(entry) ? entry : null;
}

/** cn_validations: lowercased, [] → the default; errors as Vault words them. */
export function checkCnValidations(list: string[]): string[] {
  if (list.length === 0) return ['email', 'hostname'];
  const seen = new Set<string>();
  for (const v of list) {
    const lower = v.toLowerCase();
    if (lower !== 'disabled' && lower !== 'email' && lower !== 'hostname') {
      throw badRequest(`cn_validations value incorrect: unknown type: \`${v}\``);
    }
    if (seen.has(lower)) throw badRequest(`cn_validations value incorrect: \`${lower}\` specified multiple times`);
    seen.add(lower);
  }
  if (seen.has('disabled') && seen.size > 1) {
    throw badRequest('cn_validations value incorrect: cannot specify `disabled` along with `email` or `hostname`');
  }
  return list.map((v) => v.toLowerCase());
}

/** Vault's validateRole: normalises the record in place (key bits, issuer_ref, cn_validations) or throws a 400. */
export function validateRole(role: RoleEntry): void {
  if (role.maxTtl > 0 && role.ttl > role.maxTtl) throw badRequest('"ttl" value must be less than "max_ttl" value');
  const settled = settleKeyParams(role.keyType, role.keyBits, role.signatureBits);
  role.keyBits = settled.keyBits;
  role.signatureBits = settled.signatureBits;
  for (const oid of role.extKeyUsageOids) {
    if (!isOid(oid)) throw badRequest(`"${oid}" could not be parsed as a valid oid for an extended key usage`);
  }
  for (const p of role.policyIdentifiers) {
    if (policyOid(p) === null) throw badRequest(`"${p}" could not be parsed as a valid oid for a policy identifier`);
  }
  const others = role.allowedOtherSans;
  if (others.length > 0 && !(others.length === 1 && others[0] === '*')) {
    try {
      parseOtherSans(others);
    } catch (e) {
      throw badRequest(`error parsing allowed_other_sans: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (role.issuerRef === '') role.issuerRef = 'default';
  role.cnValidations = checkCnValidations(role.cnValidations);
}

/** RFC 3339 (Go's time.RFC3339: seconds required, optional fraction, Z or ±hh:mm); null if malformed. */
export function parseNotAfter(s: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) return null;
  const [, y, mo, d, h, mi, sec] = m.map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59) return null;
  const t = Date.parse(s);
  if (Number.isNaN(t)) return null;
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (check.getUTCDate() !== d) return null; // e.g. Feb 30
  return new Date(t);
}

/** GET roles/:name `data` (reference §1.14): ints for durations; generate_lease / max_path_length only if set. */
export function roleView(role: RoleEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [wire, key] of DIRECT) out[wire] = role[key];
  out.policy_identifiers = role.policyIdentifiers;
  if (role.generateLease !== null) out.generate_lease = role.generateLease;
  if (role.maxPathLength !== null) out.max_path_length = role.maxPathLength;
  return out;
}

/**
 * The implicit role of requests no configured role governs (CA generation, sign-intermediate,
 * sign-verbatim): any name, IPs and other SANs, no hostname rules, CN checks off, no usages or
 * subject fields of its own. Callers override what their request decides.
 */
export function permissiveRole(overrides: Partial<RoleEntry>): RoleEntry {
  return {
    ttl: 0,
    maxTtl: 0,
    notBeforeDuration: 0,
    notAfter: '',
    allowLocalhost: true,
    allowedDomains: [],
    allowedDomainsTemplate: false,
    allowBareDomains: false,
    allowSubdomains: false,
    allowGlobDomains: false,
    allowWildcardCertificates: true,
    allowAnyName: true,
    allowTokenDisplayname: false,
    enforceHostnames: false,
    allowIpSans: true,
    allowedUriSans: ['*'],
    allowedUriSansTemplate: false,
    allowedOtherSans: ['*'],
    allowedSerialNumbers: ['*'],
    allowedUserIds: ['*'],
    serverFlag: false,
    clientFlag: false,
    codeSigningFlag: false,
    emailProtectionFlag: false,
    keyType: 'any',
    keyBits: 0,
    signatureBits: 0,
    usePss: false,
    keyUsage: [],
    extKeyUsage: [],
    extKeyUsageOids: [],
    useCsrCommonName: false,
    useCsrSans: false,
    ou: [],
    organization: [],
    country: [],
    locality: [],
    province: [],
    streetAddress: [],
    postalCode: [],
    generateLease: false,
    noStore: false,
    requireCn: false,
    cnValidations: ['disabled'],
    policyIdentifiers: [],
    basicConstraintsValidForNonCa: false,
    issuerRef: 'default',
    maxPathLength: null,
    ...overrides,
  };
}

/**
 * A certificate's NotAfter from an absolute not_after or a ttl, never both: the request's ttl, else
 * `fallbackTtl`, clamped to `maxTtl` with Vault's warning.
 */
/** The latest NotAfter a certificate can carry (X.509's GeneralizedTime ends with year 9999). */
export const MAX_NOT_AFTER = Date.UTC(9999, 11, 31, 23, 59, 59);

export function notAfterFrom(
  requestTtl: number,
  fallbackTtl: number,
  notAfterText: string,
  maxTtl: number,
  now: number,
  warnings: string[],
): Date {
  if (requestTtl > 0 && notAfterText !== '') throw badRequest('Either ttl or not_after should be provided. Both should not be provided in the same request.');
  if (notAfterText !== '') {
    const parsed = parseNotAfter(notAfterText);
    if (!parsed) throw badRequest(`parsing time ${JSON.stringify(notAfterText)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(notAfterText)} as "2006"`);
    if (parsed.getTime() > MAX_NOT_AFTER) throw badRequest(`not_after ${JSON.stringify(notAfterText)} is later than 9999-12-31T23:59:59Z, the latest date a certificate can carry`);
    return parsed;
  }
  let ttl = requestTtl > 0 ? requestTtl : fallbackTtl;
  if (maxTtl > 0 && ttl > maxTtl) {
    warnings.push(`TTL "${formatGoDuration(ttl)}" is longer than permitted maxTTL "${formatGoDuration(maxTtl)}", so maxTTL is being used`);
    ttl = maxTtl;
  }
  // TTLs are bounded (MAX_DURATION_SECONDS) long before this; the cap keeps any sum in range.
  return new Date(Math.min(now + ttl * 1000, MAX_NOT_AFTER));
}
