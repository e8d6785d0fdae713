// cloudakms (awskms) managed keys against the AWS KMS emulator (test/emulators/aws-kms/): each key
// names the emulator by its `endpoint` field (this file's tenant of it), and every request the
// Worker makes is SigV4-checked there with the AWS SDK's own signer. test/sign generates keys of
// every spec (RSA 2048/3072/4096, ECC NIST P-256/P-384/P-521) through CreateKey + CreateAlias and
// signs PKCS#1 v1.5 and PSS with SHA-256/384/512 (MessageType DIGEST); keys made outside are used
// by alias, key id and ARN, and refused when their spec, usage or state does not fit. KMS's
// refusals (unknown access key, bad signature, IAM denial, throttling, server errors) come back as
// clear 4xx/502 without the credentials. Then transit and PKI on KMS keys, every signature checked
// here with WebCrypto / @peculiar/x509 against the public key the emulator holds.
import { ECDSASigValue } from '@peculiar/asn1-ecc';
import { AsnConvert } from '@peculiar/asn1-schema';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type ApiResult, type Cluster } from '../../helpers/api';
import { kmsEmulator, type CallRecord, type KeyView } from '../../emulators/aws-kms/client';

let c: Cluster;
const { call, ok } = caller(() => c.root);

/** Names unique to this run; the tenant keeps this file's account apart from other files'. */
const run = Math.random().toString(36).slice(2, 8);
const ENDPOINT = `${inject('awsKmsUrl')}/t/mk-awskms-${run}`;
const REGION = 'eu-central-1';
const ADMIN = { accessKeyId: 'AKIACOFFERKMSADMIN01', secretAccessKey: `admin/${run}/Kms+Secret0000000000000001` };
/** May use keys but not create them. */
const SIGNER = { accessKeyId: 'AKIACOFFERKMSSIGNER1', secretAccessKey: `signer/${run}/Kms+Secret00000000000000002` };
const WRONG_SECRET = `wrong/${run}/Kms+Secret00000000000000000003`;
const emu = kmsEmulator(ENDPOINT);

const b64 = (b: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(b)));
const bytes = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
const der = (pem: string) => bytes(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''));
const utf8 = (s: string) => new TextEncoder().encode(s);

/** An awskms managed key in this file's account and region, with the admin key unless `fields` says otherwise. */
async function create(name: string, fields: Record<string, unknown>): Promise<void> {
  const r = await call('POST', `sys/managed-keys/awskms/${name}`, {
    access_key: ADMIN.accessKeyId,
    secret_key: ADMIN.secretAccessKey,
    region: REGION,
    endpoint: ENDPOINT,
    ...fields,
  });
  if (r.status !== 204) throw new Error(`create ${name}: ${r.status} ${r.text}`);
}
const testSign = (name: string, body: Record<string, unknown> = {}): Promise<ApiResult> => call('POST', `sys/managed-keys/awskms/${name}/test/sign`, body);
const signed = (r: ApiResult) => expect({ status: r.status, body: r.text }).toEqual({ status: 204, body: '' });
const refused = (r: ApiResult, status: number, message: string | RegExp) =>
  expect({ status: r.status, errors: r.body?.errors }).toEqual({ status, errors: [typeof message === 'string' ? message : expect.stringMatching(message)] });

/** The key an alias points at, as the emulator holds it. */
async function keyOf(alias: string): Promise<KeyView | undefined> {
  return (await emu.state()).keys.find((k) => k.Aliases.includes(alias));
}
const mark = async (): Promise<number> => (await emu.calls()).length;
const callsSince = async (from: number): Promise<CallRecord[]> => (await emu.calls()).slice(from);
const ops = (calls: CallRecord[]) => calls.map((x) => x.operation);

beforeAll(async () => {
  c = await initCluster();
  await emu.reset({
    credentials: [
      { ...ADMIN, userName: 'coffer-admin' },
      { ...SIGNER, userName: 'coffer-signer', allow: ['DescribeKey', 'GetPublicKey', 'Sign', 'Verify'] },
    ],
  });
});

