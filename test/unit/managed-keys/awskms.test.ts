// The cloudakms backend (src/managed-keys/awskms.ts) against a fake KMS endpoint: the requests'
// wire shape (URL, X-Amz-Target, JSON body, a SigV4 Authorization for service kms and the key's
// region), the paths the emulator cannot easily provoke (an alias taken by a concurrent generate,
// a replaced key, odd answers), and how KMS's error documents become ManagedKeyErrors without the
// credentials. The real protocol is exercised by test/integration/sys/managed-keys-awskms.test.ts.
import { describe, expect, it } from 'vitest';
import { toBase64 } from '../../../src/crypto/encoding';
import { awsKmsBackend } from '../../../src/managed-keys/awskms';
import { buildEntry } from '../../../src/managed-keys/entry';
import { ManagedKeyError, ManagedKeyMissing, type BackendDeps, type ManagedKeyEntry } from '../../../src/managed-keys/types';

const ACCESS = 'AKIAUNITTEST00000001';
const SECRET = 'unit/Test+Secret/Key00000000000000000001';
const ARN = 'arn:aws:kms:eu-west-1:111122223333:key/1b2c3d4e-0000-4000-8000-000000000001';

interface Call {
  url: string;
  target: string | null;
  contentType: string | null;
  authorization: string;
  body: Record<string, unknown>;
}

