// Which transit requests are worth handing to the Worker: the handler's estimated CPU from the key
// type (batch-cost.ts) and the number of items, read from the policy the Worker holds; and the
// Worker's decision against OFFLOAD_MIN_COST_US.
import { describe, expect, it } from 'vitest';
import { transitBackend } from '../../../../src/engines/transit';
import { buildPolicy } from '../../../../src/engines/transit/create';
import { transitOffloadCost } from '../../../../src/engines/transit/offload-cost';
import { encodePolicy } from '../../../../src/engines/transit/policy';
import { worthHandingOff } from '../../../../src/worker/grants';
import type { MountContext } from '../../../../src/pipeline/dispatch';

const OPTIONS = { derived: false, convergent: false, exportable: false, allowPlaintextBackup: false, keySize: 0, autoRotatePeriod: 0 };
const policy = async (name: string, type: string) => encodePolicy(await buildPolicy(name, { ...OPTIONS, type }, Date.now()));

describe('transitOffloadCost', async () => {
  const held = new Map<string, Uint8Array | null>([
    ['policy/aes', await policy('aes', 'aes256-gcm96')],
    ['policy/rsa', await policy('rsa', 'rsa-2048')],
    ['policy/ed', await policy('ed', 'ed25519')],
    ['policy/p256', await policy('p256', 'ecdsa-p256')],
    ['policy/gone', null],
  ]);
  const cost = (path: string, data: Record<string, unknown> = {}) => transitOffloadCost(path, data, (key) => held.get(key));

  it('prices one item by key type and the halves the path uses', () => {
    expect(cost('encrypt/aes')).toBe(35);
    expect(cost('sign/rsa')).toBe(1_000);
    expect(cost('sign/rsa/sha2-512')).toBe(1_000);
    expect(cost('verify/rsa')).toBe(140);
    expect(cost('rewrap/rsa')).toBe(1_140);
    expect(cost('sign/ed')).toBe(80);
    expect(cost('verify/p256')).toBe(300);
    expect(cost('datakey/plaintext/rsa')).toBe(140);
    expect(cost('hmac/rsa')).toBe(35);
    // An HMAC verification uses the secret key, whatever the key's type.
    expect(cost('verify/rsa', { hmac: 'vault:v1:x' })).toBe(35);
  });

  it('multiplies by the items of a batch', () => {
    expect(cost('encrypt/aes', { batch_input: Array.from({ length: 100 }, () => ({})) })).toBe(3_500);
    expect(cost('decrypt/aes', { batch_input: [] })).toBe(35);
  });

  it('cannot tell without the policy; a missing key (upsert) costs the object nothing to keep', () => {
    expect(cost('encrypt/unknown')).toBeNull();
    expect(cost('encrypt/gone')).toBe(0);
    expect(cost('keys/aes')).toBeNull();
    expect(cost('encrypt')).toBeNull();
  });
});

describe('worthHandingOff', async () => {
  const backend = transitBackend(null, {});
  const mount: MountContext = { mountPoint: 'transit/', mountType: 'transit', mountAccessor: 'a', mountConfig: { defaultLeaseTTL: 0, maxLeaseTTL: 0 }, mountOptions: {} };
  const reads = { values: new Map<string, Uint8Array | null>([['policy/aes', await policy('aes', 'aes256-gcm96')], ['policy/rsa', await policy('rsa', 'rsa-2048')]]), lists: new Map() };
  const state = { backend, mount, reads };

  it('keeps cheap requests in the object and hands off costly or unknown ones', () => {
    expect(worthHandingOff(state, 'transit/encrypt/aes', {}, 250)).toBe(false);
    expect(worthHandingOff(state, 'transit/encrypt/aes', { batch_input: Array.from({ length: 10 }, () => ({})) }, 250)).toBe(true);
    expect(worthHandingOff(state, 'transit/sign/rsa', {}, 250)).toBe(true);
    expect(worthHandingOff(state, 'transit/sign/not-held', {}, 250)).toBe(true);
  });

  it('hands off everything with a threshold of 0, and any backend without an estimate', () => {
    expect(worthHandingOff(state, 'transit/encrypt/aes', {}, 0)).toBe(true);
    expect(worthHandingOff({ ...state, backend: { ...backend, offloadCost: undefined } }, 'transit/encrypt/aes', {}, 250)).toBe(true);
  });
});
