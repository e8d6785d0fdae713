// sys/managed-keys end to end: every type and Vault alias, field validation (a refused write leaves
// nothing behind), the read view with secrets redacted, LIST per type, names unique across types,
// updates, deletion refused while a mount lists the key, allowed_managed_keys on mounts, ACLs, and
// test/sign's input checks.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { api, initCluster, PERMISSION_DENIED, tokenWithPolicy, type Cluster } from '../../helpers/api';

let c: Cluster;
const root = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });
const list = (type: string, token = c.root) => api('GET', `sys/managed-keys/${type}?list=true`, { token });

const SERVICE_ACCOUNT = JSON.stringify({
  type: 'service_account',
  project_id: 'coffer-test',
  client_email: 'coffer@coffer-test.iam.gserviceaccount.com',
  private_key: '-----BEGIN PRIVATE KEY-----\nMIIB...\n-----END PRIVATE KEY-----\n',
});

/** A valid body per type (spec name). */
const BODIES: Record<string, Record<string, unknown>> = {
  pkcs11: { library: 'softhsm', slot: '0', pin: '<PIN>', key_label: 'hsm-key', mechanism: '0x0001' },
  cloudakms: { access_key: 'AKIAEXAMPLE', secret_key: '<SECRET_KEY>', key_type: 'RSA', key_bits: '2048', kms_key: 'alias/coffer' },
  cloudbkeyvault: { tenant_id: 'tenant', client_id: 'client', client_secret: '<CLIENT_SECRET>', vault_name: 'coffer-vault', key_name: 'coffer-key', key_type: 'RSA-HSM' },
  cloudckms: { credentials: SERVICE_ACCOUNT, project: 'coffer-test', key_ring: 'ring', region: 'us-east1', crypto_key: 'key', algorithm: 'EC_SIGN_P256_SHA256' },
};
const CANONICAL: Record<string, string> = {
  pkcs11: 'pkcs11',
  cloudakms: 'cloudakms',
  awskms: 'cloudakms',
  cloudbkeyvault: 'cloudbkeyvault',
  azurekeyvault: 'cloudbkeyvault',
  cloudckms: 'cloudckms',
  gcpckms: 'cloudckms',
};
const SECRETS = ['<PIN>', '<SECRET_KEY>', 'AKIAEXAMPLE', '<CLIENT_SECRET>', 'BEGIN PRIVATE KEY'];

const create = async (type: string, name: string, extra: Record<string, unknown> = {}) => {
  const r = await root('POST', `sys/managed-keys/${type}/${name}`, { ...BODIES[CANONICAL[type]], ...extra });
  if (r.status !== 204) throw new Error(`create ${type}/${name}: ${r.status} ${r.text}`);
};

beforeAll(async () => {
  c = await initCluster();
});

describe('LIST', () => {
  it.each(Object.keys(CANONICAL))('answers 404 for %s while it has no keys', async (type) => {
    const r = await list(type);
    expect(r.status).toBe(404);
    expect(r.body.errors).toEqual([]);
  });

  it('refuses an unknown type', async () => {
    const r = await list('hsm');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^unsupported managed key type "hsm": supported types are pkcs11, cloudakms \(awskms\), cloudbkeyvault \(azurekeyvault\), cloudckms \(gcpckms\)/);
  });
});

