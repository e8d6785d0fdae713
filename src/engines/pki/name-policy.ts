// Which names a role allows (reference §1.14 "Name validation algorithm"): common names, DNS and
// email SANs, other SANs, URI SANs, subject serial numbers and user ids. Pure functions of the
// role and the caller's identity; request-policy.ts applies them to a whole request.

import { domainToASCII } from 'node:url';
import type { RoleEntry } from './role';
import { parseOtherSans } from './other-sans';

/** What the caller's token tells the name rules (token display name, identity for templates). */
export interface NameContext {
  displayName: string;
  identity: TemplateIdentity | null;
}

/** Identity values the ACL-style templates of allowed_domains / allowed_uri_sans may use. */
export interface TemplateIdentity {
  entityId: string;
  entityName?: string;
  /** Alias names by mount accessor (identity.entity.aliases.<accessor>.name). */
  aliasNames?: Record<string, string>;
}

// One DNS label; a left-most label holding a single RFC 6125 wildcard; a whole host name.
const LABEL = '([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\\-]*[a-zA-Z0-9])';
const LEFT_WILD_LABEL = `(\\*|\\*${LABEL}|${LABEL}\\*|${LABEL}\\*${LABEL})`;
const HOSTNAME = `(${LABEL}\\.)*${LABEL}\\.?$`;
/** Vault's wildHostnameRegex: an optional wildcard label, then a host name. */
export const WILD_HOSTNAME_RE = new RegExp(`^(${LEFT_WILD_LABEL}\\.)?${HOSTNAME}`);

export class IdnaError extends Error {}

const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s);

/**
 * Go's idna ToASCII with StrictDomainName + VerifyDNSLength and no mapping: ASCII labels are kept
 * as they are (no lowercasing), other labels become punycode; empty labels (but a trailing dot),
 * labels over 63 bytes and names over 253 bytes are refused.
 */
export function toAsciiHostname(name: string): string {
  const fail = (label: string): never => {
    throw new IdnaError(`idna: invalid label ${JSON.stringify(label)}`);
  };
  if (name === '') fail(name);
  const labels = name.split('.');
  if (labels.length > 1 && labels[labels.length - 1] === '') labels.pop();
  const out = labels.map((label) => {
    if (label === '') fail(name);
    let ascii = label;
    if (!isAscii(label)) {
      // Go only punycodes here, without validating; a label WHATWG refuses is no host name anyway,
      // so it is kept as it is (the hostname pattern then refuses it) rather than failing.
      const converted = domainToASCII(label);
      ascii = converted === '' || converted.includes('.') ? label : converted;
    }
    if (ascii.length > 63) fail(ascii);
    return ascii;
  });
  const joined = out.join('.') + (name.endsWith('.') && name.length > 1 ? '.' : '');
  if (joined.replace(/\.$/, '').length > 253) fail(joined);
  return joined;
}

/** ryanuber/go-glob: `*` matches any run of characters (dots too); nothing else is special. */
export function glob(pattern: string, subject: string): boolean {
  if (pattern === '') return subject === '';
  if (pattern === '*') return true;
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === subject;
  const last = parts.length - 1;
  let rest = subject;
  for (let i = 0; i < last; i++) {
    const at = rest.indexOf(parts[i]);
    if (i === 0 && !pattern.startsWith('*') && at !== 0) return false;
    if (at < 0) return false;
    rest = rest.slice(at + parts[i].length);
  }
  return pattern.endsWith('*') || rest.endsWith(parts[last]);
}

const hasTemplate = (s: string): boolean => s.includes('{{') && s.includes('}}');

/**
 * Fills `{{identity.entity.id}}`, `{{identity.entity.name}}` and
 * `{{identity.entity.aliases.<accessor>.name}}`; null when any template cannot be resolved (the
 * entry is then skipped, as Vault skips templates it fails to populate).
 */
