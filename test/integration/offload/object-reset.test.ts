// A mount's object reset while its requests are in flight (workerd resets an object whose storage
// write failed, or whose code was updated): every request is answered, none is left hanging, the
// ones caught by the reset fail with a 500 naming it, and the object's next run serves the next
// ones. Handed-off requests included: a grant issued by the run that was reset is unknown to the
// next one, so its settlement is refused and the request is finished there.
import { env, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MountObject } from '../../../durable-objects/mount';
import { mountStub, systemStub } from '../../../src/rpc/stubs';
import { api, caller, initCluster, type ApiResult, type Cluster } from '../../helpers/api';
import { OBJECT_RESET_REASON as REASON } from '../../helpers/object-reset';

let c: Cluster;
const { ok } = caller(() => c.root);

async function stubOf(prefix: string): Promise<DurableObjectStub<MountObject>> {
  const routes = await systemStub(env).routes();
  if (!Array.isArray(routes)) throw new Error(`no routes: ${String(routes)}`);
  const route = routes.find((r) => r.prefix === prefix);
  if (!route) throw new Error(`no route ${prefix}`);
  return mountStub(env, route.uuid);
}

/** The request's answer, or 'hung' when none came within `ms`. */
const within = (ms: number, p: Promise<ApiResult>): Promise<ApiResult | 'hung'> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
};

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
  await ok('POST', 'transit/keys/hot', { type: 'ecdsa-p256' });
  await ok('POST', 'sys/mounts/kv', { type: 'kv' });
  await ok('POST', 'kv/x', { a: '1' });
});

describe('a mount object reset under traffic', () => {
  // Requests caught by a reset, over the three cases: the reset must have met traffic at least once.
  let caught = 0;

  it.each([
    ['a handed-off transit signature', 'transit/', 200, () => api('POST', 'transit/sign/hot', { token: c.root, body: { input: btoa('x') } })],
    ['a KV write in the object', 'kv/', 204, () => api('POST', 'kv/y', { token: c.root, body: { a: 'b' } })],
    ['a KV read in the object', 'kv/', 200, () => api('GET', 'kv/x', { token: c.root })],
  ] as const)('%s: answered, never hanging, and served again after', async (_name, prefix, success, send) => {
    // Warm: the Worker holds the mount's state, the object its hosted mount (and grants, for transit).
    for (let i = 0; i < 10; i++) expect((await send()).status).toBe(success);
    const stub = await stubOf(prefix);
    const inflight: Promise<ApiResult>[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 15; i++) inflight.push(send());
      await new Promise((resolve) => setTimeout(resolve, round));
      await runInDurableObject(stub, (_obj, state) => state.abort(REASON)).catch(() => undefined);
    }
    const answers = await Promise.all(inflight.map((p) => within(10_000, p)));
    expect(answers.filter((a) => a === 'hung')).toEqual([]);
    for (const a of answers) {
      if (a === 'hung' || a.status === success) continue;
      expect(a.status).toBe(500);
      expect(a.body.errors).toEqual([REASON]);
      caught++;
    }
    for (let i = 0; i < 5; i++) expect((await send()).status).toBe(success);
  });

  it('met requests in flight', () => {
    expect(caught).toBeGreaterThan(0);
  });
});
