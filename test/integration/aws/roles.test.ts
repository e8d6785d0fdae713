// AWS engine roles through the Worker (reference §3.2): LIST/GET/POST/DELETE, the exact read shape
// (lists never set read as null, as in Vault), coercions, updates keeping what they do not name,
// every validation error combined as Vault's quoted multierror (each refused write leaving
// nothing behind), the legacy `policy`/`arn` parameters, and legacy `policy/<name>` entries in
// storage, upgraded when read and stored in the new form by the next write.
import { env, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { BarrierStorage } from '../../../src/core/barrier/barrier';
import type { GroupedWrites } from '../../../src/core/barrier/grouped-writes';
import { fromUtf8, utf8 } from '../../../src/crypto/encoding';
import { PrefixedStorage, type Storage } from '../../../src/framework/storage';
import { compactJSON, goQuote } from '../../../src/engines/aws/go-format';
import { loadRole } from '../../../src/engines/aws/role';
import type { Env } from '../../../src/rpc/env';
import { systemStub } from '../../../src/rpc/stubs';
import { RemoteKeyring } from '../../../durable-objects/keyring-client';
import { api, caller, initCluster, tokenWithPolicy, type Cluster } from '../../helpers/api';
import { mountObject } from '../../helpers/kv2';

let c: Cluster;
const { call, ok } = caller(() => c.root);
/** LIST as clients send it through fetch (which has no LIST method). */
const list = (path = 'aws/roles') => call('GET', `${path}?list=true`);
const read = async (name: string) => {
  const r = await call('GET', `aws/roles/${name}`);
  expect(r.status, r.text).toBe(200);
  return r.body.data as Record<string, unknown>;
};

/** The read shape of a role holding nothing (every list and map never set: null). */
const NOTHING = {
  credential_type: '',
  policy_arns: null,
  role_arns: null,
  policy_document: '',
  iam_groups: null,
  iam_tags: null,
  session_tags: null,
  external_id: '',
  default_sts_ttl: 0,
  max_sts_ttl: 0,
  user_path: '',
  permissions_boundary_arn: '',
  mfa_serial_number: '',
  wait_for_usable: false,
};

const POLICY_ARN = 'arn:aws:iam::aws:policy/ReadOnlyAccess';
const OWN_POLICY_ARN = 'arn:aws:iam::123456789012:policy/app';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/Deploy';
const OTHER_ROLE_ARN = 'arn:aws:iam::123456789012:role/Audit';
const BOUNDARY_ARN = 'arn:aws:iam::123456789012:policy/boundary';
/** Vault's user_path message: the Go expression, quoted with %q (so each backslash doubled). */
const USER_PATH_MESSAGE = 'the specified value for user_path is invalid. It must match "^\\\\/([\\\\x21-\\\\x7F]{0,510}\\\\/)?$" regexp';

/** Go's %q of an ASCII message (the test's own, deliberately simple, rendering). */
const quoted = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
/** The 400 message of a write refused by role validation: Vault's multierror, quoted with %q. */
function invalid(...messages: string[]): string {
  const list =
    messages.length === 1 ? `1 error occurred:\n\t* ${messages[0]}\n\n` : `${messages.length} errors occurred:\n\t${messages.map((m) => `* ${m}`).join('\n\t')}\n\n`;
  return `error(s) validating supplied role data: ${quoted(list)}`;
}

/** Expects a 400 with exactly `message`, and that the role is then as it was (`before`: its view, or null: absent). */
async function refused(name: string, body: unknown, message: string, before: Record<string, unknown> | null = null): Promise<void> {
  const r = await call('POST', `aws/roles/${name}`, body);
  expect(r.status, r.text).toBe(400);
  expect(r.body).toEqual({ errors: [message] });
  if (before === null) expect((await call('GET', `aws/roles/${name}`)).status).toBe(404);
  else expect(await read(name)).toEqual(before);
}

/** Runs `fn` inside the mount's object, on the engine's storage (the same encrypted view requests use). */
async function inMount<T>(fn: (storage: Storage) => Promise<T>): Promise<T> {
  const stub = await mountObject(c.root, 'aws');
  return runInDurableObject(stub, async (instance) => {
    const grouped = (instance as unknown as { grouped: GroupedWrites }).grouped;
    const barrier = new BarrierStorage(grouped.immediate, new RemoteKeyring(() => systemStub(env as unknown as Env).keyring()));
    return await fn(new PrefixedStorage(barrier, 'logical/'));
  });
}

/** Writes a legacy entry as Vault's first AWS engine stored it: the bare text at policy/<name>. */
const putLegacy = (name: string, text: string) => inMount((s) => s.put(`policy/${name}`, utf8(text)));
/** The stored keys of a role, in each form. */
const storedForms = (name: string) =>
  inMount(async (s) => ({ current: (await s.get(`role/${name}`)) !== null, legacy: (await s.get(`policy/${name}`)) !== null }));
/** The hidden flag of a stored role (creds vs sts for upgraded legacy roles). */
const prohibitsFlexiblePath = (name: string) =>
  inMount(async (s) => (JSON.parse(fromUtf8((await s.get(`role/${name}`)) as Uint8Array)) as { role: { prohibitFlexibleCredPath: boolean } }).role.prohibitFlexibleCredPath);

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/aws', { type: 'aws' });
});

