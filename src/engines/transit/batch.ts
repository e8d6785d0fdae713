// Batch requests (batch_input) and per-item inputs: items are loosely typed JSON, decoded as
// Vault's mapstructure does (weak typing); each item's failure becomes its own `error`.

import { fromBase64 } from '../../crypto/encoding';
import { badRequest, CofferError } from '../../framework/errors';
import { convertField, type FieldData } from '../../framework/fields';
import { SLICE_US } from './batch-cost';

export type Item = Record<string, unknown>;
export type ItemResult = Record<string, unknown>;

/** The batch items, or null for a single-item request. */
export function batchItems(fields: FieldData): Item[] | null {
  const raw = fields.raw.batch_input;
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw)) throw badRequest('batch_input must be an array of objects');
  if (raw.length === 0) throw badRequest('missing batch input to process');
  return raw.map((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw badRequest(`batch_input item ${i} is not an object`);
    return item as Item;
  });
}

/** The single-item request as an item (the declared fields, as sent). */
export function singleItem(fields: FieldData, names: readonly string[]): Item {
  const out: Item = {};
  for (const n of names) if (fields.raw[n] !== undefined) out[n] = fields.raw[n];
  return out;
}

/** Whether an item carries a field (JSON null is the zero value: not given). */
export const itemHas = (item: Item, name: string): boolean => item[name] !== undefined && item[name] !== null;

export function itemString(item: Item, name: string): string {
  const v = item[name];
  if (v === undefined || v === null) return '';
  try {
    return convertField('string', v) as string;
  } catch {
    throw badRequest(`invalid ${name}: expected a string`);
  }
}

export function itemInt(item: Item, name: string): number {
  const v = item[name];
  if (v === undefined || v === null || v === '') return 0;
  try {
    return convertField('int', v) as number;
  } catch {
    throw badRequest(`invalid ${name}: expected an integer`);
  }
}

export function itemBool(item: Item, name: string): boolean {
  const v = item[name];
  if (v === undefined || v === null || v === '') return false;
  try {
    return convertField('bool', v) as boolean;
  } catch {
    throw badRequest(`invalid ${name}: expected a boolean`);
  }
}

/** A base64 item field (absent or empty: no bytes). */
export function itemBytes(item: Item, name: string): Uint8Array {
  const s = itemString(item, name);
  if (s === '') return new Uint8Array(0);
  const out = fromBase64(s);
  if (!out) throw badRequest(`failed to base64-decode ${name}`);
  return out;
}

/** A 4xx message of a per-item failure; anything else is a server error and propagates. */
export function itemError(e: unknown): string {
  if (e instanceof CofferError && e.status < 500) return e.errors.join('; ');
  throw e;
}

/** How a batch is run: each item's estimated cost (batch-cost.ts) and what one request may spend. */
export interface BatchCost {
  itemUs: number;
  budgetMs: number;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Runs every item, in order, keeping each failure in its own result with the item's reference.
 * A batch whose estimated cost is over the budget is refused before any item runs; the others run
 * in slices of about SLICE_US, each followed by a turn of the event loop, so that a batch of slow
 * items does not hold up the other requests of its mount.
 */
export async function eachItem(items: Item[], run: (item: Item) => Promise<ItemResult>, cost: BatchCost): Promise<ItemResult[]> {
  const estimatedMs = Math.ceil((items.length * cost.itemUs) / 1000);
  if (estimatedMs > cost.budgetMs) {
    throw badRequest(
      `batch_input of ${items.length} items would take about ${estimatedMs} ms of CPU, more than the ${cost.budgetMs} ms this server allows one request: split it into smaller batches`,
    );
  }
  const perSlice = Math.max(1, Math.floor(SLICE_US / cost.itemUs));
  const out: ItemResult[] = [];
  for (const item of items) {
    if (out.length > 0 && out.length % perSlice === 0) await nextTurn();
    let result: ItemResult;
    try {
      result = await run(item);
    } catch (e) {
      result = { error: itemError(e) };
    }
    result.reference = itemString(item, 'reference');
    out.push(result);
  }
  return out;
}

/**
 * Encrypt/decrypt batches: any failed item makes the whole answer a 400 carrying the results;
 * when some items succeeded, partial_failure_response_code (if set) replaces it.
 */
export function batchStatus(results: ItemResult[], partialCode: number): number {
  const failed = results.filter((r) => r.error !== undefined).length;
  if (failed === 0) return 200;
  if (failed < results.length && partialCode > 0) return partialCode;
  return 400;
}

/** Checks partial_failure_response_code: 0 (unset) or an HTTP status 1..599. */
export function partialFailureCode(fields: FieldData): number {
  const code = fields.get<number>('partial_failure_response_code');
  if (code < 0 || code > 599) throw badRequest('partial_failure_response_code must be an HTTP status code between 1 and 599');
  return code;
}
