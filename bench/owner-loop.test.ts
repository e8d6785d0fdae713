// The owning object's pipeline timed inside workerd, by calling a mount object's handle() directly
// (no Worker, no RPC): a handed-off PKI issue whose outcome the Worker computed first, and a KV v1
// read served from memory. Each is timed two ways:
// - back to back, N calls in a loop (the object's thread never idles);
// - one call at a time after a wait: a 0 ms timer, or a whole request through the Worker (the
//   same PKI issue), as a request arrives at an object whose thread idled or did other work.
// workerd's clock ticks in whole milliseconds, so the second way sums ticks over many calls.
// Not part of `npm test`: it measures, it does not check. Prints one line per figure.
import { env, runInDurableObject } from 'cloudflare:test';
import { expect, it } from 'vitest';
import type { RouteEntry } from '../src/core/mounts/table';
import type { WireRequest } from '../src/pipeline/dispatch';
import type { Grant } from '../src/framework/backend';
import { callerFingerprint } from '../src/pipeline/offload';
import { api, initCluster } from '../test/helpers/api';

const LOOP_CALLS = 20_000;
const WAITED_CALLS = 3_000;

it('times the owner pipeline', async () => {
  const c = await initCluster();
  const post = (path: string, body: unknown) => api('POST', path, { token: c.root, body });
  await post('sys/mounts/pki', { type: 'pki' });
  await post('pki/root/generate/internal', { common_name: 'Bench Root', key_type: 'ec', ttl: '8760h' });
  await post('pki/roles/bench-nostore', { allowed_domains: 'bench.example', allow_subdomains: true, key_type: 'ec', key_bits: 256, max_ttl: '72h', no_store: true });
  await post('sys/mounts/kv1', { type: 'kv', options: { version: '1' } });
  expect((await api('PUT', 'kv1/bench/read', { token: c.root, body: { a: 'b'.repeat(100) } })).status).toBe(204);
  const issueOverHttp = async () => {
    const r = await post('pki/issue/bench-nostore', { common_name: 'www.bench.example', ttl: '1h' });
    if (r.status !== 200) throw new Error(r.text);
  };
  const routes = (await env.SYSTEM.get(env.SYSTEM.idFromName('system')).routes()) as RouteEntry[];
  const lines: string[] = [];

  for (const prefix of ['pki/', 'kv1/']) {
    const { uuid, revision } = routes.find((r) => r.prefix === prefix)!;
    await runInDurableObject(env.MOUNTS.get(env.MOUNTS.idFromName(uuid)), async (mount) => {
      const pki = prefix === 'pki/';
      const wire = (extra: Partial<WireRequest>): WireRequest => ({
        id: 'bench',
        operation: pki ? 'write' : 'read',
        path: pki ? 'pki/issue/bench-nostore' : 'kv1/bench/read',
        data: pki ? { common_name: 'www.bench.example', ttl: '1h' } : {},
        auth: null,
        clientIP: '127.0.0.1',
        headers: {},
        wrapTTL: 0,
        ...extra,
      });
      let extra: Partial<WireRequest> = {};
      if (pki) {
        // A grant gives the stamp and caller that an outcome computed first must carry.
        const granted = (await mount.handle(prefix, revision, wire({ grantStamp: '' }), c.root)) as { kind: string; grant: Grant };
        expect(granted.kind).toBe('grant');
        const { grant } = granted;
        extra = { precomputed: { stamp: `${grant.incarnation}:${grant.epoch}`, operation: grant.operation, sudo: grant.sudo, caller: callerFingerprint(grant.auth), outcome: { response: { data: { certificate: 'x'.repeat(700) } } } } };
      }
      // Calls that had to wait (a token lease or compiled ACL refreshed, once a minute): counted, and finished before the next.
      let waited = 0;
      let pending: Promise<unknown> | null = null;
      const check = (result: Awaited<ReturnType<typeof mount.handle>>) => {
        // Answered with the outcome given (not recomputed here).
        if (result.kind !== 'ok' || result.recomputed) throw new Error(`not answered: ${JSON.stringify(result).slice(0, 200)}`);
      };
      const call = () => {
        const result = mount.handle(prefix, revision, wire(extra), c.root);
        if (result instanceof Promise) {
          waited++;
          pending = result.then(check);
        } else check(result);
      };
      const settle = async () => {
        if (pending) await pending;
        pending = null;
      };
      const what = pki ? 'handed-off PKI issue, answered first' : 'KV v1 read from memory';
      for (let i = 0; i < 3_000; i++) {
        call();
        await settle();
      }
      waited = 0;
      const loops: number[] = [];
      for (let round = 0; round < 7; round++) {
        const start = Date.now();
        for (let i = 0; i < LOOP_CALLS; i++) {
          call();
          if (pending) await settle();
        }
        loops.push(((Date.now() - start) * 1000) / LOOP_CALLS);
      }
      loops.sort((a, b) => a - b);
      lines.push(`${what}: back to back ${loops[3].toFixed(1)} µs per call (median of 7 rounds of ${LOOP_CALLS}; ${loops[0].toFixed(1)}-${loops[6].toFixed(1)})`);
      const waits: Array<[string, () => Promise<unknown>]> = [
        ['after a 0 ms timer', () => new Promise((resolve) => setTimeout(resolve, 0))],
        ['after a PKI issue through the Worker', issueOverHttp],
      ];
      for (const [label, wait] of waits) {
        let ms = 0;
        for (let i = 0; i < WAITED_CALLS; i++) {
          await wait();
          const start = Date.now();
          call();
          ms += Date.now() - start;
          await settle();
        }
        lines.push(`${what}: ${label} ${((ms * 1000) / WAITED_CALLS).toFixed(1)} µs per call (${WAITED_CALLS} calls)`);
      }
      lines.push(`${what}: ${waited} of the timed calls waited (timed up to their first wait)`);
    });
  }
  console.log(`\n${lines.join('\n')}\n`);
});
