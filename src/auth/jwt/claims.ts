// From verified claims to identity: the user claim (the entity alias name), claim_mappings
// (alias and token metadata), groups_claim (group alias names) and bound_claims. Claim names
// that start with '/' are JSON pointers (RFC 6901) into nested claims. Shared by JWT login and
// the OIDC callback.

export type Claims = Record<string, unknown>;

/** A claim-level refusal; the caller decides the prefix (bound claims get "error validating claims: "). */
export class ClaimError extends Error {}

/** Resolves an RFC 6901 pointer; undefined when any step is missing. */
function resolvePointer(claims: Claims, pointer: string): unknown {
  let cur: unknown = claims;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9]\d*)$/.test(token)) return undefined;
      cur = cur[Number(token)];
    } else if (typeof cur === 'object' && cur !== null && Object.hasOwn(cur, token)) {
      cur = (cur as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return cur;
}

/**
 * A claim by name or, when it starts with '/', by JSON pointer. Numbers come out truncated to
 * integers (Vault reads claims as floats and compares them as integers), in lists too.
 * null and missing claims are both undefined.
 */
export function getClaim(claims: Claims, name: string): unknown {
  const value = name.startsWith('/') ? resolvePointer(claims, name) : Object.hasOwn(claims, name) ? claims[name] : undefined;
  return normalizeNumbers(value);
}

function normalizeNumbers(value: unknown): unknown {
  if (value === null) return undefined;
  if (typeof value === 'number') return Math.trunc(value);
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'number' ? Math.trunc(v) : v));
  return value;
}

/** The user claim's value: the alias name. A pointer only when user_claim_json_pointer is set. */
export function userClaimValue(claims: Claims, userClaim: string, jsonPointer: boolean): string {
  const raw = jsonPointer ? getClaim(claims, userClaim) : Object.hasOwn(claims, userClaim) ? claims[userClaim] : undefined;
  if (raw === undefined || raw === null) throw new ClaimError(`claim ${JSON.stringify(userClaim)} not found in token`);
  if (typeof raw !== 'string') throw new ClaimError(`claim ${JSON.stringify(userClaim)} could not be converted to string`);
  return raw;
}

/** claim_mappings (source claim → metadata key): strings, and numbers as integer strings; missing claims skipped. */
export function extractMetadata(claims: Claims, mappings: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [source, target] of Object.entries(mappings)) {
    const value = getClaim(claims, source);
    if (value === undefined) continue;
    if (typeof value === 'string') out[target] = value;
    else if (typeof value === 'number') out[target] = String(value);
    else throw new ClaimError(`error converting claim '${source}' to string`);
  }
  return out;
}

/** Vault's normalizeList: a scalar (string, bool, number) or a list of them becomes a list. */
function normalizeList(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') return [value];
  return null;
}

/** Go's %v of a JSON value, for messages that quote one. */
export function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, x]) => `${k}:${goValue(x)}`).join(' ')}]`;
  }
  return String(v);
}

/** Group alias names from the groups claim's value (undefined: the claim is missing; empty names skipped). */
export function groupNames(raw: unknown, groupsClaim: string): string[] {
  if (raw === undefined) throw new ClaimError(`failed to fetch groups: ${JSON.stringify(groupsClaim)} claim not found in token`);
  const list = normalizeList(raw);
  if (!list) throw new ClaimError(`${JSON.stringify(groupsClaim)} claim could not be converted to string list`);
  const out: string[] = [];
  for (const g of list) {
    if (typeof g !== 'string') throw new ClaimError(`value ${goValue(g)} in groups claim could not be parsed as string`);
    if (g !== '') out.push(g);
  }
  return out;
}

/** go-glob: '*' matches any run of characters; nothing else is special. */
export function globMatch(pattern: string, subject: string): boolean {
  if (pattern === '*') return true;
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === subject;
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!subject.startsWith(first)) return false;
  let pos = first.length;
  for (const part of parts.slice(1, -1)) {
    const i = subject.indexOf(part, pos);
    if (i < 0) return false;
    pos = i + part.length;
  }
  return subject.length - last.length >= pos && subject.endsWith(last);
}

/**
 * Every bound claim must be present and one of its expected values must equal (string mode)
 * or glob-match (glob mode) one of the actual values. The role's values were validated on write.
 */
export function validateBoundClaims(type: string, bound: Record<string, unknown>, claims: Claims): void {
  const glob = type === 'glob';
  for (const [name, expectedRaw] of Object.entries(bound)) {
    const actualRaw = getClaim(claims, name);
    if (actualRaw === undefined) throw new ClaimError(`claim ${JSON.stringify(name)} is missing`);
    const actual = normalizeList(actualRaw);
    if (!actual) throw new ClaimError(`received claim is not a string or list: ${goValue(actualRaw)}`);
    const expected = normalizeList(expectedRaw);
    if (!expected) throw new ClaimError(`bound claim is not a string or list: ${goValue(expectedRaw)}`);
    const found = expected.some((e) =>
      actual.some((a) => {
        if (!glob) return a === e;
        if (typeof e !== 'string') throw new ClaimError(`received claim is not a glob string: ${goValue(e)}`);
        return typeof a === 'string' && globMatch(e, a);
      }),
    );
    if (!found) throw new ClaimError(`claim ${JSON.stringify(name)} does not match any associated bound claim values`);
  }
}
