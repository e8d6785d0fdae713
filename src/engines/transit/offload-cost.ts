// What a transit request costs its handler, estimated before it runs (Backend.offloadCost), so
// that the Worker hands off to itself only the requests worth a second call to the mount's
// object: RSA and ECDSA work, batches. A single AES-GCM item costs less than that call.

import { itemCostUs, type KeyOperation } from './batch-cost';
import { parsedPolicy, policyKey } from './store';

/** The key halves each handed-off path uses per item (encrypt: the public half of an RSA key). */
const OPERATIONS: Record<string, KeyOperation[]> = {
  encrypt: ['public'],
  decrypt: ['private'],
  rewrap: ['private', 'public'],
  datakey: ['public'],
  sign: ['private'],
  verify: ['public'],
  hmac: ['secret'],
};

/** The key a handed-off path names: its second segment, or its third for datakey/<type>/<name>. */
function keyName(segments: string[]): string | undefined {
  return segments[0] === 'datakey' ? segments[2] : segments[1];
}

export function transitOffloadCost(relPath: string, data: Record<string, unknown>, cached: (key: string) => Uint8Array | null | undefined): number | null {
  const segments = relPath.split('/');
  const ops = OPERATIONS[segments[0]];
  const name = keyName(segments);
  if (!ops || !name) return null;
  const bytes = cached(policyKey(name));
  if (bytes === undefined) return null;
  // No key (an encrypt that creates it) or a managed key: the object does the work anyway.
  if (bytes === null) return 0;
  const policy = parsedPolicy(name, bytes);
  if (policy.type === 'managed_key') return 0;
  // HMAC verification and HMAC keys use the secret key whatever the path.
  const secret = policy.type === 'hmac' || (segments[0] === 'verify' && data.hmac !== undefined);
  const perItem = ops.reduce((sum, op) => sum + itemCostUs(policy.type, secret ? 'secret' : op), 0);
  const items = Array.isArray(data.batch_input) ? data.batch_input.length : 1;
  return perItem * Math.max(1, items);
}