/** A fake KMS: records each call and answers with `reply` (by operation). */
function fakeKms(reply: (op: string, body: Record<string, unknown>, n: number) => Response | Promise<Response>) {
  const calls: Call[] = [];
  const fetch: BackendDeps['fetch'] = async (input, init) => {
    const req = new Request(input, init);
    const text = await req.text();
    const call: Call = {
      url: req.url,
      target: req.headers.get('x-amz-target'),
      contentType: req.headers.get('content-type'),
      authorization: req.headers.get('authorization') ?? '',
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
    calls.push(call);
    const op = (call.target ?? '').replace('TrentService.', '');
    return await reply(op, call.body, calls.filter((x) => x.target === call.target).length);
  };
  return { calls, deps: { fetch } satisfies BackendDeps, ops: () => calls.map((x) => (x.target ?? '').replace('TrentService.', '')) };
}
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/x-amz-json-1.1', ...headers } });
const kmsError = (code: string, message: string, status = 400) => json(status, { __type: code, message });

const entry = (raw: Record<string, unknown>): ManagedKeyEntry =>
  buildEntry({ type: 'cloudakms', name: 'k', raw: { access_key: ACCESS, secret_key: SECRET, region: 'eu-west-1', ...raw }, previous: null, newId: () => '00000000-0000-4000-8000-000000000000' });
const ecEntry = (raw: Record<string, unknown> = {}) => entry({ key_type: 'ECDSA', curve: 'P256', kms_key: 'alias/k', allow_generate_key: true, allow_replace_key: true, ...raw });

let spkiCache: string | undefined;
async function p256Spki(): Promise<string> {
  if (!spkiCache) {
    const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    spkiCache = toBase64(new Uint8Array((await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer));
  }
  return spkiCache;
}
const meta = (extra: Record<string, unknown> = {}) => ({ KeyMetadata: { KeyId: ARN.split('/')[1], Arn: ARN, KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', KeyState: 'Enabled', Enabled: true, ...extra } });
const publicKeyAnswer = async (extra: Record<string, unknown> = {}) => ({ KeyId: ARN, PublicKey: await p256Spki(), KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', SigningAlgorithms: ['ECDSA_SHA_256'], ...extra });

async function failure(p: Promise<unknown>): Promise<ManagedKeyError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ManagedKeyError);
  return e as ManagedKeyError;
}

describe('requests', () => {
  it('JSON 1.1 to the regional endpoint, signed with SigV4 for kms in the key\'s region; the public key as PEM', async () => {
    const kms = fakeKms(async (op) => (op === 'DescribeKey' ? json(200, meta()) : json(200, await publicKeyAnswer())));
    const pub = await awsKmsBackend(ecEntry(), kms.deps).publicKey();
    expect(pub).toEqual({ pem: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/), keyType: 'ec', curve: 'P-256' });
    expect(kms.calls.map((c) => [c.url, c.target, c.contentType, c.body])).toEqual([
      ['https://kms.eu-west-1.amazonaws.com/', 'TrentService.DescribeKey', 'application/x-amz-json-1.1', { KeyId: 'alias/k' }],
      ['https://kms.eu-west-1.amazonaws.com/', 'TrentService.GetPublicKey', 'application/x-amz-json-1.1', { KeyId: ARN }],
    ]);
    expect(kms.calls[0].authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS}/\\d{8}/eu-west-1/kms/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-target[a-z0-9;-]*, Signature=[0-9a-f]{64}$`));
  });

  it('the China regions and a configured endpoint', async () => {
    const kms = fakeKms(() => kmsError('NotFoundException', 'no'));
    await failure(awsKmsBackend(ecEntry({ region: 'cn-north-1' }), kms.deps).publicKey());
    await failure(awsKmsBackend(ecEntry({ endpoint: 'http://127.0.0.1:4566/t/x' }), kms.deps).publicKey());
    expect(kms.calls.map((c) => c.url)).toEqual(['https://kms.cn-north-1.amazonaws.com.cn/', 'http://127.0.0.1:4566/t/x']);
  });

  it('sign: MessageType DIGEST with the algorithm of the key and hash; verify: KMSInvalidSignatureException is false', async () => {
    const kms = fakeKms((op) => (op === 'Sign' ? json(200, { KeyId: ARN, Signature: toBase64(new Uint8Array([1, 2, 3])), SigningAlgorithm: 'RSASSA_PSS_SHA_384' }) : kmsError('KMSInvalidSignatureException', '')));
    const rsa = awsKmsBackend(entry({ key_type: 'RSA', key_bits: '3072', kms_key: ARN }), kms.deps);
    const digest = new Uint8Array(48).fill(7);
    expect(await rsa.sign(digest, { hash: 'sha2-384', pss: true, saltLength: 48 })).toEqual(new Uint8Array([1, 2, 3]));
    expect(await rsa.verify(digest, new Uint8Array([9]), { hash: 'sha2-384' })).toBe(false);
    expect(kms.calls.map((c) => c.body)).toEqual([
      { KeyId: ARN, Message: toBase64(digest), MessageType: 'DIGEST', SigningAlgorithm: 'RSASSA_PSS_SHA_384' },
      { KeyId: ARN, Message: toBase64(digest), MessageType: 'DIGEST', Signature: 'CQ==', SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_384' },
    ]);
  });

  it('refuses what KMS cannot do, without asking it', async () => {
    const kms = fakeKms(() => json(500, {}));
    const rsa = awsKmsBackend(entry({ key_type: 'RSA', key_bits: '2048', kms_key: 'alias/r' }), kms.deps);
    const ec = awsKmsBackend(ecEntry(), kms.deps);
    const d = new Uint8Array(32);
    expect((await failure(rsa.sign(d, { hash: 'sha2-256', pss: true, saltLength: 222 }))).message).toMatch(/only with a salt as long as the hash \(32 bytes for sha2-256\), not 222 bytes/);
    expect((await failure(rsa.sign(d, { hash: 'sha3-256' }))).message).toMatch(/^AWS KMS cannot sign sha3-256 digests/);
    expect((await failure(rsa.encrypt(d, { hash: 'sha2-512' }))).message).toMatch(/RSA-OAEP over sha1 or sha2-256 only/);
    expect((await failure(ec.encrypt(d, { hash: 'sha1' }))).message).toBe('AWS KMS encrypts only with RSA keys: this key is ECDSA');
    expect((await failure(ec.sign(new Uint8Array(48), { hash: 'sha2-384' }))).message).toMatch(/only sha2-256 digests \(ECDSA_SHA_256\), not sha2-384/);
    expect(kms.calls).toHaveLength(0);
  });
});

describe('generate', () => {
  it('a key id or ARN cannot be created: 400 explaining that allow_generate_key needs an alias', async () => {
    const kms = fakeKms(() => json(200, {}));
    const e = await failure(awsKmsBackend(entry({ key_type: 'RSA', key_bits: '2048', kms_key: ARN }), kms.deps).generate());
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^AWS KMS assigns key ids itself: kms_key "arn:aws:kms:.*" cannot be created; to let allow_generate_key create the key, set kms_key to an alias/);
    expect(kms.calls).toHaveLength(0);
  });

  it('a missing alias: CreateKey, then CreateAlias; the new key\'s public key', async () => {
    const kms = fakeKms(async (op) => {
      if (op === 'DescribeKey') return kmsError('NotFoundException', "Alias 'alias/k' is not found.");
      if (op === 'CreateKey') return json(200, meta());
      if (op === 'CreateAlias') return new Response('', { status: 200 });
      return json(200, await publicKeyAnswer());
    });
    const pub = await awsKmsBackend(ecEntry({ usages: 'sign' }), kms.deps).generate();
    expect(pub.curve).toBe('P-256');
    expect(kms.ops()).toEqual(['DescribeKey', 'CreateKey', 'CreateAlias', 'GetPublicKey']);
    expect(kms.calls[1].body).toEqual({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', Description: 'Coffer managed key "k" (00000000-0000-4000-8000-000000000000)' });
    expect(kms.calls[2].body).toEqual({ AliasName: 'alias/k', TargetKeyId: meta().KeyMetadata.KeyId });
  });

  it('over an existing key (a replacement): the alias is moved with UpdateAlias; RSA for encryption only is ENCRYPT_DECRYPT', async () => {
    const kms = fakeKms(async (op) => {
      if (op === 'DescribeKey' || op === 'CreateKey') return json(200, meta({ KeySpec: 'RSA_2048', KeyUsage: 'ENCRYPT_DECRYPT' }));
      if (op === 'UpdateAlias') return new Response('', { status: 200 });
      return kmsError('KMSInternalException', 'stop here', 500);
    });
    const backend = awsKmsBackend(entry({ key_type: 'RSA', key_bits: '2048', kms_key: 'alias/r', usages: 'encrypt,decrypt', allow_generate_key: true }), kms.deps);
    expect((await failure(backend.generate())).status).toBe(502);
    expect(kms.ops().slice(0, 3)).toEqual(['DescribeKey', 'CreateKey', 'UpdateAlias']);
    expect(kms.calls[1].body).toMatchObject({ KeySpec: 'RSA_2048', KeyUsage: 'ENCRYPT_DECRYPT' });
  });

  it('an alias a concurrent generate took first: our key is scheduled for deletion, and the winner\'s is used', async () => {
    let described = 0;
    const kms = fakeKms(async (op) => {
      if (op === 'DescribeKey') return ++described === 1 ? kmsError('NotFoundException', 'not yet') : json(200, meta());
      if (op === 'CreateKey') return json(200, meta({ KeyId: 'ours', Arn: 'arn:aws:kms:eu-west-1:111122223333:key/ours' }));
      if (op === 'CreateAlias') return kmsError('AlreadyExistsException', 'An alias with the name alias/k already exists');
      if (op === 'ScheduleKeyDeletion') return json(200, { KeyId: 'ours' });
      return json(200, await publicKeyAnswer());
    });
    const pub = await awsKmsBackend(ecEntry(), kms.deps).generate();
    expect(pub.keyType).toBe('ec');
    expect(kms.ops()).toEqual(['DescribeKey', 'CreateKey', 'CreateAlias', 'ScheduleKeyDeletion', 'DescribeKey', 'GetPublicKey']);
    expect(kms.calls[3].body).toEqual({ KeyId: 'ours', PendingWindowInDays: 7 });
    expect(kms.calls[5].body).toEqual({ KeyId: ARN });
  });
});

describe('answers and failures', () => {
  it('NotFoundException is ManagedKeyMissing', async () => {
    const kms = fakeKms(() => kmsError('NotFoundException', "Alias 'arn:aws:kms:eu-west-1:111122223333:alias/k' is not found."));
    const e = await failure(awsKmsBackend(ecEntry(), kms.deps).publicKey());
    expect(e).toBeInstanceOf(ManagedKeyMissing);
    expect(e.message).toBe(`AWS KMS DescribeKey failed with NotFoundException: Alias 'arn:aws:kms:eu-west-1:111122223333:alias/k' is not found. (kms_key "alias/k" in eu-west-1)`);
  });

  it("codes in the service namespace or only in X-Amzn-ErrorType; AWS's text scrubbed of the credentials", async () => {
    const answers = [
      json(400, { __type: 'com.amazon.coral.service#UnrecognizedClientException', message: `The security token included in the request is invalid: ${ACCESS} ${SECRET}` }),
      new Response('<html>denied</html>', { status: 403, headers: { 'x-amzn-errortype': 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/' } }),
      new Response('', { status: 503 }),
    ];
    const kms = fakeKms((_op, _b, n) => answers[n - 1] ?? json(200, {}));
    const backend = awsKmsBackend(ecEntry(), kms.deps);
    const first = await failure(backend.publicKey());
    expect({ status: first.status, message: first.message }).toEqual({
      status: 400,
      message: 'AWS KMS DescribeKey failed with UnrecognizedClientException: The security token included in the request is invalid: [redacted] [redacted] (AWS does not know the access_key)',
    });
    const second = await failure(backend.publicKey());
    expect({ status: second.status, message: second.message }).toEqual({
      status: 400,
      message: "AWS KMS DescribeKey failed with AccessDeniedException (the access key's IAM policy does not allow this KMS operation)",
    });
    // 503 with no document: retried, then a 502 (the fake answers {} afterwards: no KeyMetadata).
    const third = await failure(backend.publicKey());
    expect({ status: third.status, message: third.message }).toEqual({ status: 502, message: 'AWS KMS answered DescribeKey without KeyMetadata' });
    expect(kms.calls).toHaveLength(4);
  });

  it('an answer that is not JSON, or a public key of another kind than its KeySpec: 502', async () => {
    const notJson = fakeKms(() => new Response('<xml/>', { status: 200 }));
    expect(await failure(awsKmsBackend(ecEntry(), notJson.deps).publicKey())).toMatchObject({ status: 502, message: 'AWS KMS answered DescribeKey with something that is not a JSON object' });
    const lying = fakeKms(async (op) => (op === 'DescribeKey' ? json(200, meta({ KeySpec: 'ECC_NIST_P384' })) : json(200, await publicKeyAnswer({ KeySpec: 'ECC_NIST_P384' }))));
    const e = await failure(awsKmsBackend(ecEntry({ curve: 'P384' }), lying.deps).publicKey());
    expect({ status: e.status, message: e.message }).toEqual({ status: 502, message: `AWS KMS answered GetPublicKey for ${ARN} with a ec 256-bit key, not the ECC_NIST_P384 key it describes` });
  });
});
