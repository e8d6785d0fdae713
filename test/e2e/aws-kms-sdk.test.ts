// AWS KMS managed keys checked against the official SDK: Coffer (the launcher, `npm start`) and
// @aws-sdk/client-kms share one emulated account (test/emulators/aws-kms/), each with an access
// key of its own, so the emulator's SigV4 checks (made with @smithy/signature-v4) are exercised by
// the SDK's real requests as well as by Coffer's (aws4fetch). The SDK must find the key Coffer
// generated (by its alias, with the same public key) and accept signatures Coffer made (transit
// ECDSA, PKCS#1 v1.5 and PSS; a PKI root's self-signature over its TBS) with Verify at KMS
// (MessageType DIGEST) and with node:crypto locally; Coffer must use keys the SDK created and
// aliased (RSA 3072 under a PKI root, ECDSA P-384 through transit), and refuse one the SDK disabled.
// The emulator refuses the SDK too when its secret, its access key, its clock or the body is wrong.
import { createHash, createPublicKey, verify as nodeVerify, constants } from 'node:crypto';
import {
  CreateAliasCommand,
  CreateKeyCommand,
  DescribeKeyCommand,
  DisableKeyCommand,
  EnableKeyCommand,
  GetPublicKeyCommand,
  KMSClient,
  KMSInvalidSignatureException,
  ListAliasesCommand,
  VerifyCommand,
  type SigningAlgorithmSpec,
} from '@aws-sdk/client-kms';
import { AwsClient } from 'aws4fetch';
import * as asn1js from 'asn1js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kmsEmulator } from '../emulators/aws-kms/client';
import { startKmsEmulator, type KmsEmulator } from '../emulators/aws-kms/server';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForAwsKms00000000';
const run = Math.random().toString(36).slice(2, 8);
const REGION = 'eu-west-3';
const COFFER = { accessKeyId: 'AKIACOFFERE2EKMS0001', secretAccessKey: `coffer/${run}/E2e+Kms+Secret000000000001` };
const SDK = { accessKeyId: 'AKIASDKE2EKMS0000001', secretAccessKey: `sdk/${run}/E2e+Kms+Secret0000000000000002` };

const pemDer = (pem: string) => Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
const sha = (bits: 256 | 384 | 512, data: Uint8Array | string) => createHash(`sha${bits}`).update(data).digest();
/** The signature bytes of transit's "vault:v<N>:<base64>". */
const sigOf = (sig: string) => Buffer.from(sig.split(':')[2], 'base64');

/** A certificate's TBS bytes, signature and SubjectPublicKeyInfo, read with asn1js. */
function certParts(pem: string): { tbs: Buffer; signature: Buffer; spki: Buffer } {
  const der = pemDer(pem);
  const parsed = asn1js.fromBER(new Uint8Array(der));
  expect(parsed.offset).toBe(der.length);
  const [tbs, , signature] = (parsed.result as asn1js.Sequence).valueBlock.value;
  return {
    tbs: Buffer.from(tbs.valueBeforeDecodeView),
    signature: Buffer.from((signature as asn1js.BitString).valueBlock.valueHexView),
    spki: Buffer.from(((tbs as asn1js.Sequence).valueBlock.value[6] as asn1js.Sequence).valueBeforeDecodeView),
  };
}