export function resolveTemplate(pattern: string, identity: TemplateIdentity | null): string | null {
  let out = '';
  let rest = pattern;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open < 0) {
      if (rest.includes('}}')) return null;
      return out + rest;
    }
    const close = rest.indexOf('}}', open + 2);
    if (close < 0 || rest.slice(0, open).includes('}}')) return null;
    const expr = rest.slice(open + 2, close).trim();
    const value = templateValue(expr, identity);
    if (value === null || value === '') return null;
    out += rest.slice(0, open) + value;
    rest = rest.slice(close + 2);
  }
}

function templateValue(expr: string, identity: TemplateIdentity | null): string | null {
  if (!identity || identity.entityId === '') return null;
  if (expr === 'identity.entity.id') return identity.entityId;
  if (expr === 'identity.entity.name') return identity.entityName ?? null;
  const alias = /^identity\.entity\.aliases\.([^.]+)\.name$/.exec(expr);
  if (alias) return identity.aliasNames?.[alias[1]] ?? null;
  return null;
}

/** An allowed_* entry after templating (when the role enables it); null = skip the entry. */
function templated(entry: string, enabled: boolean, ctx: NameContext): string | null {
  if (!enabled || !hasTemplate(entry)) return entry;
  return resolveTemplate(entry, ctx.identity);
}

/** Splits an RFC 6125 wildcard name into its wildcard label and the rest; null if malformed. */
function splitWildcard(name: string): { label: string; reduced: string } | null {
  if ((name.match(/\*/g) ?? []).length > 1) return null;
  const dot = name.indexOf('.');
  if (dot < 0) return { label: name, reduced: '' };
  const reduced = name.slice(dot + 1);
  if (reduced.includes('*')) return null;
  return { label: name.slice(0, dot), reduced };
}

type NameRole = Pick<
  RoleEntry,
  | 'allowLocalhost'
  | 'allowedDomains'
  | 'allowedDomainsTemplate'
  | 'allowBareDomains'
  | 'allowSubdomains'
  | 'allowGlobDomains'
  | 'allowWildcardCertificates'
  | 'allowAnyName'
  | 'allowTokenDisplayname'
  | 'enforceHostnames'
>;

/** Whether one CN / DNS SAN / email SAN is allowed by the role (Vault's validateNames, one name). */
export function nameAllowed(role: NameRole, ctx: NameContext, name: string): boolean {
  let reduced = name;
  let emailDomain = name;
  let isEmail = false;
  let wildLabel = '';
  if (name.includes('@')) {
    const parts = name.split('@');
    if (parts.length !== 2) return false;
    reduced = emailDomain = parts[1];
    isEmail = true;
  }
  const isWildcard = reduced.includes('*');
  if (isWildcard) {
    // A wildcard is refused outright when the role forbids them, even with allow_any_name.
    if (!role.allowWildcardCertificates) return false;
    const split = splitWildcard(reduced);
    if (!split) return false;
    wildLabel = split.label;
    reduced = split.reduced;
  }
  if (isEmail && isWildcard) return false;

  if (role.enforceHostnames && reduced !== '') {
    let converted: string;
    try {
      converted = toAsciiHostname(reduced);
    } catch {
      return false;
    }
    if (isWildcard) converted = `${wildLabel}.${converted}`;
    if (!WILD_HOSTNAME_RE.test(converted)) return false;
  }

  if (role.allowAnyName) return true;

  if (role.allowLocalhost) {
    if (reduced === 'localhost' || reduced === 'localdomain') return true;
    if (isEmail && (emailDomain === 'localhost' || emailDomain === 'localdomain')) return true;
    if (role.allowSubdomains) {
      for (const base of ['localhost', 'localdomain']) {
        if (reduced.endsWith(`.${base}`) || (isWildcard && reduced === base)) return true;
      }
    }
  }

  if (role.allowTokenDisplayname) {
    const display = ctx.displayName;
    if (name === display) return true;
    if (role.allowSubdomains) {
      if (isEmail && display.includes('@')) {
        const split = display.split('@');
        if (split.length === 2 && reduced.endsWith(`.${split[1]}`)) return true;
      }
      if (display !== '' && (reduced.endsWith(`.${display}`) || (isWildcard && reduced === display))) return true;
    }
  }

  for (const entry of role.allowedDomains) {
    if (entry === '') continue;
    const domain = templated(entry, role.allowedDomainsTemplate, ctx);
    if (domain === null) continue;
    const lower = domain.toLowerCase();
    if (role.allowBareDomains && (name.toLowerCase() === lower || (isEmail && emailDomain.toLowerCase() === lower))) return true;
    if (role.allowSubdomains && (reduced.endsWith(`.${domain}`) || (isWildcard && reduced.toLowerCase() === lower))) return true;
    if (role.allowGlobDomains && domain.includes('*') && glob(lower, name.toLowerCase())) return true;
  }
  return false;
}