describe('Go formatting helpers', () => {
  it('quotes as strconv.Quote does', () => {
    expect(goQuote('plain')).toBe('"plain"');
    expect(goQuote('a "b" \\ c\n\t\r')).toBe('"a \\"b\\" \\\\ c\\n\\t\\r"');
    expect(goQuote('\x07\b\f\v\x00\x1f\x7f')).toBe('"\\a\\b\\f\\v\\x00\\x1f\\x7f"');
    expect(goQuote('été 😀 日本')).toBe('"été 😀 日本"');
    expect(goQuote('\u00a0\u2028\u200b')).toBe('"\\u00a0\\u2028\\u200b"');
    expect(goQuote('\u{e0001}')).toBe('"\\U000e0001"');
  });

  it('compacts JSON as json.Compact does: tokens kept as written, whitespace between them dropped', () => {
    expect(compactJSON(' {\n\t"b" : [ 1 , 2.50, -0e+1 ],\r\n "a": "x y\\u00e9\\n", "a": null, "t": true, "f": false } ')).toBe(
      '{"b":[1,2.50,-0e+1],"a":"x y\\u00e9\\n","a":null,"t":true,"f":false}',
    );
    expect(compactJSON('"s"')).toBe('"s"');
    expect(compactJSON(' 12 ')).toBe('12');
    expect(compactJSON('[]')).toBe('[]');
    expect(compactJSON('{ }')).toBe('{}');
    expect(compactJSON('[[[{"a":[{}]}]]]')).toBe('[[[{"a":[{}]}]]]');
    expect(compactJSON('['.repeat(20000) + ']'.repeat(20000))).toBe('['.repeat(20000) + ']'.repeat(20000));
    for (const bad of ['', ' ', '{', '{"a"}', '{"a":}', '{"a":1,}', '[1,]', '[1 2]', '{a:1}', "{'a':1}", '01', '1.', '.5', '+1', '-', 'nul', 'truex', '{} x', '"\\x"', '"a\nb"', '"open', '}', '[}', '{]', '{"a":1]', '[1}', '{,}', '[,]', ':', '1,2']) {
      expect(compactJSON(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});

describe('creating, reading, listing and deleting', () => {
  it('answers 404 to LIST, GET and DELETE while there is nothing', async () => {
    for (const r of [await list(), await list('aws/roles/'), await call('GET', 'aws/roles/none'), await call('DELETE', 'aws/roles/none')]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: [] });
    }
  });

  it('creates an iam_user role (204, no body) and reads it back with every other list null', async () => {
    const r = await call('POST', 'aws/roles/reader', { credential_type: 'iam_user', policy_arns: `${POLICY_ARN}, ${OWN_POLICY_ARN}` });
    expect(r.status, r.text).toBe(204);
    expect(r.text).toBe('');
    const got = await call('GET', 'aws/roles/reader');
    expect(got.body.data).toEqual({ ...NOTHING, credential_type: 'iam_user', policy_arns: [POLICY_ARN, OWN_POLICY_ARN] });
    expect(got.body.lease_duration).toBe(0);
    expect(got.body.renewable).toBe(false);
  });

  it('stores every iam_user field: compacted policy document, groups, tags (list form), path, boundary', async () => {
    const document = '{\n  "Version": "2012-10-17",\n  "Statement": [ { "Effect": "Allow", "Action": "s3:*", "Resource": "*", "Condition": {"NumericLessThan": {"n": 1.50}} } ]\n}';
    await ok('PUT', 'aws/roles/full-user', {
      credential_type: 'iam_user',
      policy_arns: [POLICY_ARN],
      policy_document: document,
      iam_groups: ['devs', 'ops'],
      iam_tags: ['team=platform', 'env=a=b'],
      user_path: '/apps/coffer/',
      permissions_boundary_arn: BOUNDARY_ARN,
      mfa_serial_number: 'arn:aws:iam::123456789012:mfa/root',
      wait_for_usable: 'true',
    });
    expect(await read('full-user')).toEqual({
      ...NOTHING,
      credential_type: 'iam_user',
      policy_arns: [POLICY_ARN],
      policy_document: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"NumericLessThan":{"n":1.50}}}]}',
      iam_groups: ['devs', 'ops'],
      iam_tags: { team: 'platform', env: 'a=b' },
      user_path: '/apps/coffer/',
      permissions_boundary_arn: BOUNDARY_ARN,
      mfa_serial_number: 'arn:aws:iam::123456789012:mfa/root',
      wait_for_usable: true,
    });
  });

  it('stores every assumed_role field: role ARNs, session tags (map form), external ID, STS TTLs', async () => {
    await ok('POST', 'aws/roles/deployer', {
      credential_type: 'assumed_role',
      role_arns: `${ROLE_ARN},${OTHER_ROLE_ARN}`,
      policy_arns: POLICY_ARN,
      session_tags: { team: 'platform', user: '{{identity.entity.name}}' },
      external_id: 'ext-123',
      default_sts_ttl: '15m',
      max_sts_ttl: 7200,
      iam_groups: 'readers',
    });
    expect(await read('deployer')).toEqual({
      ...NOTHING,
      credential_type: 'assumed_role',
      role_arns: [ROLE_ARN, OTHER_ROLE_ARN],
      policy_arns: [POLICY_ARN],
      session_tags: { team: 'platform', user: '{{identity.entity.name}}' },
      external_id: 'ext-123',
      default_sts_ttl: 900,
      max_sts_ttl: 7200,
      iam_groups: ['readers'],
    });
  });

  it('stores federation_token and session_token roles', async () => {
    await ok('POST', 'aws/roles/federated', { credential_type: 'federation_token', policy_document: '{"Statement": []}', default_sts_ttl: '1h', max_sts_ttl: '36h' });
    expect(await read('federated')).toEqual({
      ...NOTHING,
      credential_type: 'federation_token',
      policy_document: '{"Statement":[]}',
      default_sts_ttl: 3600,
      max_sts_ttl: 129600,
    });
    await ok('POST', 'aws/roles/session', { credential_type: 'session_token', mfa_serial_number: 'GAHT12345678', max_sts_ttl: '2h', iam_groups: '' });
    expect(await read('session')).toEqual({ ...NOTHING, credential_type: 'session_token', mfa_serial_number: 'GAHT12345678', max_sts_ttl: 7200, iam_groups: [] });
  });

  it('accepts names with dots, dashes and @, and no others', async () => {
    await ok('POST', 'aws/roles/team.a-b@example.com', { credential_type: 'iam_user', policy_arns: POLICY_ARN });
    expect((await read('team.a-b@example.com')).credential_type).toBe('iam_user');
    for (const bad of ['-lead', 'trail.', 'sp%20ace']) {
      const r = await call('POST', `aws/roles/${bad}`, { credential_type: 'iam_user' });
      expect(r.status, bad).toBe(404);
      expect(r.body.errors).toEqual(['1 error occurred:\n\t* unsupported path\n\n']);
    }
    await ok('DELETE', 'aws/roles/team.a-b@example.com');
  });

  it('lists the roles under roles and roles/, sorted', async () => {
    const expected = ['deployer', 'federated', 'full-user', 'reader', 'session'];
    for (const path of ['aws/roles', 'aws/roles/']) {
      const r = await list(path);
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ keys: expected });
    }
  });

  it('deletes a role (204), after which it reads, lists and deletes as absent', async () => {
    await ok('POST', 'aws/roles/doomed', { credential_type: 'iam_user', policy_arns: POLICY_ARN });
    const r = await call('DELETE', 'aws/roles/doomed');
    expect(r.status).toBe(204);
    expect((await call('GET', 'aws/roles/doomed')).status).toBe(404);
    expect((await list()).body.data.keys).not.toContain('doomed');
    const again = await call('DELETE', 'aws/roles/doomed');
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ errors: [] });
  });

  it('needs update (not create) to write a new role: the path has no existence check, as in Vault', async () => {
    const createOnly = await tokenWithPolicy(c.root, 'aws-create', 'path "aws/roles/*" { capabilities = ["create", "read"] }');
    const updateOnly = await tokenWithPolicy(c.root, 'aws-update', 'path "aws/roles/*" { capabilities = ["update"] }');
    const body = { credential_type: 'iam_user', policy_arns: POLICY_ARN };
    expect((await api('POST', 'aws/roles/by-token', { token: createOnly, body })).status).toBe(403);
    expect((await api('POST', 'aws/roles/by-token', { token: updateOnly, body })).status).toBe(204);
    expect((await api('POST', 'aws/roles/by-token', { token: updateOnly, body })).status).toBe(204);
    await ok('DELETE', 'aws/roles/by-token');
  });
});