describe('every type and alias', () => {
  it.each(Object.entries(CANONICAL))('%s: creates, reads (secrets redacted), lists and deletes', async (type, canonical) => {
    const name = `every-${type}`;
    await create(type, name);
    const read = await root('GET', `sys/managed-keys/${type}/${name}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ name, type, allow_generate_key: false, allow_replace_key: false, allow_store_key: false, any_mount: false, usages: ['sign', 'verify'] });
    expect(read.body.data.UUID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(read.body.data.uuid).toBeUndefined();
    for (const secret of SECRETS) expect(read.text).not.toContain(secret);
    // The other name of the type reaches the same key; the type shows as the path names it.
    const other = Object.keys(CANONICAL).find((t) => t !== type && CANONICAL[t] === canonical) ?? type;
    const again = await root('GET', `sys/managed-keys/${other}/${name}`);
    expect(again.body.data.UUID).toBe(read.body.data.UUID);
    expect(again.body.data.type).toBe(other);
    expect((await list(type)).body.data.keys).toContain(name);
    expect((await list(other)).body.data.keys).toContain(name);
    expect((await root('DELETE', `sys/managed-keys/${other}/${name}`)).status).toBe(204);
    expect((await root('GET', `sys/managed-keys/${type}/${name}`)).status).toBe(404);
  });

  it('shows a pkcs11 key as Vault does: UUID, booleans, mechanism and slot as numbers, pin redacted, sorted keys', async () => {
    await create('pkcs11', 'hsm-key1', { mechanism: '0x1041', curve: 'P256', allow_generate_key: 'true', force_rw_session: 'true', max_parallel: '4' });
    const r = await root('GET', 'sys/managed-keys/pkcs11/hsm-key1');
    expect(r.body.data).toEqual({
      UUID: expect.any(String),
      allow_generate_key: true,
      allow_replace_key: false,
      allow_store_key: false,
      any_mount: false,
      curve: 'P256',
      force_rw_session: true,
      key_bits: 0,
      key_id: '',
      key_label: 'hsm-key',
      library: 'softhsm',
      max_parallel: 4,
      mechanism: 4161,
      name: 'hsm-key1',
      pin: 'redacted',
      slot: 0,
      token_label: '',
      type: 'pkcs11',
      usages: ['sign', 'verify'],
    });
    expect(Object.keys(r.body.data)).toEqual([...Object.keys(r.body.data)].sort());
  });

  it('keeps a 64-bit slot exact, and shows no slot for a token label', async () => {
    await create('pkcs11', 'big-slot', { slot: '2305843009213693953' });
    expect((await root('GET', 'sys/managed-keys/pkcs11/big-slot')).text).toContain('"slot":2305843009213693953');
    await create('pkcs11', 'by-label', { slot: undefined, token_label: 'coffer' });
    const r = await root('GET', 'sys/managed-keys/pkcs11/by-label');
    expect(r.body.data).toMatchObject({ slot: null, token_label: 'coffer' });
  });

  it('shows every secret of the cloud types as "redacted", and the rest as given or defaulted', async () => {
    await create('awskms', 'aws-shape', { key_type: 'ecdsa', key_bits: undefined, curve: 'P384' });
    expect((await root('GET', 'sys/managed-keys/awskms/aws-shape')).body.data).toMatchObject({
      access_key: 'redacted',
      secret_key: 'redacted',
      key_type: 'ECDSA',
      curve: 'P384',
      key_bits: '',
      kms_key: 'alias/coffer',
      region: 'us-east-1',
      endpoint: '',
    });
    await create('azurekeyvault', 'azure-shape', { key_bits: 3072 });
    expect((await root('GET', 'sys/managed-keys/azurekeyvault/azure-shape')).body.data).toMatchObject({
      client_secret: 'redacted',
      client_id: 'client',
      tenant_id: 'tenant',
      environment: 'AZUREPUBLICCLOUD',
      resource: 'vault.azure.net',
      key_bits: '3072',
      key_type: 'RSA-HSM',
    });
    await create('gcpckms', 'gcp-shape', { credentials: JSON.parse(SERVICE_ACCOUNT) });
    expect((await root('GET', 'sys/managed-keys/gcpckms/gcp-shape')).body.data).toMatchObject({
      credentials: 'redacted',
      crypto_key_version: '1',
      algorithm: 'EC_SIGN_P256_SHA256',
    });
  });

  it('lists the keys of a type under both of its names, sorted, and not those of other types', async () => {
    await create('awskms', 'list-b');
    await create('cloudakms', 'list-a');
    await create('pkcs11', 'list-c');
    const keys = (await list('awskms')).body.data.keys as string[];
    expect(keys).toEqual([...keys].sort());
    expect(keys).toEqual(expect.arrayContaining(['list-a', 'list-b']));
    expect(keys).not.toContain('list-c');
    expect((await list('cloudakms')).body.data.keys).toEqual(keys);
  });
});

describe('validation', () => {
  const refusals: Array<[string, string, Record<string, unknown>, string | RegExp]> = [
    // generic fields
    ['pkcs11', 'bool', { any_mount: 'maybe' }, 'error converting input "maybe" for field "any_mount": cannot parse "maybe" as a boolean'],
    ['pkcs11', 'usage', { usages: 'sign,fly' }, 'invalid usage "fly": allowed usages are encrypt, decrypt, sign, verify, wrap, unwrap, mac, random'],
    ['pkcs11', 'no usage', { usages: '' }, '"usages" must name at least one of encrypt, decrypt, sign, verify, wrap, unwrap, mac, random'],
    ['pkcs11', 'foreign field', { access_key: 'x' }, '"access_key" is not a field of pkcs11 managed keys'],
    ['awskms', 'foreign fields', { pin: 'x', library: 'y' }, '"library", "pin" are not fields of cloudakms (awskms) managed keys'],
    // pkcs11
    ['pkcs11', 'library', { library: '' }, 'missing required field "library"'],
    ['pkcs11', 'pin', { pin: undefined }, 'missing required field "pin"'],
    ['pkcs11', 'mechanism', { mechanism: undefined }, 'missing required field "mechanism"'],
    ['pkcs11', 'mechanism format', { mechanism: 'CKM_ECDSA' }, /^invalid mechanism "CKM_ECDSA": give a hexadecimal string prefixed with 0x/],
    ['pkcs11', 'decimal mechanism', { mechanism: '4161' }, /^invalid mechanism "4161"/],
    ['pkcs11', 'slot or label', { slot: undefined }, 'one of "slot" or "token_label" is required'],
    ['pkcs11', 'slot and label', { token_label: 't' }, '"slot" and "token_label" cannot both be set (send an empty value to clear one)'],
    ['pkcs11', 'slot format', { slot: '0x1' }, /^invalid slot "0x1": give the slot number in decimal/],
    ['pkcs11', 'slot range', { slot: '18446744073709551616' }, /^invalid slot/],
    ['pkcs11', 'key label or id', { key_label: undefined }, 'one of "key_label" or "key_id" is required'],
    ['pkcs11', 'curve', { curve: 'P192' }, 'invalid curve "P192": supported curves are P256, P384, P521'],
    ['pkcs11', 'key_bits', { key_bits: 1024 }, 'invalid key_bits 1024: supported sizes are 2048, 3072, 4096'],
    ['pkcs11', 'key_bits type', { key_bits: 'big' }, /^error converting input "big" for field "key_bits"/],
    ['pkcs11', 'max_parallel', { max_parallel: 0 }, 'invalid max_parallel 0: at least 1 request must be allowed in flight'],
    ['pkcs11', 'force_rw_session', { force_rw_session: 'yes' }, /^error converting input "yes" for field "force_rw_session"/],
    ['pkcs11', 'generation: key_bits', { allow_generate_key: 'true' }, '"key_bits" is required when allow_generate_key is true and the mechanism is CKM_RSA_PKCS'],
    ['pkcs11', 'generation: curve', { allow_generate_key: true, mechanism: '0x1041' }, '"curve" is required when allow_generate_key is true and the mechanism is CKM_ECDSA'],
    ['pkcs11', 'generation: mechanism', { allow_generate_key: true, mechanism: '0x1234' }, /^mechanism 0x1234 cannot be used with allow_generate_key: keys can be generated only for 0x0001 \(CKM_RSA_PKCS\)/],
    ['pkcs11', 'generation: label', { allow_generate_key: true, key_bits: 2048, key_label: '', key_id: '01' }, /^"key_label" is required when allow_generate_key is true/],
    // cloudakms
    ['awskms', 'access_key', { access_key: undefined }, 'missing required field "access_key"'],
    ['cloudakms', 'secret_key', { secret_key: '' }, 'missing required field "secret_key"'],
    ['awskms', 'kms_key', { kms_key: undefined }, 'missing required field "kms_key"'],
    ['awskms', 'key_type', { key_type: undefined }, 'missing required field "key_type"'],
    ['awskms', 'key_type value', { key_type: 'DSA' }, 'invalid key_type "DSA": supported types are RSA and ECDSA'],
    ['awskms', 'RSA key_bits', { key_bits: undefined }, '"key_bits" is required when key_type is RSA'],
    ['awskms', 'key_bits value', { key_bits: '1024' }, 'invalid key_bits "1024": supported sizes are 2048, 3072, 4096'],
    ['awskms', 'ECDSA curve', { key_type: 'ECDSA', key_bits: undefined }, '"curve" is required when key_type is ECDSA'],
    ['awskms', 'curve value', { key_type: 'ECDSA', curve: 'secp256k1' }, 'invalid curve "secp256k1": supported curves are P256, P384, P521'],
    ['awskms', 'generation alias', { allow_generate_key: 'true', kms_key: '1234abcd-12ab-34cd-56ef-1234567890ab' }, /^"kms_key" must be an alias \("alias\/<name>"\) when allow_generate_key is true/],
    ['awskms', 'region', { region: 'Mars' }, 'invalid region "Mars": give an AWS region such as "us-east-1"'],
    ['awskms', 'endpoint', { endpoint: 'kms.local' }, 'invalid endpoint "kms.local": give an https:// (or http://) URL'],
    // cloudbkeyvault
    ['azurekeyvault', 'tenant_id', { tenant_id: undefined }, 'missing required field "tenant_id"'],
    ['azurekeyvault', 'client_id', { client_id: undefined }, /^missing required field "client_id": client credentials are required/],
    ['cloudbkeyvault', 'client_secret', { client_secret: '' }, /^missing required field "client_secret"/],
    ['azurekeyvault', 'vault_name', { vault_name: undefined }, 'missing required field "vault_name"'],
    ['azurekeyvault', 'vault_name value', { vault_name: 'x' }, /^invalid vault_name "x": 3 to 24 letters/],
    ['azurekeyvault', 'key_name', { key_name: undefined }, 'missing required field "key_name"'],
    ['azurekeyvault', 'key_name value', { key_name: 'a b' }, /^invalid key_name "a b"/],
    ['azurekeyvault', 'key_type', { key_type: 'RSA' }, 'invalid key_type "RSA": the only supported key type is RSA-HSM'],
    ['azurekeyvault', 'key_bits value', { key_bits: '512' }, 'invalid key_bits "512": supported sizes are 2048, 3072, 4096'],
    ['azurekeyvault', 'generation key_bits', { allow_generate_key: true }, '"key_bits" is required when allow_generate_key is true'],
    ['azurekeyvault', 'environment', { environment: 'AZUREMOONCLOUD' }, /^invalid environment "AZUREMOONCLOUD": supported environments are AZUREPUBLICCLOUD/],
    ['azurekeyvault', 'resource', { resource: 'https://vault.azure.net' }, /^invalid resource "https:\/\/vault.azure.net"/],
    // cloudckms
    ['gcpckms', 'credentials', { credentials: undefined }, 'missing required field "credentials"'],
    ['gcpckms', 'credentials path', { credentials: '/etc/gcp.json' }, /^"credentials" must be the JSON content of a service-account key file/],
    ['gcpckms', 'credentials content', { credentials: '{"type":"service_account"}' }, '"credentials" must be a service-account key: a JSON object with client_email and private_key'],
    ['cloudckms', 'project', { project: undefined }, 'missing required field "project"'],
    ['gcpckms', 'project value', { project: 'P' }, /^invalid project "P"/],
    ['gcpckms', 'key_ring', { key_ring: '' }, 'missing required field "key_ring"'],
    ['gcpckms', 'region', { region: undefined }, 'missing required field "region"'],
    ['gcpckms', 'crypto_key', { crypto_key: undefined }, 'missing required field "crypto_key"'],
    ['gcpckms', 'crypto_key_version', { crypto_key_version: '0' }, 'invalid crypto_key_version "0": give a positive integer'],
    ['gcpckms', 'algorithm', { algorithm: undefined }, 'missing required field "algorithm"'],
    ['gcpckms', 'algorithm value', { algorithm: 'RSA_SIGN_PSS_1024_SHA256' }, /^invalid algorithm "RSA_SIGN_PSS_1024_SHA256": supported algorithms are EC_SIGN_P256_SHA256/],
  ];

  it.each(refusals)('%s: refuses %s and stores nothing', async (type, _what, change, message) => {
    const name = `refused-${type}`;
    const body: Record<string, unknown> = { ...BODIES[CANONICAL[type]], ...change };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete body[k];
    const r = await root('POST', `sys/managed-keys/${type}/${name}`, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toHaveLength(1);
    if (typeof message === 'string') expect(r.body.errors[0]).toBe(message);
    else expect(r.body.errors[0]).toMatch(message);
    expect((await root('GET', `sys/managed-keys/${type}/${name}`)).status).toBe(404);
    expect((await list(type)).body.data?.keys ?? []).not.toContain(name);
  });

  it.each(Object.keys(BODIES))('%s: answers odd values for any field with a 2xx or a 400, never a 500, and a 400 stores nothing', async (type) => {
    // Raw JSON texts, so exact numbers (1e999, 2^64+) and the reserved exact-number key go out as written.
    const odd = ['null', '[]', '{}', '["a","b"]', '1.5', '-1', '1e999', '12345678901234567890', 'true', '""', JSON.stringify('x'.repeat(3000)), '{"\\u0000number":"1"}'];
    const body = BODIES[type];
    const fields = new Set([
      ...['allow_generate_key', 'allow_replace_key', 'allow_store_key', 'any_mount', 'usages'],
      ...Object.keys(body),
      ...['slot', 'token_label', 'key_id', 'curve', 'key_bits', 'max_parallel', 'force_rw_session', 'endpoint', 'region', 'environment', 'resource', 'crypto_key_version'],
    ]);
    const cases = [...fields].flatMap((field) => odd.map((value) => ({ field, value })));
    // Each case under a name of its own, eight at a time (they are independent).
    const run = async ({ field, value }: { field: string; value: string }, i: number) => {
      const name = `odd-${i}`;
      const rest = Object.entries(body).filter(([k]) => k !== field);
      const raw = `{${[...rest.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`), `${JSON.stringify(field)}:${value}`].join(',')}}`;
      const r = await api('POST', `sys/managed-keys/${type}/${name}`, { token: c.root, raw, headers: { 'Content-Type': 'application/json' } });
      const what = `${type} ${field}=${value.slice(0, 40)}: ${r.status} ${r.text.slice(0, 200)}`;
      expect([200, 204, 400], what).toContain(r.status);
      const stored = await root('GET', `sys/managed-keys/${type}/${name}`);
      expect(stored.status, what).toBe(r.status === 400 ? 404 : 200);
      if (stored.status === 200) expect((await root('DELETE', `sys/managed-keys/${type}/${name}`)).status).toBe(204);
    };
    for (let at = 0; at < cases.length; at += 8) await Promise.all(cases.slice(at, at + 8).map((k, j) => run(k, at + j)));
  });

  it('accepts the generic booleans as strings or booleans, and normalises values', async () => {
    await create('awskms', 'normalised', { allow_generate_key: 'true', allow_replace_key: true, allow_store_key: '1', any_mount: 'false', key_type: 'rsa', key_bits: 4096, usages: ['SIGN', 'verify', 'sign', 'encrypt'] });
    expect((await root('GET', 'sys/managed-keys/awskms/normalised')).body.data).toMatchObject({
      allow_generate_key: true,
      allow_replace_key: true,
      allow_store_key: true,
      any_mount: false,
      key_type: 'RSA',
      key_bits: '4096',
      usages: ['sign', 'verify', 'encrypt'],
    });
    await create('pkcs11', 'mechanism-int', { mechanism: 13, curve: 'p-384' });
    expect((await root('GET', 'sys/managed-keys/pkcs11/mechanism-int')).body.data).toMatchObject({ mechanism: 13, curve: 'P384' });
  });

  it('warns about parameters no type knows', async () => {
    const r = await root('POST', 'sys/managed-keys/pkcs11/warned', { ...BODIES.pkcs11, colour: 'blue' });
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [colour]']);
  });

  it.each([
    ['Upper', 'managed key names must be lowercase: "Upper"'],
    ['bad name', /^invalid managed key name "bad name"/],
    ['-dash', /^invalid managed key name "-dash"/],
    ['dot.', /^invalid managed key name "dot."/],
  ])('refuses the name %j', async (name, message) => {
    const r = await root('POST', `sys/managed-keys/pkcs11/${encodeURIComponent(name)}`, BODIES.pkcs11);
    expect(r.status).toBe(400);
    if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
    else expect(r.body.errors[0]).toMatch(message);
  });

  it('refuses a type named like an Object property (once a 500)', async () => {
    for (const type of ['constructor', '__proto__', 'toString']) {
      for (const method of ['POST', 'GET', 'DELETE']) {
        const r = await root(method, `sys/managed-keys/${type}/k`, method === 'POST' ? BODIES.pkcs11 : undefined);
        expect(r.status, `${method} ${type}`).toBe(400);
        expect(r.body.errors[0]).toMatch(new RegExp(`^unsupported managed key type "${type}"`));
      }
    }
  });

  it('refuses an unknown type on every operation', async () => {
    for (const [method, path] of [
      ['POST', 'sys/managed-keys/yubikey/k'],
      ['GET', 'sys/managed-keys/yubikey/k'],
      ['DELETE', 'sys/managed-keys/yubikey/k'],
      ['POST', 'sys/managed-keys/yubikey/k/test/sign'],
    ]) {
      const r = await root(method, path, method === 'POST' ? BODIES.pkcs11 : undefined);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body.errors[0]).toMatch(/^unsupported managed key type "yubikey"/);
    }
  });
});

describe('names and updates', () => {
  it('keeps names unique across types, whichever name of the type is used', async () => {
    await create('pkcs11', 'shared');
    for (const type of ['awskms', 'cloudakms', 'gcpckms']) {
      const r = await root('POST', `sys/managed-keys/${type}/shared`, BODIES[CANONICAL[type]]);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['managed key name "shared" is already used by a pkcs11 key: names are unique across types']);
    }
    expect((await root('GET', 'sys/managed-keys/awskms/shared')).status).toBe(404);
    expect((await root('GET', 'sys/managed-keys/pkcs11/shared')).body.data.type).toBe('pkcs11');
  });

  it('updates in place: the UUID stays, unnamed fields (the PIN too) keep their values', async () => {
    await create('pkcs11', 'updated');
    const before = (await root('GET', 'sys/managed-keys/pkcs11/updated')).body.data;
    const r = await root('POST', 'sys/managed-keys/pkcs11/updated', { key_label: 'rotated', any_mount: 'true', usages: 'sign' });
    expect(r.status).toBe(204);
    const after = (await root('GET', 'sys/managed-keys/pkcs11/updated')).body.data;
    expect(after).toEqual({ ...before, key_label: 'rotated', any_mount: true, usages: ['sign'] });
    // An update is validated as a whole: switching to a token label needs the slot cleared.
    expect((await root('POST', 'sys/managed-keys/pkcs11/updated', { token_label: 'coffer' })).status).toBe(400);
    expect((await root('POST', 'sys/managed-keys/pkcs11/updated', { token_label: 'coffer', slot: '' })).status).toBe(204);
    expect((await root('GET', 'sys/managed-keys/pkcs11/updated')).body.data).toMatchObject({ UUID: before.UUID, slot: null, token_label: 'coffer' });
  });

  it('updates a cloud key through either name of its type', async () => {
    await create('cloudakms', 'aliased');
    const uuid = (await root('GET', 'sys/managed-keys/cloudakms/aliased')).body.data.UUID;
    expect((await root('POST', 'sys/managed-keys/awskms/aliased', { region: 'eu-west-1' })).status).toBe(204);
    expect((await root('GET', 'sys/managed-keys/awskms/aliased')).body.data).toMatchObject({ UUID: uuid, region: 'eu-west-1' });
  });

  it('reads nothing at a path of another type', async () => {
    await create('pkcs11', 'typed');
    expect((await root('GET', 'sys/managed-keys/azurekeyvault/typed')).status).toBe(404);
  });
});

describe('DELETE', () => {
  it('answers 204 for a key that does not exist, and refuses a path of another type', async () => {
    expect((await root('DELETE', 'sys/managed-keys/pkcs11/never')).status).toBe(204);
    await create('pkcs11', 'wrong-type');
    const r = await root('DELETE', 'sys/managed-keys/awskms/wrong-type');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['managed key "wrong-type" is a pkcs11 key: delete it at sys/managed-keys/pkcs11/wrong-type']);
    expect((await root('GET', 'sys/managed-keys/pkcs11/wrong-type')).status).toBe(200);
  });

  it('is refused while a secrets mount lists the key, and allowed once tuned away', async () => {
    await create('pkcs11', 'in-use');
    expect((await root('POST', 'sys/mounts/mk-kv', { type: 'kv', config: { allowed_managed_keys: 'other,in-use' } })).status).toBe(204);
    const r = await root('DELETE', 'sys/managed-keys/pkcs11/in-use');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['cannot delete managed key "in-use": it is listed in the allowed_managed_keys of mount mk-kv/; remove it there first (tune)']);
    expect((await root('GET', 'sys/managed-keys/pkcs11/in-use')).status).toBe(200);
    expect((await root('POST', 'sys/mounts/mk-kv/tune', { allowed_managed_keys: 'other' })).status).toBe(204);
    expect((await root('DELETE', 'sys/managed-keys/pkcs11/in-use')).status).toBe(204);
    expect((await root('GET', 'sys/managed-keys/pkcs11/in-use')).status).toBe(404);
  });

  it('is refused while an auth mount lists the key, naming every mount', async () => {
    await create('gcpckms', 'auth-use');
    expect((await root('POST', 'sys/auth/mk-jwt', { type: 'jwt', config: { allowed_managed_keys: ['auth-use'] } })).status).toBe(204);
    expect((await root('POST', 'sys/mounts/mk-kv2', { type: 'kv' })).status).toBe(204);
    expect((await root('POST', 'sys/mounts/mk-kv2/tune', { allowed_managed_keys: ['auth-use'] })).status).toBe(204);
    const r = await root('DELETE', 'sys/managed-keys/gcpckms/auth-use');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['cannot delete managed key "auth-use": it is listed in the allowed_managed_keys of mounts mk-kv2/, auth/mk-jwt/; remove it there first (tune)']);
    expect((await root('POST', 'sys/auth/mk-jwt/tune', { allowed_managed_keys: '' })).status).toBe(204);
    expect((await root('DELETE', 'sys/mounts/mk-kv2')).status).toBe(204);
    expect((await root('DELETE', 'sys/managed-keys/cloudckms/auth-use')).status).toBe(204);
  });
});

