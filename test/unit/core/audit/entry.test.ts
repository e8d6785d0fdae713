// Audit entries in Vault's JSON shape, as each device's options format them.
import { describe, expect, it } from 'vitest';
import { formatEntry, type AuditInput } from '../../../../src/core/audit/entry';
import type { Hasher } from '../../../../src/core/audit/hash';

/** A readable stand-in for the salted HMAC, so expectations show which values were hashed. */
const hash: Hasher = async (v) => `H(${v})`;
const TIME = '2026-01-02T03:04:05.123456789Z';
const defaults = { hmacAccessor: true, logRaw: false, elideListResponses: false };

function input(overrides: Partial<AuditInput> = {}): AuditInput {
  return {
    type: 'request',
    auth: {
      clientToken: 'hvs.token',
      accessor: 'acc1',
      displayName: 'token-app',
      policies: ['app', 'default'],
      tokenPolicies: ['app', 'default'],
      identityPolicies: [],
      metadata: { team: 'blue' },
      entityId: '',
      tokenType: 'service',
      tokenTTL: 3600,
      tokenIssueTime: '2026-01-02T03:00:00Z',
    },
    request: {
      id: 'req-1',
      operation: 'update',
      mountPoint: 'secret/',
      mountType: 'kv',
      mountAccessor: 'kv_1234',
      clientToken: 'hvs.token',
      clientTokenAccessor: 'acc1',
      path: 'secret/app',
      data: { password: 'p4ss', port: 5432, username: 'bob' },
      remoteAddress: '203.0.113.9',
      wrapTTL: 0,
    },
    nonHMACRequestKeys: ['username'],
    nonHMACResponseKeys: [],
    ...overrides,
  };
}

const response = (o: Partial<NonNullable<AuditInput['response']>> = {}): NonNullable<AuditInput['response']> => ({
  mountPoint: 'secret/',
  mountType: 'kv',
  mountAccessor: 'kv_1234',
  data: null,
  auth: null,
  leaseId: '',
  wrapInfo: null,
  warnings: [],
  ...o,
});

describe('request entries', () => {
  it('have the shape of a Vault request entry, with tokens, accessors and data strings hashed', async () => {
    expect(await formatEntry(input(), defaults, hash, TIME)).toEqual({
      time: TIME,
      type: 'request',
      auth: {
        client_token: 'H(hvs.token)',
        accessor: 'H(acc1)',
        display_name: 'token-app',
        policies: ['app', 'default'],
        token_policies: ['app', 'default'],
        metadata: { team: 'blue' },
        token_type: 'service',
        token_ttl: 3600,
        token_issue_time: '2026-01-02T03:00:00Z',
      },
      request: {
        id: 'req-1',
        operation: 'update',
        mount_point: 'secret/',
        mount_type: 'kv',
        mount_accessor: 'kv_1234',
        client_token: 'H(hvs.token)',
        client_token_accessor: 'H(acc1)',
        namespace: { id: 'root' },
        path: 'secret/app',
        data: { password: 'H(p4ss)', port: 5432, username: 'bob' },
        remote_address: '203.0.113.9',
      },
    });
  });

  it('carry the error of a refused request, and an empty auth block without a token', async () => {
    const e = await formatEntry(input({ auth: null, error: '1 error occurred:\n\t* permission denied\n\n', request: { ...input().request, clientToken: '', clientTokenAccessor: '', data: null } }), defaults, hash, TIME);
    expect(e.auth).toEqual({});
    expect(e.error).toBe('1 error occurred:\n\t* permission denied\n\n');
    expect(e.request).not.toHaveProperty('client_token');
    expect(e.request).not.toHaveProperty('data');
  });

  it('show the requested wrap TTL', async () => {
    const e = await formatEntry(input({ request: { ...input().request, wrapTTL: 60 } }), defaults, hash, TIME);
    expect((e.request as Record<string, unknown>).wrap_ttl).toBe(60);
  });

  it('leave accessors readable with hmac_accessor=false, tokens still hashed', async () => {
    const e = await formatEntry(input(), { ...defaults, hmacAccessor: false }, hash, TIME);
    expect(e.auth).toMatchObject({ client_token: 'H(hvs.token)', accessor: 'acc1' });
    expect(e.request).toMatchObject({ client_token: 'H(hvs.token)', client_token_accessor: 'acc1', data: { password: 'H(p4ss)' } });
  });

  it('hash nothing with log_raw=true', async () => {
    const e = await formatEntry(input(), { ...defaults, logRaw: true }, hash, TIME);
    expect(e.auth).toMatchObject({ client_token: 'hvs.token', accessor: 'acc1' });
    expect(e.request).toMatchObject({ client_token: 'hvs.token', data: { password: 'p4ss', port: 5432 } });
  });
});