describe('updates and coercions', () => {
  beforeAll(async () => {
    await ok('POST', 'aws/roles/evolving', {
      credential_type: 'assumed_role',
      role_arns: [ROLE_ARN],
      policy_document: '{"a": 1}',
      session_tags: ['k=v'],
      default_sts_ttl: 600,
    });
  });

  it('keeps every field a write does not name', async () => {
    await ok('POST', 'aws/roles/evolving', { iam_groups: 'g1, g2', external_id: 'x' });
    expect(await read('evolving')).toEqual({
      ...NOTHING,
      credential_type: 'assumed_role',
      role_arns: [ROLE_ARN],
      policy_document: '{"a":1}',
      session_tags: { k: 'v' },
      default_sts_ttl: 600,
      iam_groups: ['g1', 'g2'],
      external_id: 'x',
    });
  });

  it('takes JSON null as each field\'s zero value: lists and maps then read as null, the rest as "" or 0', async () => {
    await ok('POST', 'aws/roles/evolving', { iam_groups: null, session_tags: null, policy_document: null, external_id: null, default_sts_ttl: null, user_path: null });
    expect(await read('evolving')).toEqual({ ...NOTHING, credential_type: 'assumed_role', role_arns: [ROLE_ARN] });
  });

  it('reads empty lists and maps given as empty as [] and {}', async () => {
    await ok('POST', 'aws/roles/evolving', { iam_groups: [], session_tags: {}, policy_arns: '' });
    expect(await read('evolving')).toEqual({ ...NOTHING, credential_type: 'assumed_role', role_arns: [ROLE_ARN], iam_groups: [], session_tags: {}, policy_arns: [] });
  });

  it('coerces strings: comma lists trimmed, "k=v" lists, duration strings and string booleans', async () => {
    await ok('POST', 'aws/roles/coerced', {
      credential_type: 'iam_user',
      policy_arns: ` ${POLICY_ARN} ,${OWN_POLICY_ARN} `,
      iam_tags: ['a=1', 'b='],
      iam_groups: 'one',
      wait_for_usable: '1',
    });
    expect(await read('coerced')).toMatchObject({ policy_arns: [POLICY_ARN, OWN_POLICY_ARN], iam_tags: { a: '1', b: '' }, iam_groups: ['one'], wait_for_usable: true });
    await ok('POST', 'aws/roles/coerced', { wait_for_usable: 'false', iam_tags: { n: 5 } });
    expect(await read('coerced')).toMatchObject({ wait_for_usable: false, iam_tags: { n: '5' } });
  });

  it('refuses values of the wrong type with a 400, storing nothing', async () => {
    const before = await read('coerced');
    for (const body of [{ default_sts_ttl: 'soon' }, { wait_for_usable: 'maybe' }, { iam_tags: ['novalue'] }, { session_tags: ['=v'] }, { max_sts_ttl: -5 }]) {
      const r = await call('POST', 'aws/roles/coerced', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect(await read('coerced')).toEqual(before);
  });

  it('switches a role to another credential type when the fields that no longer fit are cleared with it', async () => {
    await refused(
      'evolving',
      { credential_type: 'iam_user' },
      invalid("cannot supply role_arns when credential_type isn't assumed_role"),
      await read('evolving'),
    );
    await ok('POST', 'aws/roles/evolving', { credential_type: 'iam_user', role_arns: '', session_tags: {}, policy_arns: POLICY_ARN });
    expect(await read('evolving')).toEqual({ ...NOTHING, credential_type: 'iam_user', role_arns: [], iam_groups: [], session_tags: {}, policy_arns: [POLICY_ARN] });
  });
});

describe('validation', () => {
  it('renders a single error exactly as Vault does', async () => {
    const r = await call('POST', 'aws/roles/v', {});
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['error(s) validating supplied role data: "1 error occurred:\\n\\t* did not supply credential_type\\n\\n"']);
  });

  it('refuses each problem on its own, storing nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ policy_arns: POLICY_ARN }, 'did not supply credential_type'],
      [{ credential_type: 'iam' }, 'unrecognized credential type: iam'],
      [{ credential_type: '' }, 'unrecognized credential type: '],
      [{ credential_type: 'iam_user,federation_token' }, 'unrecognized credential type: iam_user,federation_token'],
      [{ credential_type: 'assumed_role', default_sts_ttl: '2h', max_sts_ttl: '1h' }, '"default_sts_ttl" value must be less than or equal to "max_sts_ttl" value'],
      [{ credential_type: 'assumed_role', user_path: '/x/' }, 'user_path parameter only valid for iam_user credential type'],
      [{ credential_type: 'federation_token', permissions_boundary_arn: BOUNDARY_ARN }, "cannot supply permissions_boundary_arn when credential_type isn't iam_user"],
      [{ credential_type: 'iam_user', permissions_boundary_arn: 'boundary' }, 'invalid permissions_boundary_arn parameter: arn: invalid prefix'],
      [{ credential_type: 'iam_user', permissions_boundary_arn: 'arn:aws:iam::123456789012' }, 'invalid permissions_boundary_arn parameter: arn: not enough sections'],
      [{ credential_type: 'iam_user', permissions_boundary_arn: 'arn:aws:s3:::bucket' }, 'invalid permissions_boundary_arn parameter: expected a service of iam but got s3'],
      [{ credential_type: 'iam_user', permissions_boundary_arn: ROLE_ARN }, 'invalid permissions_boundary_arn parameter: expected a resource type of policy but got role/Deploy'],
      [{ credential_type: 'session_token', policy_arns: POLICY_ARN }, 'cannot supply a policy or role when using credential_type session_token'],
      [{ credential_type: 'session_token', policy_document: '{}' }, 'cannot supply a policy or role when using credential_type session_token'],
      [{ credential_type: 'iam_user', role_arns: ROLE_ARN }, "cannot supply role_arns when credential_type isn't assumed_role"],
      [{ credential_type: 'federation_token', session_tags: ['a=b'] }, "cannot supply session_tags when credential_type isn't assumed_role"],
      [{ credential_type: 'session_token', external_id: 'x' }, "cannot supply external_id when credential_type isn't assumed_role"],
      [{ credential_type: 'assumed_role', wait_for_usable: true }, 'wait_for_usable parameter only valid for iam_user credential type'],
    ];
    for (const [body, message] of cases) await refused('v', body, invalid(message));
  });

  it('allows what Vault allows: STS TTLs equal, a TTL alone, empty lists for other types, wait_for_usable false anywhere', async () => {
    for (const body of [
      { credential_type: 'assumed_role', default_sts_ttl: 3600, max_sts_ttl: 3600 },
      { credential_type: 'federation_token', default_sts_ttl: 7200 },
      { credential_type: 'iam_user', role_arns: [], session_tags: {}, external_id: '' },
      { credential_type: 'session_token', wait_for_usable: false, policy_arns: '' },
      { credential_type: 'assumed_role', mfa_serial_number: 'anything' },
    ]) {
      expect((await call('POST', 'aws/roles/allowed', body)).status, JSON.stringify(body)).toBe(204);
      await ok('DELETE', 'aws/roles/allowed');
    }
  });

  it('checks user_path against Vault\'s expression, quoting it in the message', async () => {
    for (const good of ['/', '/a/', '/a/b/', `/${'x'.repeat(510)}/`, '/~!"#/']) {
      expect((await call('POST', 'aws/roles/path', { credential_type: 'iam_user', user_path: good })).status, good).toBe(204);
    }
    const message =
      'error(s) validating supplied role data: "1 error occurred:\\n\\t* the specified value for user_path is invalid. It must match \\"^\\\\\\\\/([\\\\\\\\x21-\\\\\\\\x7F]{0,510}\\\\\\\\/)?$\\" regexp\\n\\n"';
    const before = await read('path');
    for (const bad of ['a', '/a', 'a/', '/a b/', `/${'x'.repeat(511)}/`, '//a\n/', '/é/']) {
      await refused('path', { user_path: bad }, message, before);
    }
    expect(message).toBe(invalid(USER_PATH_MESSAGE));
    await ok('DELETE', 'aws/roles/path');
  });

  it('reports every problem at once, in Vault\'s order', async () => {
    await refused(
      'v',
      { credential_type: 'iam_user', role_arns: ROLE_ARN, session_tags: { a: 'b' }, external_id: 'e', default_sts_ttl: 60, max_sts_ttl: 30 },
      invalid(
        'default_sts_ttl parameter only valid for assumed_role, federation_token, and session_token credential types',
        'max_sts_ttl parameter only valid for assumed_role, federation_token, and session_token credential types',
        '"default_sts_ttl" value must be less than or equal to "max_sts_ttl" value',
        "cannot supply role_arns when credential_type isn't assumed_role",
        "cannot supply session_tags when credential_type isn't assumed_role",
        "cannot supply external_id when credential_type isn't assumed_role",
      ),
    );
    await refused(
      'v',
      { credential_type: 'session_token', user_path: 'bad', wait_for_usable: true, policy_document: '[]' },
      invalid(
        'user_path parameter only valid for iam_user credential type',
        USER_PATH_MESSAGE,
        'cannot supply a policy or role when using credential_type session_token',
        'wait_for_usable parameter only valid for iam_user credential type',
      ),
    );
  });

  it('drops the errors found before an invalid permissions boundary, as Vault does, and keeps those after', async () => {
    await refused(
      'v',
      { credential_type: 'federation_token', user_path: '/x/', default_sts_ttl: 5, max_sts_ttl: 1, permissions_boundary_arn: 'nope', role_arns: ROLE_ARN },
      invalid('invalid permissions_boundary_arn parameter: arn: invalid prefix', "cannot supply role_arns when credential_type isn't assumed_role"),
    );
  });

  it('refuses a policy document that is not JSON, quoting it', async () => {
    for (const [text, shown] of [
      ['{not json', '"{not json"'],
      ['{"a": 1} trailing', '"{\\"a\\": 1} trailing"'],
      ['{"a":\n\t', '"{\\"a\\":\\n\\t"'],
      ['  ', '"  "'],
    ]) {
      await refused('v', { credential_type: 'iam_user', policy_document: text }, `cannot parse policy document: ${shown}`);
    }
  });

  it('leaves an existing role untouched when an update is refused', async () => {
    await ok('POST', 'aws/roles/kept', { credential_type: 'iam_user', policy_arns: POLICY_ARN, iam_groups: 'g' });
    const before = await read('kept');
    await refused('kept', { credential_type: 'session_token', iam_groups: 'other' }, invalid('cannot supply a policy or role when using credential_type session_token'), before);
    await refused('kept', { policy_document: 'nope', iam_groups: 'other' }, 'cannot parse policy document: "nope"', before);
    await refused('kept', { role_arns: ROLE_ARN, iam_groups: 'other' }, invalid("cannot supply role_arns when credential_type isn't assumed_role"), before);
    expect(await storedForms('kept')).toEqual({ current: true, legacy: false });
  });
});