describe('allowed_managed_keys on mounts', () => {
  it('is set at enable and by tune, and shown in the mount config and the tune read', async () => {
    expect((await root('POST', 'sys/mounts/mk-pki', { type: 'pki', config: { allowed_managed_keys: 'hsm-a, hsm-b' } })).status).toBe(204);
    expect((await root('GET', 'sys/mounts/mk-pki')).body.data.config.allowed_managed_keys).toEqual(['hsm-a', 'hsm-b']);
    expect((await root('GET', 'sys/mounts')).body.data['mk-pki/'].config.allowed_managed_keys).toEqual(['hsm-a', 'hsm-b']);
    expect((await root('GET', 'sys/mounts/mk-pki/tune')).body.data.allowed_managed_keys).toEqual(['hsm-a', 'hsm-b']);
    expect((await root('POST', 'sys/mounts/mk-pki/tune', { allowed_managed_keys: ['hsm-c'] })).status).toBe(204);
    expect((await root('GET', 'sys/mounts/mk-pki/tune')).body.data.allowed_managed_keys).toEqual(['hsm-c']);
    // Tuning other settings leaves it alone; an empty list removes it from the views.
    expect((await root('POST', 'sys/mounts/mk-pki/tune', { description: 'x' })).status).toBe(204);
    expect((await root('GET', 'sys/mounts/mk-pki')).body.data.config.allowed_managed_keys).toEqual(['hsm-c']);
    expect((await root('POST', 'sys/mounts/mk-pki/tune', { allowed_managed_keys: '' })).status).toBe(204);
    expect((await root('GET', 'sys/mounts/mk-pki')).body.data.config.allowed_managed_keys).toBeUndefined();
    expect((await root('GET', 'sys/mounts/mk-pki/tune')).body.data.allowed_managed_keys).toBeUndefined();
  });

  it('reaches the engine of the mount (LogicalRequest.mountAllowedManagedKeys), tune included', async () => {
    expect((await root('POST', 'sys/mounts/mk-ctx', { type: 'coffer-test-leases', config: { allowed_managed_keys: 'hsm-a' } })).status).toBe(204);
    expect((await root('GET', 'mk-ctx/mount-context')).body.data).toEqual({ allowed_managed_keys: ['hsm-a'] });
    expect((await root('POST', 'sys/mounts/mk-ctx/tune', { allowed_managed_keys: 'hsm-a,hsm-b' })).status).toBe(204);
    expect((await root('GET', 'mk-ctx/mount-context')).body.data).toEqual({ allowed_managed_keys: ['hsm-a', 'hsm-b'] });
    expect((await root('POST', 'sys/mounts/mk-ctx2', { type: 'coffer-test-leases' })).status).toBe(204);
    expect((await root('GET', 'mk-ctx2/mount-context')).body.data).toEqual({ allowed_managed_keys: [] });
  });

  it('works the same on auth mounts', async () => {
    expect((await root('POST', 'sys/auth/mk-jwt2', { type: 'jwt', config: { allowed_managed_keys: 'hsm-a' } })).status).toBe(204);
    expect((await root('GET', 'sys/auth/mk-jwt2')).body.data.config.allowed_managed_keys).toEqual(['hsm-a']);
    expect((await root('POST', 'sys/auth/mk-jwt2/tune', { allowed_managed_keys: 'hsm-a,hsm-b' })).status).toBe(204);
    expect((await root('GET', 'sys/auth/mk-jwt2/tune')).body.data.allowed_managed_keys).toEqual(['hsm-a', 'hsm-b']);
    expect((await root('GET', 'sys/auth')).body.data['mk-jwt2/'].config.allowed_managed_keys).toEqual(['hsm-a', 'hsm-b']);
  });
});

