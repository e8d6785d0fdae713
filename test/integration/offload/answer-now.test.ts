// A request the Worker answered first, and whose outcome the object takes, is answered by the
// object without a wait (src/framework/steps.ts): its method returns the result itself, not a
// promise. Anything that must be waited for on the way (an audit device that records, a caller
// not known yet) makes it a promise again, with the same answer.
import { env, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Precomputed } from '../../../src/framework/backend';
import type { WireRequest } from '../../../src/pipeline/dispatch';
import { callerFingerprint } from '../../../src/pipeline/offload';
import type { WireResult } from '../../../src/pipeline/result';
import { mountStub, systemStub } from '../../../src/rpc/stubs';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { sinkURL } from '../../helpers/audit-sink';

let c: Cluster;
const { ok } = caller(() => c.root);

interface MountHandle {
  handle(prefix: string, revision: number, wire: WireRequest, token: string): WireResult | Promise<WireResult>;
}

async function transitRoute() {
  const routes = await systemStub(env).routes();
  if (!Array.isArray(routes)) throw new Error('no routes');
  return routes.find((r) => r.prefix === 'transit/')!;
}

const wireFor = (extra: Partial<WireRequest>): WireRequest => ({
  id: crypto.randomUUID(),
  operation: 'write',
  path: 'transit/hmac/now',
  data: { input: btoa('x') },
  auth: null,
  clientIP: '127.0.0.1',
  headers: {},
  wrapTTL: 0,
  ...extra,
});

/** A grant for the path, settled, and the answer-first request it makes possible. */
async function answerable(token: string): Promise<WireRequest> {
  const route = await transitRoute();
  const stub = mountStub(env, route.uuid);
  const granted = await stub.handle(route.prefix, route.revision, wireFor({ grantStamp: '' }), token);
  if (granted.kind !== 'grant') throw new Error(`expected a grant, got ${granted.kind}`);
  const { grant } = granted;
  const outcome = grant.audited ? { response: { data: { hmac: 'vault:v1:x' } } } : { answered: true as const };
  expect((await stub.settleGrant(grant.id, outcome)).kind).toBe(grant.audited ? 'ok' : 'settled');
  const precomputed: Precomputed = {
    stamp: `${grant.incarnation}:${grant.epoch}`,
    operation: grant.operation,
    sudo: grant.sudo,
    caller: callerFingerprint(grant.auth),
    outcome: { answered: true },
  };
  return wireFor({ precomputed });
}

/** What the object's method returned: the result itself, or a promise of it. */
async function handleInObject(wire: WireRequest, token: string): Promise<{ atOnce: boolean; result: WireResult }> {
  const route = await transitRoute();
  return await runInDurableObject(mountStub(env, route.uuid), async (instance) => {
    const returned = (instance as unknown as MountHandle).handle(route.prefix, route.revision, wire, token);
    return { atOnce: !(returned instanceof Promise), result: await returned };
  });
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
  await ok('POST', 'transit/keys/now', {});
});

describe('an outcome the Worker computed first', () => {
  it('is taken without a wait when nothing on the way needs one', async () => {
    const wire = await answerable(c.root);
    expect(await handleInObject(wire, c.root)).toMatchObject({ atOnce: true, result: { kind: 'settled' } });
  });

  it('is recomputed in the object for another caller than the one it was computed for', async () => {
    const wire = await answerable(c.root);
    const other = (await ok('POST', 'auth/token/create', { policies: ['root'] })).body.auth.client_token;
    // The other token's first request waits for its lease from the shard; its second does not.
    const first = await handleInObject({ ...wire, id: crypto.randomUUID() }, other);
    expect(first.atOnce).toBe(false);
    expect(first.result).toMatchObject({ kind: 'ok', recomputed: true });
    const second = await handleInObject({ ...wire, id: crypto.randomUUID() }, other);
    // Its HMAC is made with WebCrypto, in the object: a wait again, for the answer.
    expect(second.result).toMatchObject({ kind: 'ok', recomputed: true, response: { data: { hmac: expect.stringMatching(/^vault:v1:/) } } });
  });

  it('waits when an audit device records: the response must reach it', async () => {
    await ok('PUT', 'sys/audit/now', { type: 'http', options: { url: sinkURL('answer-now') } });
    try {
      const wire = await answerable(c.root);
      const handled = await handleInObject({ ...wire, precomputed: { ...wire.precomputed!, outcome: { response: { data: { hmac: 'vault:v1:x' } } } } }, c.root);
      expect(handled).toMatchObject({ atOnce: false, result: { kind: 'ok', response: { data: { hmac: 'vault:v1:x' } } } });
    } finally {
      await ok('DELETE', 'sys/audit/now');
    }
  });
});