describe('legacy write parameters', () => {
  const LEGACY_WARNING = 'Detected use of legacy role or policy parameter. Please upgrade to use the new parameters.';

  it('upgrades an inline policy to an iam_user,federation_token role with the compacted document', async () => {
    const r = await call('POST', 'aws/roles/old-inline', { policy: '{ "Version": "2012-10-17", "Statement": [] }' });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toBeNull();
    expect(r.body.warnings).toEqual([LEGACY_WARNING]);
    expect(await read('old-inline')).toEqual({ ...NOTHING, credential_type: 'iam_user,federation_token', policy_document: '{"Version":"2012-10-17","Statement":[]}' });
    expect(await prohibitsFlexiblePath('old-inline')).toBe(true);
  });

  it('upgrades a role ARN to assumed_role and a policy ARN to iam_user', async () => {
    expect((await call('POST', 'aws/roles/old-role', { arn: ROLE_ARN })).body.warnings).toEqual([LEGACY_WARNING]);
    expect(await read('old-role')).toEqual({ ...NOTHING, credential_type: 'assumed_role', role_arns: [ROLE_ARN] });
    expect((await call('POST', 'aws/roles/old-policy', { arn: POLICY_ARN })).body.warnings).toEqual([LEGACY_WARNING]);
    expect(await read('old-policy')).toEqual({ ...NOTHING, credential_type: 'iam_user', policy_arns: [POLICY_ARN] });
    expect(await prohibitsFlexiblePath('old-policy')).toBe(true);
  });

  it('replaces the whole stored role, dropping the newer fields it had and those sent alongside', async () => {
    await ok('POST', 'aws/roles/replaced', { credential_type: 'iam_user', policy_arns: POLICY_ARN, iam_groups: 'g', iam_tags: 'a=b', wait_for_usable: true });
    await ok('POST', 'aws/roles/replaced', { arn: ROLE_ARN, iam_groups: 'other', external_id: 'e', mfa_serial_number: 'm', session_tags: 'k=v' });
    expect(await read('replaced')).toEqual({ ...NOTHING, credential_type: 'assumed_role', role_arns: [ROLE_ARN] });
  });

  it('clears the legacy flag on the next write in the new form', async () => {
    await ok('POST', 'aws/roles/old-role', { iam_groups: 'g' });
    expect(await read('old-role')).toEqual({ ...NOTHING, credential_type: 'assumed_role', role_arns: [ROLE_ARN], iam_groups: ['g'] });
    expect(await prohibitsFlexiblePath('old-role')).toBe(false);
  });

  it('refuses a legacy parameter mixed with each newer one', async () => {
    const newer: [string, unknown, string][] = [
      ['credential_type', 'iam_user', 'an explicit credential_type'],
      ['role_arns', ROLE_ARN, 'role_arns'],
      ['policy_arns', POLICY_ARN, 'policy_arns'],
      ['policy_document', '{}', 'policy_document'],
      ['default_sts_ttl', 60, 'default_sts_ttl'],
      ['max_sts_ttl', 60, 'max_sts_ttl'],
      ['user_path', '/', 'user_path'],
      ['permissions_boundary_arn', BOUNDARY_ARN, 'permissions_boundary_arn'],
      ['wait_for_usable', false, 'wait_for_usable'],
    ];
    for (const [field, value, named] of newer) {
      for (const legacy of [{ policy: '{}' }, { arn: ROLE_ARN }]) {
        await refused('mixed', { ...legacy, [field]: value }, `cannot supply deprecated role or policy parameters with ${named}`);
      }
    }
    // Vault checks the first newer parameter in its own order.
    await refused('mixed', { arn: ROLE_ARN, max_sts_ttl: 5, role_arns: ROLE_ARN }, 'cannot supply deprecated role or policy parameters with role_arns');
    // Empty legacy parameters count as absent.
    await ok('POST', 'aws/roles/mixed', { policy: '', arn: null, credential_type: 'iam_user', policy_arns: POLICY_ARN });
    expect((await read('mixed')).credential_type).toBe('iam_user');
  });

  it('answers 500 to both legacy parameters at once, as Vault does', async () => {
    const r = await call('POST', 'aws/roles/both', { policy: '{}', arn: ROLE_ARN });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ errors: ['1 error occurred:\n\t* only one of policy or arn should be provided\n\n'] });
    expect((await call('GET', 'aws/roles/both')).status).toBe(404);
  });

  it('refuses legacy data it cannot upgrade, quoting it', async () => {
    for (const body of [{ arn: 'arn:aws:iam::123456789012:user/bob' }, { arn: 'arn:aws:iam' }, { policy: 'not json' }, { policy: '{"a":' }]) {
      const text = Object.values(body)[0];
      await refused('unparsable', body, `unable to parse supplied data: ${quoted(text)}`);
    }
  });
});

