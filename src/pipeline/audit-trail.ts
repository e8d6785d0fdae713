// The audit trail of one request in a hosting object: the request entry once the caller is
// authorised (before the handler runs), the response entry with the final, possibly wrapped,
// response; or, for a request refused earlier, both entries carrying the error. Fail-closed: when
// no device records the request entry the handler never runs, and when none records the response
// entry the client gets an internal error instead of the response (Vault's answers to both).
// A trail is dispatch's audit hook as it is (DispatchHooks.audit: its request and response).

import type { AuthContext, LogicalRequest, LogicalResponse } from '../framework/backend';
import { CofferError, multierror, RsaKeysNeeded } from '../framework/errors';
import type { MountContext, WireRequest } from './dispatch';
import type { AuditBroker, AuditDeviceRef } from '../core/audit/broker';
import type { Maybe } from '../framework/steps';
import type { AuditAuthInput, AuditInput, AuditRequestInput, AuditResponseInput } from '../core/audit/entry';

/** Vault: the request is refused with a 500 when it could not be audited... */
export const requestNotAudited = (): CofferError => new CofferError(500, [multierror(['internal error'])]);
/** ...and the response is replaced by one when the response could not be. */
export const responseNotAudited = (): CofferError => new CofferError(500, ['internal error']);

/** Where a request is served, as the trail needs it. */
export interface TrailContext {
  wire: WireRequest;
  mount: Pick<MountContext, 'mountPoint' | 'mountType' | 'mountAccessor'>;
  /** The raw client token ("" for none): entries carry its HMAC. */
  token: string;
  nonHMACRequestKeys?: string[];
  nonHMACResponseKeys?: string[];
  /** Awaited before a response entry goes to a device (the host's writes must be durable first). */
  beforeResponse?: () => Promise<void> | undefined;
}

/** The auth block of request entries, from what the token resolved to. */
export function auditAuth(auth: AuthContext | null, token: string): AuditAuthInput | null {
  if (!auth) return null;
  return {
    clientToken: token,
    accessor: auth.accessor,
    displayName: auth.displayName,
    policies: [...auth.policies, ...(auth.identityPolicies ?? [])],
    tokenPolicies: auth.policies,
    identityPolicies: auth.identityPolicies ?? [],
    metadata: auth.metadata ?? null,
    entityId: auth.entityId,
    tokenType: auth.tokenType,
    tokenTTL: auth.ttl ?? 0,
    tokenIssueTime: auth.issueTime ?? '',
  };
}

function responseInput(r: LogicalResponse, mount: TrailContext['mount']): AuditResponseInput {
  const rawBody = r.raw?.body;
  // Binary raw bodies (certificates, CRLs, OCSP answers) carry no fields to record.
  const isFields = rawBody !== null && typeof rawBody === 'object' && !Array.isArray(rawBody) && !ArrayBuffer.isView(rawBody);
  const data = r.raw ? (isFields ? (rawBody as Record<string, unknown>) : null) : (r.data ?? null);
  return {
    mountPoint: mount.mountPoint,
    mountType: mount.mountType,
    mountAccessor: mount.mountAccessor,
    // A wrapped response shows only its wrap_info, as the client sees it.
    data: r.wrapInfo ? null : data,
    auth: r.wrapInfo ? null : (r.auth ?? null),
    leaseId: r.wrapInfo ? '' : (r.leaseId ?? ''),
    wrapInfo: r.wrapInfo ?? null,
    warnings: r.warnings ?? [],
  };
}

const errorText = (e: unknown): string => {
  if (e instanceof CofferError) return e.errors.join('; ') || `HTTP ${e.status}`;
  return e instanceof Error ? e.message : String(e);
};

/** Errors nothing is audited for: a sealed cluster has no audit devices to write to. */
const unaudited = (e: unknown): boolean => e instanceof CofferError && e.status === 503;

export class AuditTrail {
  private state: 'new' | 'requested' | 'refused' | 'answered' = 'new';
  private operation: string;
  /**
   * The devices the request entry went to; the response entry goes to the same ones, so a
   * device enabled by this very request starts with the next request.
   */
  private devices: AuditDeviceRef[] | undefined;