describe('permissions', () => {
  let nobody = '';
  let reader = '';
  let writer = '';
  beforeAll(async () => {
    await create('pkcs11', 'guarded');
    nobody = (await root('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token;
    reader = await tokenWithPolicy(c.root, 'mk-reader', 'path "sys/managed-keys/*" { capabilities = ["read", "list"] }');
    writer = await tokenWithPolicy(c.root, 'mk-writer', 'path "sys/managed-keys/*" { capabilities = ["create", "read", "update", "delete", "list"] }');
  });

  it('refuses a token without a policy on the paths, for every operation', async () => {
    for (const [method, path] of [
      ['GET', 'sys/managed-keys/pkcs11?list=true'],
      ['GET', 'sys/managed-keys/pkcs11/guarded'],
      ['POST', 'sys/managed-keys/pkcs11/guarded'],
      ['DELETE', 'sys/managed-keys/pkcs11/guarded'],
      ['POST', 'sys/managed-keys/pkcs11/guarded/test/sign'],
    ]) {
      const r = await api(method, path, { token: nobody, body: method === 'POST' ? BODIES.pkcs11 : undefined });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.errors).toEqual([PERMISSION_DENIED]);
    }
  });

  it('lets read and list through a read policy, and nothing more', async () => {
    expect((await list('pkcs11', reader)).body.data.keys).toContain('guarded');
    expect((await api('GET', 'sys/managed-keys/pkcs11/guarded', { token: reader })).body.data.pin).toBe('redacted');
    expect((await api('POST', 'sys/managed-keys/pkcs11/guarded', { token: reader, body: { any_mount: true } })).status).toBe(403);
    expect((await api('POST', 'sys/managed-keys/pkcs11/by-reader', { token: reader, body: BODIES.pkcs11 })).status).toBe(403);
    expect((await api('DELETE', 'sys/managed-keys/pkcs11/guarded', { token: reader })).status).toBe(403);
    expect((await root('GET', 'sys/managed-keys/pkcs11/guarded')).body.data.any_mount).toBe(false);
  });

  it('needs no sudo: create, update and delete capabilities suffice', async () => {
    expect((await api('POST', 'sys/managed-keys/pkcs11/by-writer', { token: writer, body: BODIES.pkcs11 })).status).toBe(204);
    expect((await api('POST', 'sys/managed-keys/pkcs11/by-writer', { token: writer, body: { any_mount: true } })).status).toBe(204);
    expect((await api('DELETE', 'sys/managed-keys/pkcs11/by-writer', { token: writer })).status).toBe(204);
  });

  it('needs create (not only update) for a new key', async () => {
    const updater = await tokenWithPolicy(c.root, 'mk-updater', 'path "sys/managed-keys/*" { capabilities = ["update"] }');
    expect((await api('POST', 'sys/managed-keys/pkcs11/by-updater', { token: updater, body: BODIES.pkcs11 })).status).toBe(403);
    expect((await api('POST', 'sys/managed-keys/pkcs11/guarded', { token: updater, body: { max_parallel: 2 } })).status).toBe(204);
  });
});

describe('test/sign', () => {
  beforeAll(async () => {
    for (const type of ['pkcs11', 'cloudakms', 'cloudbkeyvault', 'cloudckms']) await create(type, `sign-${type}`, type === 'cloudakms' ? { endpoint: inject('awsKmsUrl') } : {});
  });

  it.each([
    [{ hash_algorithm: 'md5' }, 'unsupported hash_algorithm "md5": supported values are sha1, sha2-224, sha2-256, sha2-384, sha2-512, sha3-224, sha3-256, sha3-384, sha3-512'],
    [{ hash_algorithm: 'SHA2-256' }, /^unsupported hash_algorithm "SHA2-256"/],
    [{ use_pss: 'maybe' }, 'error converting input "maybe" for field "use_pss": cannot parse "maybe" as a boolean'],
  ])('refuses %j', async (body, message) => {
    const r = await root('POST', 'sys/managed-keys/pkcs11/sign-pkcs11/test/sign', body);
    expect(r.status).toBe(400);
    if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
    else expect(r.body.errors[0]).toMatch(message);
  });

  it('answers 404 for a key that is not there (or not of that type)', async () => {
    const r = await root('POST', 'sys/managed-keys/pkcs11/nothing/test/sign', {});
    expect(r.status).toBe(404);
    expect(r.body.errors).toEqual(['no managed key found with name "nothing" of type pkcs11']);
    expect((await root('POST', 'sys/managed-keys/awskms/sign-pkcs11/test/sign', {})).status).toBe(404);
  });

  it('pkcs11: valid input reaches the HSM bridge (test/global/hsm-bridge-setup.ts), whose token is not at slot 0', async () => {
    for (const body of [{}, { use_pss: 'true', hash_algorithm: 'sha3-512' }, { use_pss: false, hash_algorithm: 'sha2-224' }]) {
      const r = await root('POST', 'sys/managed-keys/pkcs11/sign-pkcs11/test/sign', body);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['HSM bridge: library softhsm has no initialised token with slot 0 (token_not_found)']);
    }
  });

  // Each cloud backend is reached (the emulators of test/emulators/ stand in for the clouds) and
  // refuses this file's made-up credentials in its own words, quoting no secret.
  it.each([
    ['cloudakms', 'awskms', /^AWS KMS DescribeKey failed with UnrecognizedClientException: /],
    ['cloudbkeyvault', 'azurekeyvault', /^Azure AD refused the token request of client "client" in tenant "tenant": /],
    ['cloudckms', 'gcpckms', /^"credentials": the private_key of coffer@coffer-test\.iam\.gserviceaccount\.com is not a PKCS#8 RSA key/],
  ])('%s (also as %s): valid input reaches the backend, which refuses the made-up credentials', async (type, alias, message) => {
    for (const [path, body] of [
      [type, {}],
      [alias, { use_pss: 'true', hash_algorithm: 'sha2-512' }],
    ] as const) {
      const r = await root('POST', `sys/managed-keys/${path}/sign-${type}/test/sign`, body);
      expect({ status: r.status, errors: r.body.errors }).toEqual({ status: 400, errors: [expect.stringMatching(message)] });
      for (const secret of SECRETS) expect(r.text).not.toContain(secret);
    }
  });
});