describe('AWS KMS: Coffer and the official SDK on one account', () => {
  let emulator: KmsEmulator;
  let server: Server | undefined;
  let kms: KMSClient;
  const ctl = () => kmsEmulator(emulator.base);

  /** A Coffer API call as root: the answer, whatever its status. */
  async function request(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; data: Record<string, any> }> {
    const res = await fetch(`${server!.url}/v1/${path}`, {
      method,
      headers: { 'X-Vault-Token': ROOT_TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, data: text ? (JSON.parse(text).data ?? {}) : {} };
  }
  /** The same, throwing unless 2xx. */
  async function coffer(method: string, path: string, body?: unknown) {
    const r = await request(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r;
  }
  const managedKey = (name: string, fields: Record<string, unknown>) =>
    coffer('POST', `sys/managed-keys/awskms/${name}`, {
      access_key: COFFER.accessKeyId,
      secret_key: COFFER.secretAccessKey,
      region: REGION,
      endpoint: emulator.base,
      any_mount: true,
      ...fields,
    });
  const transitPem = async (name: string) => (await coffer('GET', `transit/keys/${name}`)).data.keys['1'].public_key as string;
  const publicKeyOf = async (keyId: string) => Buffer.from((await kms.send(new GetPublicKeyCommand({ KeyId: keyId }))).PublicKey!);
  const verifyAtKms = async (keyId: string, digest: Buffer, signature: Buffer, SigningAlgorithm: SigningAlgorithmSpec) =>
    (await kms.send(new VerifyCommand({ KeyId: keyId, Message: digest, MessageType: 'DIGEST', Signature: signature, SigningAlgorithm }))).SignatureValid;

  beforeAll(async () => {
    emulator = await startKmsEmulator();
    await ctl().reset({ credentials: [{ ...COFFER, userName: 'coffer' }, { ...SDK, userName: 'sdk' }] });
    kms = new KMSClient({ endpoint: emulator.base, region: REGION, credentials: SDK, maxAttempts: 1 });
    server = await startLauncher(tempDir('coffer-e2e-awskms-'), { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
    await coffer('POST', 'sys/mounts/transit', { type: 'transit' });
    await coffer('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
  });

  afterAll(async () => {
    await server?.stop('SIGTERM');
    await emulator?.close();
  });

  it('Coffer generates keys (CreateKey + CreateAlias); the SDK finds them by alias, with the public keys transit shows', async () => {
    await managedKey('coffer-ec', { key_type: 'ECDSA', curve: 'P256', kms_key: 'alias/coffer/e2e-ec', allow_generate_key: true });
    await managedKey('coffer-rsa', { key_type: 'RSA', key_bits: '2048', kms_key: 'alias/coffer/e2e-rsa', allow_generate_key: true });
    expect((await coffer('POST', 'sys/managed-keys/awskms/coffer-ec/test/sign')).status).toBe(204);
    expect((await coffer('POST', 'sys/managed-keys/awskms/coffer-rsa/test/sign', { use_pss: true })).status).toBe(204);
    await coffer('POST', 'transit/keys/coffer-ec', { type: 'managed_key', managed_key_name: 'coffer-ec' });
    await coffer('POST', 'transit/keys/coffer-rsa', { type: 'managed_key', managed_key_name: 'coffer-rsa' });

    const aliases = (await kms.send(new ListAliasesCommand({}))).Aliases ?? [];
    expect(aliases.map((a) => a.AliasName).sort()).toEqual(['alias/coffer/e2e-ec', 'alias/coffer/e2e-rsa']);
    for (const [alias, spec, name] of [
      ['alias/coffer/e2e-ec', 'ECC_NIST_P256', 'coffer-ec'],
      ['alias/coffer/e2e-rsa', 'RSA_2048', 'coffer-rsa'],
    ] as const) {
      const meta = (await kms.send(new DescribeKeyCommand({ KeyId: alias }))).KeyMetadata!;
      expect(meta).toMatchObject({ KeySpec: spec, KeyUsage: 'SIGN_VERIFY', KeyState: 'Enabled', Enabled: true, KeyManager: 'CUSTOMER', Origin: 'AWS_KMS' });
      expect(meta.Arn).toBe(`arn:aws:kms:${REGION}:111122223333:key/${meta.KeyId}`);
      expect(meta.Description).toMatch(new RegExp(`^Coffer managed key "${name}" \\(`));
      expect(meta.CreationDate).toBeInstanceOf(Date);
      expect(aliases.find((a) => a.AliasName === alias)!.TargetKeyId).toBe(meta.KeyId);
      const pub = await kms.send(new GetPublicKeyCommand({ KeyId: alias }));
      expect(pub.KeyId).toBe(meta.Arn);
      expect(Buffer.from(pub.PublicKey!).equals(pemDer(await transitPem(name)))).toBe(true);
    }
  });

  it("the SDK accepts Coffer's transit signatures (ECDSA, PKCS#1 v1.5, PSS) at KMS and locally; a tampered one is KMSInvalidSignatureException", async () => {
    const input = Buffer.from('signed by coffer through aws kms');
    const sign = async (key: string, body: Record<string, unknown>) => sigOf((await coffer('POST', `transit/sign/${key}`, { input: input.toString('base64'), ...body })).data.signature);

    const ecSig = await sign('coffer-ec', {});
    expect(await verifyAtKms('alias/coffer/e2e-ec', sha(256, input), ecSig, 'ECDSA_SHA_256')).toBe(true);
    const ecKey = createPublicKey({ key: await publicKeyOf('alias/coffer/e2e-ec'), format: 'der', type: 'spki' });
    expect(nodeVerify('sha256', input, ecKey, ecSig)).toBe(true);

    const rsaKey = createPublicKey({ key: await publicKeyOf('alias/coffer/e2e-rsa'), format: 'der', type: 'spki' });
    const pkcs1 = await sign('coffer-rsa', { signature_algorithm: 'pkcs1v15', hash_algorithm: 'sha2-384' });
    expect(await verifyAtKms('alias/coffer/e2e-rsa', sha(384, input), pkcs1, 'RSASSA_PKCS1_V1_5_SHA_384')).toBe(true);
    expect(nodeVerify('sha384', input, rsaKey, pkcs1)).toBe(true);
    const pss = await sign('coffer-rsa', { signature_algorithm: 'pss', salt_length: 'hash' });
    expect(await verifyAtKms('alias/coffer/e2e-rsa', sha(256, input), pss, 'RSASSA_PSS_SHA_256')).toBe(true);
    expect(nodeVerify('sha256', input, { key: rsaKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, pss)).toBe(true);
    // The RAW message type too: KMS hashes the input itself.
    expect((await kms.send(new VerifyCommand({ KeyId: 'alias/coffer/e2e-rsa', Message: input, MessageType: 'RAW', Signature: pss, SigningAlgorithm: 'RSASSA_PSS_SHA_256' }))).SignatureValid).toBe(true);

    const tampered = Buffer.from(pss);
    tampered[5] ^= 1;
    await expect(verifyAtKms('alias/coffer/e2e-rsa', sha(256, input), tampered, 'RSASSA_PSS_SHA_256')).rejects.toBeInstanceOf(KMSInvalidSignatureException);
  });

  it("the SDK verifies the self-signature of a PKI root on Coffer's key over its TBS", async () => {
    const root = await coffer('POST', 'pki/root/generate/kms', { managed_key_name: 'coffer-ec', common_name: 'Coffer KMS Root', issuer_name: 'coffer-ec-root' });
    const { tbs, signature, spki } = certParts(root.data.certificate);
    expect(spki.equals(await publicKeyOf('alias/coffer/e2e-ec'))).toBe(true);
    expect(await verifyAtKms('alias/coffer/e2e-ec', sha(256, tbs), signature, 'ECDSA_SHA_256')).toBe(true);
  });

  it('Coffer uses keys the SDK created and aliased: RSA 3072 under a PKI root, ECDSA P-384 through transit', async () => {
    const rsa = (await kms.send(new CreateKeyCommand({ KeySpec: 'RSA_3072', KeyUsage: 'SIGN_VERIFY', Description: 'made by the SDK' }))).KeyMetadata!;
    await kms.send(new CreateAliasCommand({ AliasName: 'alias/sdk/rsa', TargetKeyId: rsa.KeyId }));
    const ec = (await kms.send(new CreateKeyCommand({ KeySpec: 'ECC_NIST_P384', KeyUsage: 'SIGN_VERIFY' }))).KeyMetadata!;
    await kms.send(new CreateAliasCommand({ AliasName: 'alias/sdk/ec', TargetKeyId: ec.Arn }));

    // By alias and by ARN, without allow_generate_key: nothing new is created.
    await managedKey('sdk-rsa', { key_type: 'RSA', key_bits: '3072', kms_key: 'alias/sdk/rsa' });
    await managedKey('sdk-ec', { key_type: 'ECDSA', curve: 'P384', kms_key: ec.Arn });
    expect((await coffer('POST', 'sys/managed-keys/awskms/sdk-rsa/test/sign', { hash_algorithm: 'sha2-512' })).status).toBe(204);
    expect((await coffer('POST', 'sys/managed-keys/awskms/sdk-ec/test/sign', { hash_algorithm: 'sha2-384' })).status).toBe(204);

    const root = await coffer('POST', 'pki/root/generate/kms', { managed_key_name: 'sdk-rsa', common_name: 'SDK KMS Root', issuer_name: 'sdk-rsa-root' });
    const { tbs, signature, spki } = certParts(root.data.certificate);
    expect(spki.equals(await publicKeyOf(rsa.KeyId!))).toBe(true);
    expect(await verifyAtKms(rsa.Arn!, sha(256, tbs), signature, 'RSASSA_PKCS1_V1_5_SHA_256')).toBe(true);

    await coffer('POST', 'transit/keys/sdk-ec', { type: 'managed_key', managed_key_name: 'sdk-ec' });
    expect(pemDer(await transitPem('sdk-ec')).equals(await publicKeyOf('alias/sdk/ec'))).toBe(true);
    const input = Buffer.from('transit on a key the sdk made');
    const sig = sigOf((await coffer('POST', 'transit/sign/sdk-ec', { input: input.toString('base64'), hash_algorithm: 'sha2-384' })).data.signature);
    expect(await verifyAtKms('alias/sdk/ec', sha(384, input), sig, 'ECDSA_SHA_384')).toBe(true);

    expect((await ctl().state()).keys.map((k) => k.KeySpec).sort()).toEqual(['ECC_NIST_P256', 'ECC_NIST_P384', 'RSA_2048', 'RSA_3072']);
  });

  it('a key the SDK disables is refused by Coffer (400 saying so) until the SDK enables it again', async () => {
    // DisableKey and EnableKey take a key id or ARN (not an alias), as in KMS.
    const id = (await kms.send(new DescribeKeyCommand({ KeyId: 'alias/sdk/ec' }))).KeyMetadata!.KeyId!;
    await kms.send(new DisableKeyCommand({ KeyId: id }));
    const refused = await request('POST', 'sys/managed-keys/awskms/sdk-ec/test/sign', { hash_algorithm: 'sha2-384' });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/AWS KMS key arn:aws:kms:eu-west-3:111122223333:key\/[0-9a-f-]{36} is Disabled/);
    await kms.send(new EnableKeyCommand({ KeyId: id }));
    expect((await request('POST', 'sys/managed-keys/awskms/sdk-ec/test/sign', { hash_algorithm: 'sha2-384' })).status).toBe(204);
  });

  it('both clients authenticated with SigV4 as their own access key; a wrong secret is refused to the SDK too', async () => {
    const calls = await ctl().calls();
    const by = (id: string) => calls.filter((x) => x.accessKeyId === id);
    expect(by(COFFER.accessKeyId).filter((x) => x.status === 200).map((x) => x.operation)).toEqual(expect.arrayContaining(['CreateKey', 'CreateAlias', 'DescribeKey', 'GetPublicKey', 'Sign', 'Verify']));
    expect(by(SDK.accessKeyId).filter((x) => x.status === 200).map((x) => x.operation)).toEqual(expect.arrayContaining(['ListAliases', 'DescribeKey', 'GetPublicKey', 'Verify', 'CreateKey', 'CreateAlias', 'DisableKey', 'EnableKey']));
    expect(calls.filter((x) => x.code && ['InvalidSignatureException', 'UnrecognizedClientException', 'IncompleteSignatureException'].includes(x.code))).toEqual([]);
    expect(server!.output()).not.toContain(COFFER.secretAccessKey);

    const wrong = new KMSClient({ endpoint: emulator.base, region: REGION, credentials: { accessKeyId: SDK.accessKeyId, secretAccessKey: `${SDK.secretAccessKey}x` }, maxAttempts: 1 });
    await expect(wrong.send(new ListAliasesCommand({}))).rejects.toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 400 } });
    const unknown = new KMSClient({ endpoint: emulator.base, region: REGION, credentials: { accessKeyId: 'AKIANOTKNOWN00000001', secretAccessKey: SDK.secretAccessKey }, maxAttempts: 1 });
    await expect(unknown.send(new ListAliasesCommand({}))).rejects.toMatchObject({ name: 'UnrecognizedClientException', $metadata: { httpStatusCode: 400 } });
    // A clock 20 minutes off: the SDK's request is refused as expired.
    const late = new KMSClient({ endpoint: emulator.base, region: REGION, credentials: SDK, maxAttempts: 1, systemClockOffset: -20 * 60_000 });
    await expect(late.send(new ListAliasesCommand({}))).rejects.toMatchObject({ name: 'InvalidSignatureException', message: expect.stringMatching(/^Signature expired: /) });
  });

  it('the signature covers the JSON body: a signed request replayed with another body is refused', async () => {
    const signer = new AwsClient({ ...SDK, service: 'kms', region: REGION, retries: 0 });
    const signed = await signer.sign(`${emulator.base}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'TrentService.ListAliases' },
      body: '{"Limit":1}',
    });
    const headers = Object.fromEntries(signed.headers);
    const send = (body: string) => fetch(signed.url, { method: 'POST', headers, body });
    expect((await send('{"Limit":1}')).status).toBe(200);
    const changed = await send('{"Limit":2}');
    expect(changed.status).toBe(400);
    expect(await changed.json()).toEqual({ __type: 'com.amazon.coral.service#InvalidSignatureException', message: expect.stringMatching(/^The request signature we calculated does not match/) });
  });
});
