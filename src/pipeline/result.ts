// Results as they leave the pipeline and cross from a Durable Object back to the Worker. RPC does
// not preserve error classes, so errors travel as data. `stamp`: on a request resumed from a grant
// or answered first, the object's grant stamp after it (src/pipeline/offload.ts), so the Worker
// learns of its change; `recomputed`: the outcome the Worker computed first was not taken.

import type { Grant, LogicalResponse } from '../framework/backend';
import { asCofferError, CofferError, RsaKeysNeeded } from '../framework/errors';
import { BarrierError } from '../core/barrier/barrier';

export type WireResult =
  | { kind: 'ok'; response: LogicalResponse; stamp?: string; recomputed?: true }
  | { kind: 'error'; status: number; errors: string[]; extra?: Record<string, unknown>; stamp?: string; recomputed?: true }
  /** The mount no longer lives here (disabled or moved): the Worker re-reads the routes. */
  | { kind: 'gone' }
  /** Make RSA key pairs of these sizes and send the request again with them (RsaKeysNeeded). */
  | { kind: 'prepare'; rsaBits: number[] }
  /** Run the handler in the Worker under this grant, then settle it (src/pipeline/offload.ts). */
  | { kind: 'grant'; grant: Grant }
  /** The grant's state changed (or the grant ended) before it was settled: resume the request. */
  | { kind: 'stale' }
  /** The grant is settled, or the outcome the Worker computed first accepted, and nothing was to be recorded: the Worker answers what it computed. */
  | { kind: 'settled'; stamp?: string };

export function errorResult(error: unknown): WireResult {
  const e = asCofferError(error);
  if (e instanceof RsaKeysNeeded) return { kind: 'prepare', rsaBits: e.bits };
  if (e instanceof CofferError) return { kind: 'error', status: e.status, errors: e.errors, extra: e.extra };
  const message = e instanceof Error ? e.message : String(e);
  // Internal failures (storage, barrier) answer 500 like Vault's plain Go errors; never a partial write.
  console.error('internal error:', e instanceof BarrierError ? message : e);
  return { kind: 'error', status: 500, errors: [message] };
}

/** A failure as RPC data, for the calls that answer `{ ok }` replies instead of a WireResult. */
export function errorReply(e: unknown, unavailable: string): { ok: false; status: number; errors: string[] } {
  const r = errorResult(e);
  return { ok: false, status: r.kind === 'error' ? r.status : 500, errors: r.kind === 'error' ? r.errors : [unavailable] };
}
