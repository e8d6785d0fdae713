// A role applied to one issue/sign request: the final subject and SAN set, or a 400. Names that
// come from a CSR (use_csr_common_name / use_csr_sans, and the serial number and user ids a CSR
// carries) pass the same checks as names from the request: anything the role does not allow
// refuses the whole request (reference §1.14, and the CVE class of CSR-smuggled SANs).

import type { SanSet, SubjectFields } from '../../crypto/pki/certificate';
import type { ParsedCsr } from '../../crypto/pki/csr';
import { badRequest } from '../../framework/errors';
import {
  commonNameAllowed,
  disallowedOtherSan,
  firstDisallowedName,
  IdnaError,
  serialNumberAllowed,
  toAsciiHostname,
  uriSanAllowed,
  userIdAllowed,
  WILD_HOSTNAME_RE,
  type NameContext,
} from './name-policy';
import { parseOtherSans } from './other-sans';
import type { RoleEntry } from './role';

/** The name-related request fields of issue/sign (after the framework's coercion). */
export interface LeafNameRequest {
  commonName: string;
  /** alt_names, or null when the request did not carry the field. */
  altNames: string[] | null;
  ipSans: string[];
  uriSans: string[];
  otherSans: string[];
  serialNumber: string;
  excludeCnFromSans: boolean;
  userIds: string[];
}

export interface LeafNames {
  subject: SubjectFields;
  sans: SanSet;
}

/** Sorted, without duplicates (Go's strutil.RemoveDuplicates). */
const sortedUnique = (list: string[]): string[] => [...new Set(list)].sort();
/** First occurrence kept, order kept (strutil.RemoveDuplicatesStable). */
const stableUnique = (list: string[]): string[] => [...new Set(list)];