describe('legacy entries in storage', () => {
  const POLICY = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}';

  beforeAll(async () => {
    await putLegacy('stored-inline', POLICY);
    await putLegacy('stored-role', ROLE_ARN);
    await putLegacy('stored-policy', OWN_POLICY_ARN);
    await putLegacy('stored-user-arn', 'arn:aws:iam::123456789012:user/bob');
    await putLegacy('stored-garbage', 'garbage {');
  });

  it('reads them upgraded, without writing anything', async () => {
    expect(await read('stored-inline')).toEqual({ ...NOTHING, credential_type: 'iam_user,federation_token', policy_document: POLICY });
    expect(await read('stored-role')).toEqual({ ...NOTHING, credential_type: 'assumed_role', role_arns: [ROLE_ARN] });
    expect(await read('stored-policy')).toEqual({ ...NOTHING, credential_type: 'iam_user', policy_arns: [OWN_POLICY_ARN] });
    for (const name of ['stored-inline', 'stored-role', 'stored-policy']) expect(await storedForms(name)).toEqual({ current: false, legacy: true });
  });

  it('shows what it cannot upgrade as invalid_data', async () => {
    expect(await read('stored-user-arn')).toEqual({ ...NOTHING, invalid_data: 'arn:aws:iam::123456789012:user/bob' });
    expect(await read('stored-garbage')).toEqual({ ...NOTHING, invalid_data: 'garbage {' });
  });

  it('gives the creds and sts paths the upgraded role, restricted to the path its old form served', async () => {
    const loaded = await inMount((s) => loadRole(s, 'stored-inline'));
    expect(loaded).toEqual({
      role: {
        credentialTypes: ['iam_user', 'federation_token'],
        policyArns: [],
        roleArns: [],
        policyDocument: POLICY,
        iamGroups: [],
        iamTags: {},
        sessionTags: {},
        externalId: '',
        defaultStsTtl: 0,
        maxStsTtl: 0,
        userPath: '',
        permissionsBoundaryArn: '',
        mfaSerialNumber: '',
        prohibitFlexibleCredPath: true,
        waitForUsable: false,
      },
      nullFields: ['policyArns', 'roleArns', 'iamGroups', 'iamTags', 'sessionTags'],
    });
    const garbage = await inMount((s) => loadRole(s, 'stored-garbage'));
    expect(garbage?.invalidData).toBe('garbage {');
    expect(garbage?.role.credentialTypes).toEqual([]);
    expect(await inMount((s) => loadRole(s, 'absent'))).toBeNull();
  });

  it('lists them after the roles in the current form', async () => {
    const keys = (await list()).body.data.keys as string[];
    const legacy = ['stored-garbage', 'stored-inline', 'stored-policy', 'stored-role', 'stored-user-arn'];
    expect(keys.slice(-legacy.length)).toEqual(legacy);
    expect(keys.slice(0, -legacy.length)).toEqual([...keys.slice(0, -legacy.length)].sort());
    expect(keys.slice(0, -legacy.length)).toContain('reader');
  });

  it('stores one in the new form on its next write, keeping the upgraded fields and the legacy flag cleared', async () => {
    await ok('POST', 'aws/roles/stored-role', { external_id: 'ext' });
    expect(await read('stored-role')).toEqual({ ...NOTHING, credential_type: 'assumed_role', role_arns: [ROLE_ARN], external_id: 'ext' });
    expect(await storedForms('stored-role')).toEqual({ current: true, legacy: false });
    expect(await prohibitsFlexiblePath('stored-role')).toBe(false);
    expect((await list()).body.data.keys.filter((k: string) => k === 'stored-role')).toHaveLength(1);
  });

  it('leaves a legacy entry as it was when a write to it is refused', async () => {
    await refused(
      'stored-policy',
      { credential_type: 'session_token' },
      invalid('cannot supply a policy or role when using credential_type session_token'),
      { ...NOTHING, credential_type: 'iam_user', policy_arns: [OWN_POLICY_ARN] },
    );
    expect(await storedForms('stored-policy')).toEqual({ current: false, legacy: true });
  });

  it('clears invalid data on the next write, with Vault\'s warning', async () => {
    await refused('stored-garbage', { policy_arns: POLICY_ARN }, invalid('did not supply credential_type'), { ...NOTHING, invalid_data: 'garbage {' });
    const r = await call('POST', 'aws/roles/stored-garbage', { credential_type: 'iam_user', policy_arns: POLICY_ARN });
    expect(r.status, r.text).toBe(200);
    expect(r.body.warnings).toEqual(['Invalid data of "garbage {" cleared out of role']);
    expect(await read('stored-garbage')).toEqual({ ...NOTHING, credential_type: 'iam_user', policy_arns: [POLICY_ARN] });
    expect(await storedForms('stored-garbage')).toEqual({ current: true, legacy: false });
  });

  it('replaces invalid data through the legacy parameters too, with both warnings', async () => {
    const r = await call('POST', 'aws/roles/stored-user-arn', { arn: OWN_POLICY_ARN });
    expect(r.status, r.text).toBe(200);
    expect(r.body.warnings).toEqual([
      'Invalid data of "arn:aws:iam::123456789012:user/bob" cleared out of role',
      'Detected use of legacy role or policy parameter. Please upgrade to use the new parameters.',
    ]);
    expect(await read('stored-user-arn')).toEqual({ ...NOTHING, credential_type: 'iam_user', policy_arns: [OWN_POLICY_ARN] });
    expect(await prohibitsFlexiblePath('stored-user-arn')).toBe(true);
  });

  it('deletes a legacy entry (204), and a role held in both forms entirely', async () => {
    expect((await call('DELETE', 'aws/roles/stored-inline')).status).toBe(204);
    expect((await call('GET', 'aws/roles/stored-inline')).status).toBe(404);
    expect(await storedForms('stored-inline')).toEqual({ current: false, legacy: false });
    await ok('POST', 'aws/roles/both-forms', { credential_type: 'iam_user', policy_arns: POLICY_ARN });
    await putLegacy('both-forms', ROLE_ARN);
    // The current form wins over a legacy entry of the same name.
    expect((await read('both-forms')).credential_type).toBe('iam_user');
    expect((await call('DELETE', 'aws/roles/both-forms')).status).toBe(204);
    expect(await storedForms('both-forms')).toEqual({ current: false, legacy: false });
    expect((await call('DELETE', 'aws/roles/both-forms')).status).toBe(404);
  });
});
