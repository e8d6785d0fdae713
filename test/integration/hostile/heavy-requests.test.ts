// Heavy requests do not stall a mount (issue 16, item 1): a long transit batch runs beside the
// mount's other requests in slices, batches over the CPU budget are refused before any item runs,
// and RSA key pairs are made by the Worker, never inside the mount's object.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemStub } from '../../../src/rpc/stubs';
import type { PreparedRsaPair, WireRequest } from '../../../src/pipeline/dispatch';
import type { WireResult } from '../../../src/pipeline/result';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { sink, sinkURL } from '../../helpers/audit-sink';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const INPUT = btoa('sixteen bytes!!!');

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
  await ok('POST', 'transit/keys/heavy', { type: 'rsa-2048' });
  await ok('POST', 'transit/keys/light', { type: 'aes256-gcm96' });
});

/** `n` concurrent light requests on the mount (encrypts with an AES key), each answered 200. */
async function lightRequests(n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async () => {
      const r = await call('POST', 'transit/encrypt/light', { plaintext: INPUT });
      expect(r.status).toBe(200);
    }),
  );
}

describe('a heavy batch beside light requests', () => {
  // How long they wait is the bench's business (no timing assertions here); that they are all
  // answered while the batch still runs shows it runs in slices with them, not ahead of them.
  it('light requests are all answered while 1,500 RSA-2048 signatures are being made on the same mount', async () => {
    await lightRequests(20); // warm up
    const items = Array.from({ length: 1_500 }, () => ({ input: INPUT }));
    let heavyDone = false;
    const heavy = call('POST', 'transit/sign/heavy', { batch_input: items }).then((r) => {
      heavyDone = true;
      return r;
    });
    // Let the batch start before the light requests arrive.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await lightRequests(100);
    expect(heavyDone).toBe(false);
    const r = await heavy;
    expect(r.status).toBe(200);
    expect(r.body.data.batch_results).toHaveLength(1_500);
    expect(r.body.data.batch_results.every((x: { signature?: string }) => x.signature?.startsWith('vault:v1:'))).toBe(true);
  });

  it('a batch over the CPU budget is refused before any item runs; 10,000 AES items are well within it', async () => {
    // 10,000 RSA-4096 signatures: about 64 s of CPU against the default budget of 10 s.
    await ok('POST', 'transit/keys/big', { type: 'rsa-4096' });
    const refused = await call('POST', 'transit/sign/big', { batch_input: Array.from({ length: 10_000 }, () => ({ input: INPUT })) });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatch(/^batch_input of 10000 items would take about \d+ ms of CPU, more than the 10000 ms this server allows one request/);

    const aes = await call('POST', 'transit/encrypt/light', { batch_input: Array.from({ length: 10_000 }, (_, i) => ({ plaintext: INPUT, reference: String(i) })) });
    expect(aes.status).toBe(200);
    expect(aes.body.data.batch_results).toHaveLength(10_000);
    expect(aes.body.data.batch_results[9_999].reference).toBe('9999');

    const decrypted = await call('POST', 'transit/decrypt/light', { batch_input: aes.body.data.batch_results.map((x: { ciphertext: string }) => ({ ciphertext: x.ciphertext })) });
    expect(decrypted.status).toBe(200);
    expect(decrypted.body.data.batch_results.every((x: { plaintext: string }) => x.plaintext === INPUT)).toBe(true);
  });
});

/** One write straight to the mount's object, as the Worker sends it. */
async function handle(path: string, data: Record<string, unknown>, preparedRsaPairs?: PreparedRsaPair[]): Promise<WireResult> {
  const prefix = `${path.split('/')[0]}/`;
  const routes = await systemStub(env).routes();
  if (!Array.isArray(routes)) throw new Error(`no routes: ${routes}`);
  const route = routes.find((r) => r.prefix === prefix)!;
  const stub = env.MOUNTS.get(env.MOUNTS.idFromName(route.uuid));
  const wire: WireRequest = { id: crypto.randomUUID(), operation: 'write', path, data, auth: null, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0, preparedRsaPairs };
  return await stub.handle(route.prefix, route.revision, wire, c.root);
}

describe('RSA key pairs are made outside the mount object', () => {
  beforeAll(async () => {
    await ok('POST', 'sys/mounts/pki', { type: 'pki' });
  });

  it('the object asks for the pair instead of making it, and uses the one it is given', async () => {
    const asked = await handle('pki/root/generate/internal', { common_name: 'outside.example', key_type: 'rsa', key_bits: 3072 });
    expect(asked).toEqual({ kind: 'prepare', rsaBits: [3072] });
    // Nothing was written: no issuer yet.
    expect((await call('GET', 'pki/issuers?list=true')).status).toBe(404);

    const pair = (await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 3072, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const pkcs8 = new Uint8Array((await crypto.subtle.exportKey('pkcs8', pair.privateKey)) as ArrayBuffer);
    const spki = new Uint8Array((await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer);
    const done = await handle('pki/root/generate/internal', { common_name: 'outside.example', key_type: 'rsa', key_bits: 3072 }, [{ bits: 3072, pkcs8, spki }]);
    if (done.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(done)}`);
    const certPem = (done.response.data as { certificate: string }).certificate;
    const der = Uint8Array.from(atob(certPem.replace(/-----[^-]+-----|\s/g, '')), (ch) => ch.charCodeAt(0));
    // The certificate holds the given public key (its SPKI bytes appear in the certificate).
    expect(Buffer.from(der).includes(Buffer.from(spki))).toBe(true);
  });

  it('through HTTP the same request just works, and is audited once', async () => {
    await ok('PUT', 'sys/audit/heavy', { type: 'http', options: { url: sinkURL('heavy-requests') } });
    const created = await ok('POST', 'transit/keys/made-outside', { type: 'rsa-3072' });
    expect(created.body.data.type).toBe('rsa-3072');
    const entries = (await sink('heavy-requests')).entries.filter((e) => e.request.path === 'transit/keys/made-outside');
    expect(entries.map((e) => e.type)).toEqual(['request', 'response']);
    const key = await ok('GET', 'transit/keys/made-outside');
    expect(Object.keys(key.body.data.keys)).toEqual(['1']);
    const rotated = await ok('POST', 'transit/keys/made-outside/rotate');
    expect(Object.keys(rotated.body.data.keys)).toEqual(['1', '2']);
    const upserted = await ok('POST', 'transit/encrypt/upserted-rsa', { plaintext: INPUT, type: 'rsa-2048' });
    expect(upserted.body.data.ciphertext).toMatch(/^vault:v1:/);
    expect((await ok('GET', 'transit/keys/upserted-rsa')).body.data.type).toBe('rsa-2048');
  });
});