describe('response entries', () => {
  it('add the response: data hashed except the mount’s non-HMAC response keys', async () => {
    const e = await formatEntry(
      input({ type: 'response', nonHMACResponseKeys: ['port'], response: response({ data: { password: 'p4ss', port: '5432', ttl: 60 }, warnings: ['careful'] }) }),
      defaults,
      hash,
      TIME,
    );
    expect(e.type).toBe('response');
    expect(e.response).toEqual({
      mount_point: 'secret/',
      mount_type: 'kv',
      mount_accessor: 'kv_1234',
      data: { password: 'H(p4ss)', port: '5432', ttl: 60 },
      warnings: ['careful'],
    });
    // The request part is formatted as in the request entry (its own non-HMAC keys).
    expect(e.request).toMatchObject({ data: { password: 'H(p4ss)', username: 'bob' } });
  });

  it('hash the token and accessor of an auth block handed out, and show its lease id', async () => {
    const auth = { client_token: 'hvs.new', accessor: 'acc2', policies: ['x'], token_policies: ['x'], metadata: null, lease_duration: 600, renewable: true, entity_id: '', token_type: 'service', orphan: false, num_uses: 0 };
    const e = await formatEntry(input({ type: 'response', response: response({ auth, leaseId: 'secret/creds/abc' }) }), defaults, hash, TIME);
    expect(e.response).toMatchObject({
      auth: { client_token: 'H(hvs.new)', accessor: 'H(acc2)', policies: ['x'], token_policies: ['x'], token_type: 'service', token_ttl: 600 },
      secret: { lease_id: 'secret/creds/abc' },
    });
  });

  it('show a wrapped response as its wrap_info, with the wrapping token hashed', async () => {
    const wrapInfo = { token: 'hvs.wrap', accessor: 'wacc', ttl: 60, creation_time: TIME, creation_path: 'sys/wrapping/wrap', wrapped_accessor: 'inner' };
    const hashed = await formatEntry(input({ type: 'response', response: response({ wrapInfo }) }), defaults, hash, TIME);
    expect((hashed.response as Record<string, unknown>).wrap_info).toEqual({
      token: 'H(hvs.wrap)',
      accessor: 'H(wacc)',
      ttl: 60,
      creation_time: TIME,
      creation_path: 'sys/wrapping/wrap',
      wrapped_accessor: 'H(inner)',
    });
    const plainAccessors = await formatEntry(input({ type: 'response', response: response({ wrapInfo }) }), { ...defaults, hmacAccessor: false }, hash, TIME);
    expect((plainAccessors.response as Record<string, unknown>).wrap_info).toMatchObject({ token: 'H(hvs.wrap)', accessor: 'wacc', wrapped_accessor: 'inner' });
  });

  it('elide list answers to counts with elide_list_responses, before hashing', async () => {
    const list = input({
      type: 'response',
      request: { ...input().request, operation: 'list', data: null },
      response: response({ data: { keys: ['a', 'b', 'c/'], key_info: { a: { x: 'y' }, b: {} } } }),
    });
    expect(((await formatEntry(list, { ...defaults, elideListResponses: true }, hash, TIME)).response as Record<string, unknown>).data).toEqual({ keys: 3, key_info: 2 });
    expect(((await formatEntry(list, defaults, hash, TIME)).response as Record<string, unknown>).data).toEqual({
      keys: ['H(a)', 'H(b)', 'H(c/)'],
      key_info: { a: { x: 'H(y)' }, b: {} },
    });
    // Only list operations are elided.
    const read = input({ type: 'response', response: response({ data: { keys: ['a'] } }) });
    expect(((await formatEntry(read, { ...defaults, elideListResponses: true }, hash, TIME)).response as Record<string, unknown>).data).toEqual({ keys: ['H(a)'] });
  });
});