/** A DNS name as it goes into the SAN: IDNA-converted; null when it is not a host name at all. */
function dnsSan(name: string): string | null {
  let converted: string;
  try {
    converted = toAsciiHostname(name);
  } catch (e) {
    if (e instanceof IdnaError) throw badRequest(e.message);
    throw e;
  }
  return WILD_HOSTNAME_RE.test(converted) ? converted : null;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Go's net.ParseIP, returning a canonical text form (IPv4-mapped IPv6 as IPv4); null when invalid. */
export function parseIp(s: string): string | null {
  if (IPV4.test(s)) return s;
  if (!s.includes(':') || /[^0-9a-fA-F:.]/.test(s)) return null;
  let host: string;
  try {
    host = new URL(`http://[${s}]/`).hostname;
  } catch {
    return null;
  }
  const v6 = host.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (mapped) {
    const hi = parseInt(mapped[1], 16);
    const lo = parseInt(mapped[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return v6;
}

/** Go's url.Parse refuses control characters and malformed %-escapes; little else. */
const validUri = (s: string): boolean => !/[\x00-\x1f\x7f]/.test(s) && !/%(?![0-9a-fA-F]{2})/.test(s);

/** Go prints a []string as `[a b c]`. */
const goList = (list: string[]): string => `[${list.join(' ')}]`;

/**
 * The subject and SANs a role allows for this request (Vault's GenerateCreationBundle name
 * handling). `csr` is the parsed CSR on sign paths, null on issue.
 */
export function leafNames(role: RoleEntry, input: LeafNameRequest, csr: ParsedCsr | null, ctx: NameContext): LeafNames {
  const fromCsrSans = csr !== null && role.useCsrSans;

  let cn = csr && role.useCsrCommonName ? csr.subject.commonName : '';
  if (cn === '') {
    cn = input.commonName;
    if (cn === '' && role.requireCn) {
      throw badRequest(
        'the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, unless "require_cn" is set to false',
      );
    }
  }
  // The subject serial number: the request's, else the CSR's.
  const serialNumber = input.serialNumber !== '' ? input.serialNumber : (csr?.subject.serialNumber ?? '');

  let dnsNames: string[] = fromCsrSans ? [...csr.sans.dnsNames] : [];
  let emails: string[] = fromCsrSans ? [...csr.sans.emails] : [];

  if (cn !== '' && !input.excludeCnFromSans) {
    if (cn.includes('@')) emails.push(cn);
    else {
      const dns = dnsSan(cn);
      if (dns !== null) dnsNames.push(dns);
    }
  }

  if (!fromCsrSans && input.altNames !== null) {
    for (const v of sortedUnique(input.altNames.map((a) => a.trim()).filter((a) => a !== ''))) {
      if (v.includes('@')) {
        emails.push(v);
        continue;
      }
      const dns = dnsSan(v);
      if (dns === null) throw badRequest(`subject alternate name ${v} is not a valid DNS name and cannot be included as a SAN`);
      dnsNames.push(dns);
    }
  }

  // The CN is checked even when it is kept out of the SANs.
  if (cn !== '' && !commonNameAllowed(role, ctx, cn)) throw badRequest(`common name ${cn} not allowed by this role`);
  if (serialNumber !== '' && !serialNumberAllowed(role, serialNumber)) {
    throw badRequest(`serial_number ${serialNumber} not allowed by this role`);
  }
  const badDns = firstDisallowedName(role, ctx, dnsNames);
  if (badDns !== '') throw badRequest(`subject alternate name ${badDns} not allowed by this role`);
  const badEmail = firstDisallowedName(role, ctx, emails);
  if (badEmail !== '') throw badRequest(`email address ${badEmail} not allowed by this role`);

  const otherNames = checkOtherSans(role, input.otherSans, fromCsrSans ? csr.sans.otherNames : []);
  const ips = checkIps(role, input.ipSans, fromCsrSans ? csr.sans.ips : null);
  const uris = checkUris(role, ctx, input.uriSans, fromCsrSans ? csr.sans.uris : null);

  // User ids: the request's, else those in the CSR's subject.
  const userIds = input.userIds.length > 0 ? input.userIds : (csr?.subject.userIds ?? []);
  for (const id of userIds) {
    if (!userIdAllowed(role, id)) throw badRequest(`user_id ${id} is not allowed by this role`);
  }

  dnsNames = sortedUnique(dnsNames);
  emails = sortedUnique(emails);
  return {
    subject: {
      commonName: cn,
      serialNumber,
      country: stableUnique(role.country),
      organization: stableUnique(role.organization),
      ou: stableUnique(role.ou),
      locality: stableUnique(role.locality),
      province: stableUnique(role.province),
      streetAddress: stableUnique(role.streetAddress),
      postalCode: stableUnique(role.postalCode),
      userIds: [...userIds],
    },
    sans: { dnsNames, emails, ips, uris, otherNames },
  };
}

function checkOtherSans(role: RoleEntry, fromRequest: string[], fromCsr: { oid: string; value: string }[]): { oid: string; value: string }[] {
  const input = [...fromRequest, ...fromCsr.map((o) => `${o.oid};UTF8:${o.value}`)];
  if (input.length === 0) return [];
  let requested: Map<string, string[]>;
  try {
    requested = parseOtherSans(input);
  } catch (e) {
    throw badRequest(`could not parse requested other SAN: ${e instanceof Error ? e.message : String(e)}`);
  }
  let bad: { oid: string; value: string } | null;
  try {
    bad = disallowedOtherSan(role, requested);
  } catch (e) {
    throw badRequest(e instanceof Error ? e.message : String(e));
  }
  if (bad && bad.value !== '') throw badRequest(`other SAN ${bad.value} not allowed for OID ${bad.oid} by this role`);
  if (bad) throw badRequest(`other SAN OID ${bad.oid} not allowed by this role`);
  const out: { oid: string; value: string }[] = [];
  for (const [oid, values] of requested) for (const value of values) out.push({ oid, value });
  return out;
}

/** IP SANs: from the CSR when use_csr_sans applies (the request's ip_sans are then ignored). */
function checkIps(role: RoleEntry, fromRequest: string[], fromCsr: string[] | null): string[] {
  if (fromCsr !== null) {
    if (fromCsr.length > 0 && !role.allowIpSans) {
      throw badRequest('IP Subject Alternative Names are not allowed in this role, but was provided some via CSR');
    }
    return fromCsr.map((ip) => parseIp(ip) ?? ip);
  }
  if (fromRequest.length === 0) return [];
  if (!role.allowIpSans) {
    throw badRequest(`IP Subject Alternative Names are not allowed in this role, but was provided ${goList(fromRequest)}`);
  }
  return fromRequest.map((v) => {
    const ip = parseIp(v);
    if (ip === null) throw badRequest(`the value "${v}" is not a valid IP address`);
    return ip;
  });
}

/** URI SANs: allowed_uri_sans globs; from the CSR when use_csr_sans applies. */
function checkUris(role: RoleEntry, ctx: NameContext, fromRequest: string[], fromCsr: string[] | null): string[] {
  const via = fromCsr !== null ? 'CSR' : 'the API';
  const list = fromCsr ?? fromRequest;
  if (list.length === 0) return [];
  if (role.allowedUriSans.length === 0) {
    throw badRequest(`URI Subject Alternative Names are not allowed in this role, but were provided via ${via}`);
  }
  for (const uri of list) {
    if (!uriSanAllowed(role, ctx, uri)) {
      throw badRequest(`URI Subject Alternative Names were provided via ${via} which are not valid for this role`);
    }
    if (fromCsr === null && !validUri(uri)) {
      throw badRequest(`the provided URI Subject Alternative Name "${uri}" is not a valid URI`);
    }
  }
  return [...list];
}
