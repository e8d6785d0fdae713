// The request and token metrics every hosting object records, named as Vault names them:
// vault.core.handle_request (or handle_login_request for logins), vault.route.<operation>.<mount>
// with the mount path's slashes as dashes, and vault.token.creation.
//
// Durations are what a Durable Object can observe: workerd advances its clock only across I/O,
// so a request's time is its waits (storage, other objects), not its CPU.

import type { Operation, WireOperation } from '../../framework/backend';
import type { MetricsRegistry } from './registry';

/** vault.route.<operation>.<mount with dashes>, built once per mount and operation. */
const routeNames = new Map<string, string>();
function routeName(operation: string, mountPoint: string): string {
  const key = `${operation} ${mountPoint}`;
  let name = routeNames.get(key);
  if (name === undefined) {
    if (routeNames.size >= 10_000) routeNames.clear();
    name = `vault.route.${operation}.${mountPoint.replace(/\//g, '-')}`;
    routeNames.set(key, name);
  }
  return name;
}

export class RequestTimer {
  private operation: string;
  private started = Date.now();
  /** Time already spent before a suspension (a handler handed to the Worker runs outside it). */
  private spent = 0;
  /** Set when the request turns out to be a login (an unauthenticated path of an auth method). */
  login = false;

  constructor(
    private readonly metrics: MetricsRegistry,
    private readonly mountPoint: string,
    wireOperation: WireOperation,
  ) {
    this.operation = wireOperation === 'write' ? 'update' : wireOperation;
  }

  /** A dispatch hook: the operation the write resolved to (create or update). */
  readonly resolved = (operation: Operation): void => {
    this.operation = operation;
  };

  /** The request leaves the object for a while (src/pipeline/offload.ts): that time is not its own. */
  suspend(): void {
    this.spent += Date.now() - this.started;
  }

  resume(): void {
    this.started = Date.now();
  }

  done(): void {
    const ms = this.spent + Date.now() - this.started;
    this.metrics.sample(this.login ? 'vault.core.handle_login_request' : 'vault.core.handle_request', ms);
    this.metrics.sample(routeName(this.operation, this.mountPoint), ms);
  }
}

/** Vault's creation_ttl buckets for vault.token.creation. */
const TTL_BUCKETS: Array<[number, string]> = [
  [60, '1m'],
  [600, '10m'],
  [1200, '20m'],
  [3600, '1h'],
  [7200, '2h'],
  [86400, '1d'],
  [172800, '2d'],
  [604800, '7d'],
  [2592000, '30d'],
];

export function ttlBucket(ttlSeconds: number): string {
  if (ttlSeconds <= 0) return '+Inf';
  return TTL_BUCKETS.find(([limit]) => ttlSeconds <= limit)?.[1] ?? '+Inf';
}

export function countTokenCreation(metrics: MetricsRegistry, t: { authMethod: string; mountPoint: string; ttl: number; type: string }): void {
  metrics.incr('vault.token.creation', { auth_method: t.authMethod, mount_point: t.mountPoint, creation_ttl: ttlBucket(t.ttl), token_type: t.type });
}

/** vault.audit.log_request_failure / log_response_failure: no device recorded an entry. */
export function countAuditFailure(metrics: MetricsRegistry, type: 'request' | 'response'): void {
  metrics.incr(`vault.audit.log_${type}_failure`);
}
