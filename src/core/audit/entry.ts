// Audit entries in Vault's JSON shape. A hosting object describes what happened (AuditInput, raw
// values, structured-clonable so it can cross to the device's object); each device formats it
// with its own options and salt. Empty fields are left out, as Vault's encoder does.

import type { WrapInfo } from '../../framework/backend';
import type { SentinelRecord } from '../sentinel/governing';
import { hashData, rawHasher, type Hasher } from './hash';
import type { DeviceOptions } from './options';

/** The caller, as the token that authenticated the request describes it. */
export interface AuditAuthInput {
  clientToken: string;
  accessor: string;
  displayName: string;
  policies: string[];
  tokenPolicies: string[];
  identityPolicies: string[];
  metadata: Record<string, string> | null;
  entityId: string;
  tokenType: string;
  /** Seconds; 0 = no expiry. */
  tokenTTL: number;
  /** RFC 3339. */
  tokenIssueTime: string;
}

export interface AuditRequestInput {
  id: string;
  operation: string;
  mountPoint: string;
  mountType: string;
  mountAccessor: string;
  clientToken: string;
  clientTokenAccessor: string;
  path: string;
  data: Record<string, unknown> | null;
  remoteAddress: string;
  /** Requested response-wrapping TTL, seconds (0 = none). */
  wrapTTL: number;
  /** The request carried X-Vault-Policy-Override: true. */
  policyOverride?: boolean;
  /** The RGPs and EGPs evaluated, with their traces when they failed. */
  sentinel?: SentinelRecord[];
}

export interface AuditResponseInput {
  mountPoint: string;
  mountType: string;
  mountAccessor: string;
  data: Record<string, unknown> | null;
  /** The `auth` block the response hands out (Vault's wire shape), if any. */
  auth: Record<string, unknown> | null;
  leaseId: string;
  wrapInfo: WrapInfo | null;
  warnings: string[];
}

export interface AuditInput {
  type: 'request' | 'response';
  auth: AuditAuthInput | null;
  request: AuditRequestInput;
  response?: AuditResponseInput;
  error?: string;
  /** The serving mount's audit_non_hmac_request_keys / audit_non_hmac_response_keys. */
  nonHMACRequestKeys: string[];
  nonHMACResponseKeys: string[];
}

/** An entry on its way to being recorded, and the caller waiting for its fate. */
export interface PendingEntry {
  input: AuditInput;
  resolve(status: 'recorded' | 'gone'): void;
  reject(reason: unknown): void;
}

export type AuditEntry = Record<string, unknown>;

/** Drops fields Vault's encoder omits when empty: "", 0, null, undefined, [] and {}. */
function compact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || v === null || v === '' || v === 0) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0) continue;
    out[k] = v;
  }
  return out;
}

interface Hashers {
  /** Tokens and data strings. */
  value: Hasher;
  /** Accessors: hashed unless hmac_accessor=false. */
  accessor: Hasher;
  /** The caller's token and accessor (the same on every request of a client: may be remembered). */
  caller: Hasher;
  callerAccessor: Hasher;
}

async function maybe(hash: Hasher, v: string): Promise<string> {
  return v ? hash(v) : v;
}