/** The first name the role does not allow, or '' when all are allowed. */
export function firstDisallowedName(role: NameRole, ctx: NameContext, names: readonly string[]): string {
  for (const n of names) if (!nameAllowed(role, ctx, n)) return n;
  return '';
}

/**
 * The common name check: cn_validations=[disabled] skips everything; otherwise the name rules,
 * then the type check (an `@` needs `email`, anything else needs `hostname`).
 */
export function commonNameAllowed(role: NameRole & Pick<RoleEntry, 'cnValidations'>, ctx: NameContext, cn: string): boolean {
  const v = role.cnValidations;
  if (v.length === 1 && v[0] === 'disabled') return true;
  if (!nameAllowed(role, ctx, cn)) return false;
  if (v.length === 0) return true;
  return cn.includes('@') ? v.includes('email') : v.includes('hostname');
}

/** The first other SAN the role refuses: its OID (value '' when the OID itself is not allowed). */
export function disallowedOtherSan(role: Pick<RoleEntry, 'allowedOtherSans'>, requested: Map<string, string[]>): { oid: string; value: string } | null {
  const allowedList = role.allowedOtherSans;
  if (allowedList.length === 1 && allowedList[0] === '*') return null;
  let allowed: Map<string, string[]>;
  try {
    allowed = parseOtherSans(allowedList);
  } catch (e) {
    throw new Error(`error parsing role's allowed SANs: ${e instanceof Error ? e.message : String(e)}`);
  }
  for (const [oid, values] of requested) {
    const patterns = allowed.get(oid);
    for (const value of values) {
      if (!patterns) return { oid, value: '' };
      if (!patterns.some((p) => glob(p, value))) return { oid, value };
    }
  }
  return null;
}

/** A URI SAN against allowed_uri_sans (globs, templated when the role allows templates). */
export function uriSanAllowed(role: Pick<RoleEntry, 'allowedUriSans' | 'allowedUriSansTemplate'>, ctx: NameContext, uri: string): boolean {
  return role.allowedUriSans.some((entry) => {
    const pattern = templated(entry, role.allowedUriSansTemplate, ctx);
    return pattern !== null && glob(pattern, uri);
  });
}

/** A subject serialNumber against allowed_serial_numbers (exact, or glob when the entry has `*`). */
export function serialNumberAllowed(role: Pick<RoleEntry, 'allowedSerialNumbers'>, serial: string): boolean {
  return role.allowedSerialNumbers.some((p) => p !== '' && (p === serial || (p.includes('*') && glob(p, serial))));
}

/** A user id against allowed_user_ids (case-insensitive exact, or glob when the entry has `*`). */
export function userIdAllowed(role: Pick<RoleEntry, 'allowedUserIds'>, id: string): boolean {
  const lower = id.toLowerCase();
  return role.allowedUserIds.some((p) => p.toLowerCase() === lower || (p !== '' && p.includes('*') && glob(p, id)));
}
