// Fail-closed auditing: when no enabled device can record a request, the request is refused
// without running; when none can record the response, the client gets an internal error instead.
// One working device is enough. Devices are real HTTP endpoints (test/global/audit-sink.ts) that
// tests switch between working and failing, as an operator would repair a log collector.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, type Cluster } from '../../helpers/api';
import { deadURL, setSinkMode, sink, sinkURL } from '../../helpers/audit-sink';

let c: Cluster;
const root = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });
const enable = async (path: string, url: string) => expect((await root('PUT', `sys/audit/${path}`, { type: 'http', options: { url } })).status).toBe(204);
const disable = async (path: string) => expect((await root('DELETE', `sys/audit/${path}`)).status).toBe(204);
/** Vault's answers when a request, or its response, could not be audited. */
const REQUEST_NOT_AUDITED = ['1 error occurred:\n\t* internal error\n\n'];
const RESPONSE_NOT_AUDITED = ['internal error'];

beforeAll(async () => {
  c = await initCluster();
  await root('POST', 'sys/mounts/secret', { type: 'kv' });
  await root('PUT', 'secret/existing', { v: 'old' });
});

/** Every kind of request is refused, and none of them ran. */
async function expectEverythingRefused(): Promise<void> {
  const write = await root('PUT', 'secret/new', { v: 'must not be stored' });
  expect(write.status).toBe(500);
  expect(write.body.errors).toEqual(REQUEST_NOT_AUDITED);
  expect((await root('PUT', 'secret/existing', { v: 'must not replace' })).status).toBe(500);
  for (const [method, p] of [['GET', 'secret/existing'], ['GET', 'auth/token/lookup-self'], ['GET', 'sys/mounts'], ['GET', 'sys/audit']] as const) {
    const r = await root(method, p);
    expect(r.status, `${method} ${p}`).toBe(500);
    expect(r.body.errors).toEqual(REQUEST_NOT_AUDITED);
  }
  const created = await root('POST', 'auth/token/create', { policies: ['default'] });
  expect(created.status).toBe(500);
  expect(created.body.auth).toBeUndefined();
  // Disabling a device, or enabling another, are requests too.
  expect((await root('PUT', 'sys/audit/rescue', { type: 'http', options: { url: sinkURL('rescue') } })).status).toBe(500);
}

async function expectNothingRan(): Promise<void> {
  expect((await root('GET', 'secret/new')).status).toBe(404);
  expect((await root('GET', 'secret/existing')).body.data).toEqual({ v: 'old' });
  expect(Object.keys((await root('GET', 'sys/audit')).body.data)).not.toContain('rescue/');
}

describe('with every device failing', () => {
  it('refuses every request when the only device answers 500, and runs nothing', async () => {
    await setSinkMode('down', 'fail');
    // Enabling succeeds: a device starts with the request after the one that enabled it.
    await enable('down', sinkURL('down'));
    await expectEverythingRefused();
    expect((await root('DELETE', 'sys/audit/down')).status).toBe(500);
    expect((await sink('down')).failures).toBeGreaterThanOrEqual(8);

    // The collector is repaired: requests flow again and the device can go.
    await setSinkMode('down', 'ok');
    await expectNothingRan();
    await disable('down');
  });

  it('refuses every request when the devices are unreachable or failing', async () => {
    await setSinkMode('flaky', 'ok');
    await enable('flaky', sinkURL('flaky'));
    await enable('unreachable', deadURL());
    await setSinkMode('flaky', 'fail');
    await expectEverythingRefused();

    await setSinkMode('flaky', 'ok');
    await expectNothingRan();
    await disable('unreachable');
    await disable('flaky');
  });
});

describe('with one device working', () => {
  it('serves requests when another device fails, and the working one records them', async () => {
    await enable('works', sinkURL('one-works'));
    await enable('broken', deadURL());
    const w = await root('PUT', 'secret/both', { v: 'stored' });
    expect(w.status).toBe(204);
    expect((await root('GET', 'secret/both')).body.data).toEqual({ v: 'stored' });
    const recorded = (await sink('one-works')).entries.map((e) => `${e.type} ${e.request.path}`);
    expect(recorded).toEqual(expect.arrayContaining(['request secret/both', 'response secret/both']));
    await disable('broken');
    await disable('works');
  });
});

describe('when the response cannot be recorded', () => {
  it('answers an internal error instead of the response; the request itself ran, as in Vault', async () => {
    await setSinkMode('no-responses', 'fail-responses');
    await enable('no-responses', sinkURL('no-responses'));
    const w = await root('PUT', 'secret/ran', { v: 'written' });
    expect(w.status).toBe(500);
    expect(w.body.errors).toEqual(RESPONSE_NOT_AUDITED);
    const read = await root('GET', 'secret/ran');
    expect(read.status).toBe(500);
    expect(read.body.errors).toEqual(RESPONSE_NOT_AUDITED);
    expect(read.text).not.toContain('written');
    const recorded = (await sink('no-responses')).entries.map((e) => `${e.type} ${e.request.path}`);
    expect(recorded).toEqual(['request secret/ran', 'request secret/ran']);

    await setSinkMode('no-responses', 'ok');
    expect((await root('GET', 'secret/ran')).body.data).toEqual({ v: 'written' });
    await disable('no-responses');
  });
});

describe('with no device enabled', () => {
  it('serves requests as before', async () => {
    expect(Object.keys((await root('GET', 'sys/audit')).body.data)).toEqual([]);
    expect((await root('PUT', 'secret/free', { v: 1 })).status).toBe(204);
    expect((await root('GET', 'secret/free')).body.data).toEqual({ v: 1 });
  });
});