async function authBlock(a: AuditAuthInput | null, h: Hashers): Promise<Record<string, unknown>> {
  if (!a) return {};
  return compact({
    client_token: await maybe(h.caller, a.clientToken),
    accessor: await maybe(h.callerAccessor, a.accessor),
    display_name: a.displayName,
    policies: a.policies,
    token_policies: a.tokenPolicies,
    identity_policies: a.identityPolicies,
    metadata: a.metadata,
    entity_id: a.entityId,
    token_type: a.tokenType,
    token_ttl: a.tokenTTL,
    token_issue_time: a.tokenIssueTime,
  });
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The auth block a response hands out, in the audit shape. */
async function responseAuth(a: Record<string, unknown> | null, h: Hashers): Promise<Record<string, unknown> | null> {
  if (!a) return null;
  return compact({
    client_token: await maybe(h.value, str(a.client_token)),
    accessor: await maybe(h.accessor, str(a.accessor)),
    display_name: str(a.display_name),
    policies: strings(a.policies),
    token_policies: strings(a.token_policies),
    identity_policies: strings(a.identity_policies),
    metadata: a.metadata ?? null,
    num_uses: typeof a.num_uses === 'number' ? a.num_uses : 0,
    entity_id: str(a.entity_id),
    token_type: str(a.token_type),
    token_ttl: typeof a.lease_duration === 'number' ? a.lease_duration : 0,
  });
}

/** elide_list_responses: a list answer keeps only how many keys (and key_info entries) it had. */
function elideList(data: Record<string, unknown>): Record<string, unknown> {
  const out = { ...data };
  if (Array.isArray(out.keys)) out.keys = out.keys.length;
  if (out.key_info !== null && typeof out.key_info === 'object' && !Array.isArray(out.key_info)) out.key_info = Object.keys(out.key_info).length;
  return out;
}

async function wrapInfoBlock(w: WrapInfo | null, h: Hashers): Promise<Record<string, unknown> | null> {
  if (!w) return null;
  return compact({
    token: await maybe(h.value, w.token),
    accessor: await maybe(h.accessor, w.accessor),
    ttl: w.ttl,
    creation_time: w.creation_time,
    creation_path: w.creation_path,
    wrapped_accessor: await maybe(h.accessor, w.wrapped_accessor ?? ''),
  });
}

/**
 * Formats one entry for a device: `hash` is the device's salted HMAC, `callerHash` the same
 * function for the caller's token and accessor. `time` is when the device wrote it (RFC 3339
 * with nanoseconds).
 */
export async function formatEntry(
  input: AuditInput,
  options: Pick<DeviceOptions, 'hmacAccessor' | 'logRaw' | 'elideListResponses'>,
  hash: Hasher,
  time: string,
  callerHash: Hasher = hash,
): Promise<AuditEntry> {
  const value = options.logRaw ? rawHasher : hash;
  const caller = options.logRaw ? rawHasher : callerHash;
  const h: Hashers = { value, accessor: options.hmacAccessor ? value : rawHasher, caller, callerAccessor: options.hmacAccessor ? caller : rawHasher };
  const rq = input.request;
  const request = compact({
    id: rq.id,
    operation: rq.operation,
    mount_point: rq.mountPoint,
    mount_type: rq.mountType,
    mount_accessor: rq.mountAccessor,
    client_token: await maybe(h.caller, rq.clientToken),
    client_token_accessor: await maybe(h.callerAccessor, rq.clientTokenAccessor),
    namespace: { id: 'root' },
    path: rq.path,
    data: rq.data ? await hashData(rq.data, h.value, input.nonHMACRequestKeys) : null,
    remote_address: rq.remoteAddress,
    wrap_ttl: rq.wrapTTL,
    policy_override: rq.policyOverride === true ? true : null,
    sentinel: rq.sentinel && rq.sentinel.length > 0 ? rq.sentinel : null,
  });

  const entry: AuditEntry = { time, type: input.type, auth: await authBlock(input.auth, h), request };
  if (input.type === 'response' && input.response) {
    const rs = input.response;
    let data = rs.data;
    if (data && options.elideListResponses && rq.operation === 'list') data = elideList(data);
    entry.response = compact({
      mount_point: rs.mountPoint,
      mount_type: rs.mountType,
      mount_accessor: rs.mountAccessor,
      auth: await responseAuth(rs.auth, h),
      secret: rs.leaseId ? { lease_id: rs.leaseId } : null,
      data: data ? await hashData(data, h.value, input.nonHMACResponseKeys) : null,
      warnings: rs.warnings,
      wrap_info: await wrapInfoBlock(rs.wrapInfo, h),
    });
  }
  if (input.error) entry.error = input.error;
  return entry;
}