describe('test/sign generates the key (CreateKey + CreateAlias) and signs at KMS', () => {
  it('RSA 2048: PKCS#1 v1.5 and PSS with sha2-256/384/512; the key is created once, with its spec, usage, alias and description', async () => {
    await create('rsa-2048', { key_type: 'RSA', key_bits: '2048', kms_key: 'alias/coffer/rsa-2048', allow_generate_key: true });
    const from = await mark();
    signed(await testSign('rsa-2048'));
    const key = await keyOf('alias/coffer/rsa-2048');
    expect(key).toMatchObject({ KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY', KeyState: 'Enabled', Region: REGION, Aliases: ['alias/coffer/rsa-2048'] });
    expect(key!.Description).toMatch(/^Coffer managed key "rsa-2048" \([0-9a-f-]{36}\)$/);
    const first = await callsSince(from);
    expect(ops(first)).toEqual(['DescribeKey', 'DescribeKey', 'CreateKey', 'CreateAlias', 'GetPublicKey', 'Sign', 'Verify']);
    expect(first.every((x) => x.accessKeyId === ADMIN.accessKeyId && x.region === REGION)).toBe(true);
    // The alias is looked up (ensureKey, then generate) before the key is created.
    expect(first.map((x) => x.code ?? x.status)).toEqual(['NotFoundException', 'NotFoundException', 200, 200, 200, 200, 200]);
    expect(first.find((x) => x.operation === 'CreateKey')!.params).toEqual({ KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY', Description: key!.Description });
    expect(first.find((x) => x.operation === 'CreateAlias')!.params).toEqual({ AliasName: 'alias/coffer/rsa-2048', TargetKeyId: key!.KeyId });
    expect(first.find((x) => x.operation === 'Sign')!.params).toEqual({ KeyId: 'alias/coffer/rsa-2048', Message: 32, MessageType: 'DIGEST', SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_256' });

    const again = await mark();
    for (const hash of ['sha2-256', 'sha2-384', 'sha2-512']) {
      signed(await testSign('rsa-2048', { hash_algorithm: hash }));
      signed(await testSign('rsa-2048', { hash_algorithm: hash, use_pss: true }));
    }
    const later = await callsSince(again);
    expect(ops(later)).not.toContain('CreateKey');
    expect(later.filter((x) => x.operation === 'Sign').map((x) => [x.params.SigningAlgorithm, x.params.Message])).toEqual([
      ['RSASSA_PKCS1_V1_5_SHA_256', 32],
      ['RSASSA_PSS_SHA_256', 32],
      ['RSASSA_PKCS1_V1_5_SHA_384', 48],
      ['RSASSA_PSS_SHA_384', 48],
      ['RSASSA_PKCS1_V1_5_SHA_512', 64],
      ['RSASSA_PSS_SHA_512', 64],
    ]);
    expect((await emu.state()).keys.filter((k) => k.Aliases.includes('alias/coffer/rsa-2048'))).toHaveLength(1);
  });

  it('RSA 3072 and RSA 4096', async () => {
    await create('rsa-3072', { key_type: 'RSA', key_bits: 3072, kms_key: 'alias/coffer/rsa-3072', allow_generate_key: true });
    await create('rsa-4096', { key_type: 'rsa', key_bits: '4096', kms_key: 'alias/coffer/rsa-4096', allow_generate_key: 'true' });
    signed(await testSign('rsa-3072', { use_pss: true, hash_algorithm: 'sha2-384' }));
    signed(await testSign('rsa-4096', { hash_algorithm: 'sha2-512' }));
    expect(await keyOf('alias/coffer/rsa-3072')).toMatchObject({ KeySpec: 'RSA_3072', KeyUsage: 'SIGN_VERIFY' });
    expect(await keyOf('alias/coffer/rsa-4096')).toMatchObject({ KeySpec: 'RSA_4096', KeyUsage: 'SIGN_VERIFY' });
  }, 60_000);

  it('ECDSA P-256, P-384 and P-521, each with the one hash KMS signs with on its curve', async () => {
    await create('ec-p256', { key_type: 'ECDSA', curve: 'P256', kms_key: 'alias/coffer/ec-p256', allow_generate_key: true });
    await create('ec-p384', { key_type: 'ECDSA', curve: 'P-384', kms_key: 'alias/coffer/ec-p384', allow_generate_key: true });
    await create('ec-p521', { key_type: 'ECDSA', curve: 'p521', kms_key: 'alias/coffer/ec-p521', allow_generate_key: true });
    const from = await mark();
    signed(await testSign('ec-p256'));
    signed(await testSign('ec-p384', { hash_algorithm: 'sha2-384' }));
    signed(await testSign('ec-p521', { hash_algorithm: 'sha2-512' }));
    expect(await keyOf('alias/coffer/ec-p256')).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
    expect(await keyOf('alias/coffer/ec-p384')).toMatchObject({ KeySpec: 'ECC_NIST_P384', KeyUsage: 'SIGN_VERIFY' });
    expect(await keyOf('alias/coffer/ec-p521')).toMatchObject({ KeySpec: 'ECC_NIST_P521', KeyUsage: 'SIGN_VERIFY' });
    const made = (await callsSince(from)).filter((x) => x.operation === 'CreateKey' || x.operation === 'Sign');
    expect(made.map((x) => x.params.KeySpec ?? x.params.SigningAlgorithm)).toEqual(['ECC_NIST_P256', 'ECDSA_SHA_256', 'ECC_NIST_P384', 'ECDSA_SHA_384', 'ECC_NIST_P521', 'ECDSA_SHA_512']);
  });

  it('refuses, before asking KMS, what KMS cannot sign: other hashes, another hash than the curve\'s, PSS on ECDSA', async () => {
    const from = await mark();
    for (const hash of ['sha2-224', 'sha1', 'sha3-256']) {
      refused(await testSign('rsa-2048', { hash_algorithm: hash }), 400, `AWS KMS cannot sign ${hash} digests: it signs SHA-256, SHA-384 and SHA-512 digests only (sha2-256, sha2-384, sha2-512)`);
    }
    refused(await testSign('ec-p256', { hash_algorithm: 'sha2-384' }), 400, 'AWS KMS signs with a ECC_NIST_P256 key only sha2-256 digests (ECDSA_SHA_256), not sha2-384');
    refused(await testSign('ec-p384'), 400, 'AWS KMS signs with a ECC_NIST_P384 key only sha2-384 digests (ECDSA_SHA_384), not sha2-256');
    refused(await testSign('ec-p256', { use_pss: true }), 400, 'use_pss applies only to RSA keys');
    expect(ops(await callsSince(from))).not.toContain('Sign');
  });
});

describe('keys made outside Coffer', () => {
  let pre: KeyView;
  beforeAll(async () => {
    pre = await emu.createKey({ region: REGION, keySpec: 'RSA_2048', keyUsage: 'SIGN_VERIFY', alias: 'alias/made-outside' });
  });

  it('are used by alias, key id, key ARN and alias ARN without allow_generate_key', async () => {
    const refs = { 'out-alias': 'alias/made-outside', 'out-id': pre.KeyId, 'out-arn': pre.Arn, 'out-alias-arn': `arn:aws:kms:${REGION}:111122223333:alias/made-outside` };
    const from = await mark();
    for (const [name, kms_key] of Object.entries(refs)) {
      await create(name, { key_type: 'RSA', key_bits: '2048', kms_key });
      signed(await testSign(name, { use_pss: true }));
    }
    const calls = await callsSince(from);
    expect(ops(calls)).not.toContain('CreateKey');
    expect(calls.filter((x) => x.operation === 'Sign').map((x) => x.params.KeyId)).toEqual(Object.values(refs));
    expect((await emu.state()).keys.filter((k) => k.KeySpec === 'RSA_2048')).toHaveLength(2);
  });

  it('the signing-only access key signs with them (it may not create keys)', async () => {
    await create('out-signer', { access_key: SIGNER.accessKeyId, secret_key: SIGNER.secretAccessKey, key_type: 'RSA', key_bits: '2048', kms_key: 'alias/made-outside' });
    signed(await testSign('out-signer'));
  });

  it('a missing key without allow_generate_key: 400, and nothing is created', async () => {
    await create('absent', { key_type: 'ECDSA', curve: 'P256', kms_key: 'alias/not-there' });
    await create('absent-id', { key_type: 'ECDSA', curve: 'P256', kms_key: '0b9a7e52-1c2d-4e5f-8a9b-0c1d2e3f4a5b' });
    const from = await mark();
    refused(await testSign('absent'), 400, 'managed key "absent": no key was found in the cloudakms (awskms) backend, and allow_generate_key is false');
    refused(await testSign('absent-id'), 400, 'managed key "absent-id": no key was found in the cloudakms (awskms) backend, and allow_generate_key is false');
    const calls = await callsSince(from);
    expect(calls.map((x) => [x.operation, x.code])).toEqual([
      ['DescribeKey', 'NotFoundException'],
      ['DescribeKey', 'NotFoundException'],
    ]);
  });

  it('allow_generate_key needs an alias: a key id cannot be created', async () => {
    const r = await call('POST', 'sys/managed-keys/awskms/gen-by-id', {
      access_key: ADMIN.accessKeyId,
      secret_key: ADMIN.secretAccessKey,
      endpoint: ENDPOINT,
      key_type: 'RSA',
      key_bits: '2048',
      kms_key: pre.KeyId,
      allow_generate_key: true,
    });
    refused(r, 400, /^"kms_key" must be an alias \("alias\/<name>"\) when allow_generate_key is true/);
  });

  it('a key of another spec or usage than configured: 400 saying what it is', async () => {
    await emu.createKey({ region: REGION, keySpec: 'RSA_2048', keyUsage: 'ENCRYPT_DECRYPT', alias: 'alias/enc-only' });
    await emu.createKey({ region: REGION, keySpec: 'ECC_NIST_P256', keyUsage: 'KEY_AGREEMENT', alias: 'alias/agreement' });
    await create('wrong-bits', { key_type: 'RSA', key_bits: '3072', kms_key: 'alias/made-outside' });
    await create('wrong-type', { key_type: 'ECDSA', curve: 'P256', kms_key: 'alias/made-outside' });
    await create('wrong-usage', { key_type: 'RSA', key_bits: '2048', kms_key: 'alias/enc-only' });
    await create('agreement', { key_type: 'ECDSA', curve: 'P256', kms_key: 'alias/agreement' });
    refused(await testSign('wrong-bits'), 400, `AWS KMS key ${pre.Arn} is RSA_2048, but the managed key is configured for RSA_3072 (key_type RSA, key_bits 3072)`);
    refused(await testSign('wrong-type'), 400, `AWS KMS key ${pre.Arn} is RSA_2048, but the managed key is configured for ECC_NIST_P256 (key_type ECDSA, curve P256)`);
    refused(await testSign('wrong-usage'), 400, /^AWS KMS key arn:aws:kms:eu-central-1:111122223333:key\/[0-9a-f-]{36} cannot serve managed key "wrong-usage": its KeyUsage is ENCRYPT_DECRYPT, and the managed key's usages \(sign, verify\) need SIGN_VERIFY$/);
    refused(await testSign('agreement'), 400, /cannot serve managed key "agreement": its KeyUsage is KEY_AGREEMENT: managed keys use SIGN_VERIFY or ENCRYPT_DECRYPT keys$/);
  });

  it('a disabled key, or one pending deletion: 400 with its state; enabled again, it signs', async () => {
    const k = await emu.createKey({ region: REGION, keySpec: 'ECC_NIST_P384', keyUsage: 'SIGN_VERIFY', alias: 'alias/switched' });
    await create('switched', { key_type: 'ECDSA', curve: 'P384', kms_key: 'alias/switched' });
    signed(await testSign('switched', { hash_algorithm: 'sha2-384' }));
    await emu.setKeyState({ keyId: k.KeyId, state: 'Disabled' });
    refused(await testSign('switched', { hash_algorithm: 'sha2-384' }), 400, `AWS KMS key ${k.Arn} is Disabled: it cannot be used until it is enabled`);
    await emu.setKeyState({ keyId: k.KeyId, state: 'PendingDeletion' });
    refused(await testSign('switched', { hash_algorithm: 'sha2-384' }), 400, `AWS KMS key ${k.Arn} is PendingDeletion: it cannot be used unless its deletion is cancelled and it is enabled`);
    await emu.setKeyState({ keyId: k.KeyId, state: 'Enabled' });
    signed(await testSign('switched', { hash_algorithm: 'sha2-384' }));
  });

  it('a key in another region is not found there', async () => {
    await create('other-region', { region: 'us-west-2', key_type: 'RSA', key_bits: '2048', kms_key: 'alias/made-outside' });
    refused(await testSign('other-region'), 400, 'managed key "other-region": no key was found in the cloudakms (awskms) backend, and allow_generate_key is false');
  });
});

describe("KMS's refusals and failures", () => {
  const noCredentials = (r: ApiResult) => {
    for (const secret of [ADMIN.secretAccessKey, SIGNER.secretAccessKey, WRONG_SECRET]) expect(r.text).not.toContain(secret);
  };

  it('a wrong secret key: 400 naming InvalidSignatureException, without the secret', async () => {
    await create('wrong-secret', { secret_key: WRONG_SECRET, key_type: 'RSA', key_bits: '2048', kms_key: 'alias/made-outside' });
    const r = await testSign('wrong-secret');
    refused(r, 400, /^AWS KMS DescribeKey failed with InvalidSignatureException: The request signature we calculated does not match the signature you provided\..* \(check secret_key \(and the clock\)\)$/);
    noCredentials(r);
    expect((await emu.calls()).at(-1)).toMatchObject({ operation: 'DescribeKey', accessKeyId: ADMIN.accessKeyId, status: 400, code: 'InvalidSignatureException' });
  });

  it('an access key AWS does not know: 400 naming UnrecognizedClientException', async () => {
    await create('unknown-key', { access_key: 'AKIANOTKNOWNTOKMS001', secret_key: WRONG_SECRET, key_type: 'RSA', key_bits: '2048', kms_key: 'alias/made-outside' });
    const r = await testSign('unknown-key');
    refused(r, 400, 'AWS KMS DescribeKey failed with UnrecognizedClientException: The security token included in the request is invalid. (AWS does not know the access_key)');
    noCredentials(r);
  });

  it("an IAM denial: the signing-only key cannot generate (AccessDeniedException), and nothing is created", async () => {
    await create('denied', { access_key: SIGNER.accessKeyId, secret_key: SIGNER.secretAccessKey, key_type: 'ECDSA', curve: 'P256', kms_key: 'alias/coffer/denied', allow_generate_key: true });
    const before = (await emu.state()).keys.length;
    const r = await testSign('denied');
    refused(
      r,
      400,
      "AWS KMS CreateKey failed with AccessDeniedException: User: arn:aws:iam::111122223333:user/coffer-signer is not authorized to perform: kms:CreateKey on resource: * because no identity-based policy allows the kms:CreateKey action (the access key's IAM policy does not allow this KMS operation)",
    );
    noCredentials(r);
    expect((await emu.state()).keys).toHaveLength(before);
  });

  it('throttling is retried twice with backoff; throttling that lasts is a 502', async () => {
    await emu.faults({ faults: [{ action: 'Sign', times: 2, status: 400, code: 'ThrottlingException', message: 'Rate exceeded' }] });
    let from = await mark();
    signed(await testSign('ec-p256'));
    expect((await callsSince(from)).filter((x) => x.operation === 'Sign').map((x) => x.code ?? x.status)).toEqual(['ThrottlingException', 'ThrottlingException', 200]);

    await emu.faults({ faults: [{ action: 'Sign', times: 3, status: 400, code: 'ThrottlingException', message: 'Rate exceeded' }] });
    from = await mark();
    refused(await testSign('ec-p256'), 502, 'AWS KMS Sign failed with ThrottlingException: Rate exceeded');
    expect((await callsSince(from)).filter((x) => x.operation === 'Sign')).toHaveLength(3);
  });

  it('a server error (KMSInternalException) is retried; one that lasts is a 502', async () => {
    await emu.faults({ faults: [{ action: 'GetPublicKey', times: 1, status: 500, code: 'KMSInternalException', message: 'internal' }] });
    signed(await testSign('ec-p256'));
    await emu.faults({ faults: [{ action: 'DescribeKey', times: 3, status: 500, code: 'KMSInternalException', message: 'internal' }] });
    refused(await testSign('ec-p256'), 502, 'AWS KMS DescribeKey failed with KMSInternalException: internal');
    expect(await emu.pendingFaults()).toEqual({ faults: [], delays: [] });
  });

  it('CreateKey is not repeated after a server error (it might have created the key)', async () => {
    await create('gen-fails', { key_type: 'ECDSA', curve: 'P256', kms_key: 'alias/coffer/gen-fails', allow_generate_key: true });
    await emu.faults({ faults: [{ action: 'CreateKey', times: 1, status: 500, code: 'KMSInternalException', message: 'internal' }] });
    const from = await mark();
    refused(await testSign('gen-fails'), 502, 'AWS KMS CreateKey failed with KMSInternalException: internal');
    expect(ops(await callsSince(from)).filter((o) => o === 'CreateKey')).toHaveLength(1);
    // The next try creates it.
    signed(await testSign('gen-fails'));
  });

  it('an endpoint nobody answers at: 502', async () => {
    await create('unreachable', { endpoint: 'http://127.0.0.1:9/', key_type: 'RSA', key_bits: '2048', kms_key: 'alias/made-outside' });
    refused(await testSign('unreachable'), 502, /^AWS KMS cannot be reached \(DescribeKey\): /);
  });

  it('a read never shows the access key or the secret key', async () => {
    for (const name of ['rsa-2048', 'wrong-secret', 'denied', 'unknown-key']) {
      const r = await ok('GET', `sys/managed-keys/awskms/${name}`);
      expect(r.body.data).toMatchObject({ access_key: 'redacted', secret_key: 'redacted', type: 'awskms', endpoint: ENDPOINT, region: REGION });
      expect(r.text).not.toContain(ADMIN.accessKeyId);
      noCredentials(r);
    }
  });
});

/** ECDSA DER SEQUENCE{r, s} as the r‖s WebCrypto verifies. */
function derToP1363(sig: Uint8Array, size: number): Uint8Array {
  const v = AsnConvert.parse(sig, ECDSASigValue);
  const out = new Uint8Array(size * 2);
  [new Uint8Array(v.r), new Uint8Array(v.s)].forEach((n, i) => {
    let start = 0;
    while (start < n.length - 1 && n[start] === 0) start++;
    out.set(n.subarray(start), i * size + size - (n.length - start));
  });
  return out;
}

/** The signature bytes of "vault:v<N>:<base64>". */
const sigBytes = (sig: string) => bytes(sig.split(':')[2]);

describe('transit on KMS keys', () => {
  const input = b64(utf8('message signed at KMS'));
  beforeAll(async () => {
    await ok('POST', 'sys/mounts/transit', { type: 'transit' });
    await create('tr-ec', { key_type: 'ECDSA', curve: 'P384', kms_key: 'alias/coffer/tr-ec', allow_generate_key: true });
    await create('tr-rsa', { key_type: 'RSA', key_bits: '2048', kms_key: 'alias/coffer/tr-rsa', allow_generate_key: true });
    await create('tr-enc', { key_type: 'RSA', key_bits: '3072', kms_key: 'alias/coffer/tr-enc', allow_generate_key: true, usages: 'encrypt,decrypt' });
    await ok('POST', 'sys/mounts/transit/tune', { allowed_managed_keys: ['tr-ec', 'tr-rsa', 'tr-enc'] });
  }, 60_000);

  const transitKey = async (name: string, managed: string) => {
    const r = await call('POST', `transit/keys/${name}`, { type: 'managed_key', managed_key_name: managed });
    expect(r.status, r.text).toBeLessThan(300);
    return (await ok('GET', `transit/keys/${name}`)).body.data.keys['1'].public_key as string;
  };

  it('ECDSA P-384: the transit key is the KMS key; its signatures verify with WebCrypto', async () => {
    const pem = await transitKey('ec', 'tr-ec');
    const kmsKey = await keyOf('alias/coffer/tr-ec');
    expect(kmsKey).toMatchObject({ KeySpec: 'ECC_NIST_P384', KeyUsage: 'SIGN_VERIFY' });
    expect(b64(der(pem))).toBe(kmsKey!.PublicKey);
    const key = await crypto.subtle.importKey('spki', der(pem), { name: 'ECDSA', namedCurve: 'P-384' }, false, ['verify']);
    const sig = (await ok('POST', 'transit/sign/ec', { input, hash_algorithm: 'sha2-384' })).body.data.signature as string;
    expect(sig).toMatch(/^vault:v1:/);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-384' }, key, derToP1363(sigBytes(sig), 48), bytes(input))).toBe(true);
    expect((await ok('POST', 'transit/verify/ec', { input, signature: sig, hash_algorithm: 'sha2-384' })).body.data.valid).toBe(true);
    // The default hash (sha2-256) is not one KMS signs with on P-384.
    const r = await call('POST', 'transit/sign/ec', { input });
    expect(r.status).toBe(400);
    expect(r.text).toContain('AWS KMS signs with a ECC_NIST_P384 key only sha2-384 digests');
  });

  it('RSA 2048: PKCS#1 v1.5 and PSS (salt as long as the hash) verify with WebCrypto; other PSS salts are refused', async () => {
    const pem = await transitKey('rsa', 'tr-rsa');
    expect(b64(der(pem))).toBe((await keyOf('alias/coffer/tr-rsa'))!.PublicKey);
    const pkcs1 = await crypto.subtle.importKey('spki', der(pem), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' }, false, ['verify']);
    const s1 = (await ok('POST', 'transit/sign/rsa', { input, hash_algorithm: 'sha2-512', signature_algorithm: 'pkcs1v15' })).body.data.signature as string;
    expect(await crypto.subtle.verify('RSASSA-PKCS1-v1_5', pkcs1, sigBytes(s1), bytes(input))).toBe(true);
    const pss = await crypto.subtle.importKey('spki', der(pem), { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['verify']);
    const s2 = (await ok('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pss', salt_length: 'hash' })).body.data.signature as string;
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, pss, sigBytes(s2), bytes(input))).toBe(true);
    // Transit's default salt for managed keys (auto) is the hash's length too; another one KMS cannot make.
    const s3 = (await ok('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pss' })).body.data.signature as string;
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, pss, sigBytes(s3), bytes(input))).toBe(true);
    const other = await call('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pss', salt_length: '20' });
    expect(other.status).toBe(400);
    expect(other.body.errors).toEqual(['AWS KMS makes RSA-PSS signatures only with a salt as long as the hash (32 bytes for sha2-256), not 20 bytes (transit: salt_length=hash)']);
  });

  it('RSA 3072 for encryption: generated as ENCRYPT_DECRYPT; RSA-OAEP round trips, and decrypts what WebCrypto encrypted', async () => {
    const pem = await transitKey('enc', 'tr-enc');
    expect(await keyOf('alias/coffer/tr-enc')).toMatchObject({ KeySpec: 'RSA_3072', KeyUsage: 'ENCRYPT_DECRYPT' });
    const plaintext = b64(utf8('a secret for KMS'));
    const from = await mark();
    const ct = (await ok('POST', 'transit/encrypt/enc', { plaintext })).body.data.ciphertext as string;
    expect((await ok('POST', 'transit/decrypt/enc', { ciphertext: ct })).body.data.plaintext).toBe(plaintext);
    expect((await callsSince(from)).filter((x) => x.operation === 'Encrypt' || x.operation === 'Decrypt').map((x) => [x.operation, x.params.EncryptionAlgorithm])).toEqual([
      ['Encrypt', 'RSAES_OAEP_SHA_1'],
      ['Decrypt', 'RSAES_OAEP_SHA_1'],
    ]);
    const key = await crypto.subtle.importKey('spki', der(pem), { name: 'RSA-OAEP', hash: 'SHA-1' }, false, ['encrypt']);
    const local = new Uint8Array(await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, key, utf8('made outside')));
    expect((await ok('POST', 'transit/decrypt/enc', { ciphertext: `vault:v1:${b64(local)}` })).body.data.plaintext).toBe(b64(utf8('made outside')));
    // Tampered: KMS cannot decrypt it (InvalidCiphertextException).
    local[10] ^= 1;
    const bad = await call('POST', 'transit/decrypt/enc', { ciphertext: `vault:v1:${b64(local)}` });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('InvalidCiphertextException');
  });
});

describe('PKI on KMS keys', () => {
  const cert = (pem: string) => new x509.X509Certificate(pem);
  const spkiOf = (pem: string) => b64(cert(pem).publicKey.rawData);
  const selfSigned = (pem: string) => cert(pem).verify({ publicKey: cert(pem).publicKey, signatureOnly: true });

  beforeAll(async () => {
    await create('pki-ec', { key_type: 'ECDSA', curve: 'P521', kms_key: 'alias/coffer/pki-ec', allow_generate_key: true, any_mount: true });
    await create('pki-rsa', { key_type: 'RSA', key_bits: '3072', kms_key: 'alias/coffer/pki-rsa', allow_generate_key: true, any_mount: true });
    await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
  }, 60_000);

  it('root/generate/kms with ECDSA P-521: the root holds the KMS key, and its self-signature (SHA-512) verifies', async () => {
    const r = await ok('POST', 'pki/root/generate/kms', { managed_key_name: 'pki-ec', common_name: 'KMS Root EC', ttl: '8760h', issuer_name: 'kms-ec' });
    const pem = r.body.data.certificate as string;
    expect(r.text).not.toContain('PRIVATE KEY');
    expect(spkiOf(pem)).toBe((await keyOf('alias/coffer/pki-ec'))!.PublicKey);
    expect(cert(pem).signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-512' } });
    expect(await selfSigned(pem)).toBe(true);
    expect(cert(pem).subject).toBe('CN=KMS Root EC');
  });

  it('root/generate/kms with RSA 3072, PKCS#1 v1.5 and PSS: the self-signatures verify', async () => {
    const from = await mark();
    const plain = (await ok('POST', 'pki/root/generate/kms', { managed_key_name: 'pki-rsa', common_name: 'KMS Root RSA', issuer_name: 'kms-rsa' })).body.data.certificate as string;
    expect(spkiOf(plain)).toBe((await keyOf('alias/coffer/pki-rsa'))!.PublicKey);
    expect(cert(plain).signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    expect(await selfSigned(plain)).toBe(true);
    const pss = (await ok('POST', 'pki/root/generate/kms', { managed_key_name: 'pki-rsa', common_name: 'KMS Root PSS', issuer_name: 'kms-pss', use_pss: true, signature_bits: 384 })).body.data
      .certificate as string;
    expect(cert(pss).signatureAlgorithm).toMatchObject({ name: 'RSA-PSS', hash: { name: 'SHA-384' } });
    expect(await selfSigned(pss)).toBe(true);
    expect((await callsSince(from)).filter((x) => x.operation === 'Sign').map((x) => x.params.SigningAlgorithm)).toEqual(['RSASSA_PKCS1_V1_5_SHA_256', 'RSASSA_PSS_SHA_384']);
  });
});
