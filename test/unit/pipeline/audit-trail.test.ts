// The audit trail of a request through the pipeline (dispatch): what is logged when, and how a
// failure to log refuses the request (fail-closed).
import { describe, expect, it } from 'vitest';
import { AuditBroker, type AuditDeviceRef } from '../../../src/core/audit/broker';
import type { AuditInput } from '../../../src/core/audit/entry';
import { AuditTrail } from '../../../src/pipeline/audit-trail';
import { dispatch, type Authorizer, type MountContext, type WireRequest } from '../../../src/pipeline/dispatch';
import { utf8 } from '../../../src/crypto/encoding';
import type { AuthContext, Backend } from '../../../src/framework/backend';
import { CofferError, permissionDenied, sealedError } from '../../../src/framework/errors';
import { MemoryStorage, StorageTransaction } from '../../../src/framework/storage';

const auth: AuthContext = { accessor: 'acc', policies: ['app'], root: false, displayName: 'token', entityId: '', tokenType: 'service', boundCidrs: [], ttl: 600, issueTime: '2026-01-01T00:00:00Z', metadata: { k: 'v' } };
const mount: MountContext = { mountPoint: 'toy/', mountType: 'toy', mountAccessor: 'toy_1', mountConfig: { defaultLeaseTTL: 60, maxLeaseTTL: 120 }, mountOptions: {} };
const allowAll: Authorizer = { authorize: () => ({ sudo: false }), grantsCreateAndUpdate: () => true };
const denyAll: Authorizer = { authorize: () => { throw permissionDenied(); }, grantsCreateAndUpdate: () => false };

function setup(behaviour: { request?: 'ok' | 'fail'; response?: 'ok' | 'fail' } = {}, devices: AuditDeviceRef[] = [{ uuid: 'd', path: 'd/' }]) {
  const events: string[] = [];
  const logged: AuditInput[] = [];
  const storage = new MemoryStorage();
  const backend: Backend = {
    type: 'toy',
    paths: [
      {
        pattern: 'items/(?<name>\\w+)',
        fields: { name: { type: 'string', description: 'n' }, value: { type: 'string', description: 'v' } },
        operations: {
          update: async (req, f) => {
            events.push('handler');
            await req.storage.put(`items/${f.get('name')}`, utf8(f.get('value')));
            return { data: { stored: f.get('value') } };
          },
          read: async () => {
            events.push('handler');
            throw new CofferError(400, ['handler says no']);
          },
        },
      },
    ],
  };
  const broker = new AuditBroker({
    devices: async () => devices,
    send: async (_d, input) => {
      events.push(`audit ${input.type}`);
      if ((behaviour[input.type] ?? 'ok') === 'fail') throw new Error('device down');
      logged.push(input);
      return 'recorded';
    },
  });
  const run = async (wire: Partial<WireRequest>, authorizer: Authorizer = allowAll) => {
    const w: WireRequest = { id: 'r1', operation: 'write', path: 'toy/items/a', data: { value: 's3cret' }, auth, clientIP: '10.0.0.1', headers: {}, wrapTTL: 0, ...wire };
    const beforeResponse = async () => void events.push('durable');
    const trail = new AuditTrail(broker, { wire: w, mount, token: 'hvs.raw', nonHMACRequestKeys: ['value'], beforeResponse });
    try {
      return { response: await dispatch(backend, w, mount, new StorageTransaction(storage), authorizer, { audit: trail }) };
    } catch (e) {
      return { error: (await trail.failed(e)) as CofferError };
    }
  };
  return { events, logged, storage, run };
}

describe('the audit trail of a request', () => {
  it('logs the request before the handler runs and the response after', async () => {
    const t = setup();
    const { response } = await t.run({});
    expect(response?.data).toEqual({ stored: 's3cret' });
    // The host's writes are made durable before a device hears of the response.
    expect(t.events).toEqual(['audit request', 'handler', 'durable', 'audit response']);
    const [req, res] = t.logged;
    expect(req).toMatchObject({
      type: 'request',
      auth: { clientToken: 'hvs.raw', accessor: 'acc', policies: ['app'], tokenTTL: 600, metadata: { k: 'v' } },
      request: { id: 'r1', operation: 'update', mountPoint: 'toy/', mountType: 'toy', mountAccessor: 'toy_1', clientToken: 'hvs.raw', clientTokenAccessor: 'acc', path: 'toy/items/a', data: { value: 's3cret' }, remoteAddress: '10.0.0.1' },
      nonHMACRequestKeys: ['value'],
    });
    expect(req.error).toBeUndefined();
    expect(res).toMatchObject({ type: 'response', response: { mountPoint: 'toy/', data: { stored: 's3cret' } } });
  });

  it('with no device enabled, neither logs nor waits for the host before answering', async () => {
    const t = setup({}, []);
    const { response } = await t.run({});
    expect(response?.data).toEqual({ stored: 's3cret' });
    expect(t.events).toEqual(['handler']);
  });

  it('logs a request refused by the ACL, with its error, and never runs the handler', async () => {
    const t = setup();
    const { error } = await t.run({}, denyAll);
    expect(error?.status).toBe(403);
    expect(t.events).toEqual(['audit request', 'durable', 'audit response']);
    expect(t.logged.map((l) => [l.type, l.error])).toEqual([
      ['request', '1 error occurred:\n\t* permission denied\n\n'],
      ['response', '1 error occurred:\n\t* permission denied\n\n'],
    ]);
  });

  it('logs a handler error in the response entry', async () => {
    const t = setup();
    const { error } = await t.run({ operation: 'read', data: {} });
    expect(error?.errors).toEqual(['handler says no']);
    expect(t.logged.map((l) => [l.type, l.error])).toEqual([
      ['request', undefined],
      ['response', 'handler says no'],
    ]);
  });

  it('refuses the request without running it when no device recorded the request entry', async () => {
    const t = setup({ request: 'fail' });
    const { error } = await t.run({});
    expect(error).toBeInstanceOf(CofferError);
    expect(error?.status).toBe(500);
    expect(error?.errors).toEqual(['1 error occurred:\n\t* internal error\n\n']);
    expect(t.events).toEqual(['audit request']);
    expect(t.storage.data.size).toBe(0);
  });

  it('answers an internal error instead of the response when no device recorded the response entry', async () => {
    const t = setup({ response: 'fail' });
    const { error } = await t.run({});
    expect(error?.status).toBe(500);
    expect(error?.errors).toEqual(['internal error']);
    expect(t.events).toEqual(['audit request', 'handler', 'durable', 'audit response']);
    // As in Vault, the change itself was made.
    expect(t.storage.data.has('items/a')).toBe(true);
  });

  it('logs nothing for a sealed cluster', async () => {
    const t = setup();
    const trail = new AuditTrail(new AuditBroker({ devices: async () => [{ uuid: 'd', path: 'd/' }], send: async () => { throw new Error('must not be called'); } }), {
      wire: { id: 'x', operation: 'read', path: 'toy/items/a', data: {}, auth: null, clientIP: '', headers: {}, wrapTTL: 0 },
      mount,
      token: '',
    });
    const sealed = sealedError();
    expect(await trail.failed(sealed)).toBe(sealed);
    expect(t.logged).toEqual([]);
  });
});