  constructor(
    private readonly broker: AuditBroker,
    private readonly ctx: TrailContext,
  ) {
    this.operation = ctx.wire.operation === 'write' ? 'update' : ctx.wire.operation;
  }

  private input(type: AuditInput['type'], extra: Partial<AuditInput>): AuditInput {
    const { wire, mount, token } = this.ctx;
    const request: AuditRequestInput = {
      id: wire.id,
      operation: this.operation,
      mountPoint: mount.mountPoint,
      mountType: mount.mountType,
      mountAccessor: mount.mountAccessor,
      clientToken: token,
      clientTokenAccessor: wire.auth?.accessor ?? '',
      path: wire.path,
      data: Object.keys(wire.data).length > 0 ? wire.data : null,
      remoteAddress: wire.clientIP,
      wrapTTL: wire.wrapTTL,
      policyOverride: wire.policyOverride,
      sentinel: wire.sentinel,
    };
    return {
      type,
      auth: auditAuth(wire.auth, token),
      request,
      nonHMACRequestKeys: this.ctx.nonHMACRequestKeys ?? [],
      nonHMACResponseKeys: this.ctx.nonHMACResponseKeys ?? [],
      ...extra,
    };
  }

  /** Whether the request entry went to a device (so a response entry is due). */
  get recording(): boolean {
    return this.state === 'requested' && this.devices !== undefined && this.devices.length > 0;
  }

  /**
   * Logs the request entry before the handler runs; throws to refuse the request. At once while
   * the device list is cached and empty (the common case costs nothing more).
   */
  request(req?: Pick<LogicalRequest, 'operation'>, error?: unknown): Maybe<void> {
    if (this.state !== 'new') return;
    if (req) this.operation = req.operation;
    this.state = 'requested';
    const devices = this.broker.devices();
    if (!(devices instanceof Promise)) return this.#requested(devices, error);
    return devices.then(
      (known) => this.#requested(known, error),
      (e: unknown) => {
        console.error(`audit devices could not be read: ${e instanceof Error ? e.message : String(e)}`);
        this.state = 'refused';
        throw requestNotAudited();
      },
    );
  }

  #requested(devices: AuditDeviceRef[], error: unknown): Promise<void> | undefined {
    this.devices = devices;
    return devices.length === 0 ? undefined : this.#logRequest(devices, error);
  }

  async #logRequest(devices: AuditDeviceRef[], error: unknown): Promise<void> {
    const outcome = await this.broker.log(this.input('request', error === undefined ? {} : { error: errorText(error) }), devices);
    if (outcome === 'failed') {
      this.state = 'refused';
      throw requestNotAudited();
    }
  }

  /** Logs the response entry; throws when no device recorded it. At once when there is none. */
  response(response: LogicalResponse | null, error?: unknown): Maybe<void> {
    if (this.state !== 'requested') return;
    this.state = 'answered';
    if (this.devices?.length === 0) return;
    return this.#logResponse(response, error);
  }

  async #logResponse(response: LogicalResponse | null, error: unknown): Promise<void> {
    await this.ctx.beforeResponse?.();
    const extra: Partial<AuditInput> = { response: responseInput(response ?? {}, this.ctx.mount) };
    if (error !== undefined) extra.error = errorText(error);
    if ((await this.broker.log(this.input('response', extra), this.devices)) === 'failed') throw responseNotAudited();
  }

  /**
   * A request failed (refused before dispatch, by the ACL, or by its handler): records what was
   * not recorded yet, with the error. Returns the error the client gets.
   */
  async failed(e: unknown): Promise<unknown> {
    // A request sent back for RSA key pairs comes again: it is audited then.
    if (e instanceof RsaKeysNeeded) return e;
    if (unaudited(e) || this.state === 'refused' || this.state === 'answered') return e;
    try {
      await this.request(undefined, e);
      await this.response(null, e);
    } catch (auditError) {
      return auditError;
    }
    return e;
  }
}
