// node-vault against cloud managed keys — AWS KMS (awskms), Azure Key Vault (azurekeyvault) and
// Google Cloud KMS (gcpckms) — on the suite's emulators (global-setup.ts), each under an account,
// tenant and vault, or project of this file's own. For each cloud, through node-vault's generic
// write/read/list/delete and its mount methods: the key written with emulator credentials (the key
// generated at the cloud by test/sign), read with its secrets redacted, listed; a transit mount
// allowing it, a managed_key transit key, signatures made through node-vault and checked with
// node:crypto against the read's public key (which is the cloud's); a PKI root/generate/kms whose
// certificate verifies with X509Certificate; wrong credentials refused with a 4xx naming the cloud's
// error code and no secret; the key deleted once no mount lists it.
import { constants, createPublicKey, randomUUID, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { kmsEmulator } from '../../emulators/aws-kms/client';
import { azureEmulator } from '../../emulators/azure-keyvault/client';
import { gcpKmsEmulator, type ServiceAccountKeyFile } from '../../emulators/gcp-kms/client';
import { failure, unique, vault } from './client';

const root = vault();
const emulators = inject('cloudKms');
const run = randomUUID().slice(0, 8);
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** The bytes of "vault:v<N>:<base64>". */
const payload = (versioned: string) => Buffer.from(versioned.split(':')[2], 'base64');
type VerifyKey = Parameters<typeof verify>[2];
const spki = (key: KeyObject | string) => (typeof key === 'string' ? createPublicKey(key) : key).export({ type: 'spki', format: 'der' }).toString('base64');

interface Cloud {
  /** The path type, as Vault names it. */
  type: 'awskms' | 'azurekeyvault' | 'gcpckms';
  /** Registers this file's account/tenant/project at the emulator. */
  setup(): Promise<void>;
  /** A key's fields: the emulator's credentials, the key generated when missing. */
  fields(name: string): Record<string, unknown>;
  /** What the read shows (secrets "redacted"). */
  view(name: string): Record<string, unknown>;
  /** The credentials that must never come back. */
  secrets(): string[];
  /** test/sign's fields (a hash and padding the key signs with). */
  testSign: Record<string, unknown>;
  /** The key's public key as the cloud holds it (after test/sign generated it). */
  cloudPublicKey(name: string): Promise<string>;
  /** Transit sign requests and how each signature verifies here. */
  signatures: { body: Record<string, unknown>; check: (key: KeyObject) => VerifyKey; hash: string }[];
  /** root/generate/kms fields beyond the key and the common name, and the certificate's key type. */
  pki: { fields: Record<string, unknown>; keyType: string };
  /** Fields that replace the good credentials by wrong ones, the secrets in them, the cloud's code. */
  wrong(): { fields: Record<string, unknown>; secrets: string[]; code: RegExp };
}

// ---- AWS KMS: a tenant of this file's, named by every key's endpoint.
const awsEndpoint = `${emulators.aws}/t/nv-cloud-${run}`;
const awsAdmin = { accessKeyId: 'AKIANODEVAULTKMS0001', secretAccessKey: `nv/${run}/Kms+Secret000000000000000001` };
const awsWrongSecret = `nv/${run}/Wrong+Secret0000000000000002`;
const awsKms = kmsEmulator(awsEndpoint);
const aws: Cloud = {
  type: 'awskms',
  setup: async () => {
    await awsKms.reset({ credentials: [{ ...awsAdmin, userName: 'node-vault' }] });
  },
  fields: (name) => ({
    access_key: awsAdmin.accessKeyId,
    secret_key: awsAdmin.secretAccessKey,
    region: 'eu-west-1',
    endpoint: awsEndpoint,
    kms_key: `alias/${name}`,
    key_type: 'ECDSA',
    curve: 'P256',
    allow_generate_key: true,
  }),
  view: (name) => ({ access_key: 'redacted', secret_key: 'redacted', region: 'eu-west-1', endpoint: awsEndpoint, kms_key: `alias/${name}`, key_type: 'ECDSA', curve: 'P256' }),
  secrets: () => [awsAdmin.secretAccessKey, awsAdmin.accessKeyId],
  testSign: {},
  cloudPublicKey: async (name) => {
    const key = (await awsKms.state()).keys.find((k) => k.Aliases.includes(`alias/${name}`));
    expect(key).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', KeyState: 'Enabled', Region: 'eu-west-1' });
    return createPublicKey({ key: Buffer.from(key!.PublicKey, 'base64'), format: 'der', type: 'spki' }).export({ type: 'spki', format: 'pem' }).toString();
  },
  signatures: [
    { body: {}, hash: 'sha256', check: (key) => key },
    { body: { marshaling_algorithm: 'jws' }, hash: 'sha256', check: (key) => ({ key, dsaEncoding: 'ieee-p1363' }) },
  ],
  pki: { fields: { ttl: '8760h' }, keyType: 'ec' },
  wrong: () => ({ fields: { secret_key: awsWrongSecret }, secrets: [awsWrongSecret, awsAdmin.secretAccessKey], code: /InvalidSignatureException/ }),
};

// ---- Azure: a tenant, an app registration and a vault of this file's (vault names are global).
const azureTenant = randomUUID();
const azureClient = randomUUID();
const azureSecret = `nv-secret~${run}-3c9e`;
const azureWrongSecret = `nv-wrong~${run}-81f0`;
const azureVault = `nvkv-${run}`;
const azure = azureEmulator(emulators.azure, azureTenant);
const akv: Cloud = {
  type: 'azurekeyvault',
  setup: async () => {
    await azure.register({ clients: [{ client_id: azureClient, client_secret: azureSecret }], vaults: [{ name: azureVault }] });
  },
  fields: (name) => ({
    tenant_id: azureTenant,
    client_id: azureClient,
    client_secret: azureSecret,
    vault_name: azureVault,
    key_name: name,
    key_type: 'RSA-HSM',
    key_bits: '2048',
    allow_generate_key: true,
  }),
  view: (name) => ({ tenant_id: azureTenant, client_id: azureClient, client_secret: 'redacted', vault_name: azureVault, key_name: name, key_type: 'RSA-HSM', key_bits: '2048' }),
  secrets: () => [azureSecret],
  testSign: { hash_algorithm: 'sha2-512' },
  cloudPublicKey: async (name) => {
    const versions = (await azure.state()).vaults.find((v) => v.name === azureVault)!.keys[name.toLowerCase()];
    expect(versions).toEqual([expect.objectContaining({ kty: 'RSA-HSM', key_size: 2048, enabled: true })]);
    return versions[0].public_key;
  },
  signatures: [
    { body: { signature_algorithm: 'pkcs1v15' }, hash: 'sha256', check: (key) => ({ key, padding: constants.RSA_PKCS1_PADDING }) },
    // Key Vault signs PSS with a salt as long as the hash: salt_length=hash, and transit's default for managed keys.
    { body: { signature_algorithm: 'pss', salt_length: 'hash', hash_algorithm: 'sha2-384' }, hash: 'sha384', check: (key) => ({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 48 }) },
    { body: {}, hash: 'sha256', check: (key) => ({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }) },
  ],
  pki: { fields: {}, keyType: 'rsa' },
  wrong: () => ({ fields: { client_secret: azureWrongSecret }, secrets: [azureWrongSecret, azureSecret], code: /AADSTS7000215/ }),
};

// ---- Google Cloud KMS: a project of this file's, its key ring and service account.
const gcpProject = `nv-cloud-${run}`;
const gcp = gcpKmsEmulator(emulators.gcp);
let serviceAccount: ServiceAccountKeyFile;
let otherAccount: ServiceAccountKeyFile;
const gcpckms: Cloud = {
  type: 'gcpckms',
  setup: async () => {
    await gcp.reset(gcpProject);
    serviceAccount = await gcp.serviceAccount({ project: gcpProject, name: 'node-vault' });
    otherAccount = await gcp.serviceAccount({ project: gcpProject, name: 'someone-else' });
    await gcp.keyRing(gcpProject, 'global', 'ring');
  },
  fields: (name) => ({
    credentials: JSON.stringify(serviceAccount),
    project: gcpProject,
    region: 'global',
    key_ring: 'ring',
    crypto_key: name,
    algorithm: 'RSA_SIGN_PSS_2048_SHA256',
    allow_generate_key: true,
  }),
  view: (name) => ({ credentials: 'redacted', project: gcpProject, region: 'global', key_ring: 'ring', crypto_key: name, crypto_key_version: '1', algorithm: 'RSA_SIGN_PSS_2048_SHA256' }),
  secrets: () => [serviceAccount.private_key.split('\n')[1], serviceAccount.private_key_id, 'PRIVATE KEY'],
  // The algorithm signs with PSS only.
  testSign: { use_pss: true },
  cloudPublicKey: async (name) => {
    const ring = (await gcp.state(gcpProject)).keyRings.find((r) => r.name === `projects/${gcpProject}/locations/global/keyRings/ring`)!;
    const key = ring.cryptoKeys.find((k) => k.name.endsWith(`/cryptoKeys/${name}`));
    expect(key).toMatchObject({ purpose: 'ASYMMETRIC_SIGN', algorithm: 'RSA_SIGN_PSS_2048_SHA256', versions: [expect.objectContaining({ state: 'ENABLED' })] });
    return key!.versions[0].publicKeyPem!;
  },
  signatures: [
    // RSA keys sign with PSS by default; a managed key's default salt is the hash's length, Cloud KMS's.
    { body: {}, hash: 'sha256', check: (key) => ({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }) },
  ],
  // The key signs with PSS only: the certificate's signature must be asked as PSS.
  pki: { fields: { use_pss: true }, keyType: 'rsa' },
  // A key file whose private key is not the account's (another account's): Google's invalid_grant.
  wrong: () => ({
    fields: { credentials: JSON.stringify({ ...serviceAccount, private_key: otherAccount.private_key }) },
    secrets: [otherAccount.private_key.split('\n')[1], serviceAccount.private_key.split('\n')[1], 'PRIVATE KEY'],
    code: /invalid_grant/,
  }),
};

for (const cloud of [aws, akv, gcpckms]) {
  describe(`${cloud.type} managed keys through node-vault`, () => {
    const name = unique(`nv-${cloud.type}`);
    const transitMount = unique('nv-transit-cloud');
    const pkiMount = unique('nv-pki-cloud');
    let uuid = '';
    let publicPem = '';

    beforeAll(async () => {
      await cloud.setup();
    });

    it('writes the key with the emulator credentials, reads it (secrets redacted), lists it; test/sign generates it at the cloud', async () => {
      await root.write(`sys/managed-keys/${cloud.type}/${name}`, cloud.fields(name));
      const read = await root.read(`sys/managed-keys/${cloud.type}/${name}`);
      expect(read.data).toMatchObject({ name, type: cloud.type, allow_generate_key: true, any_mount: false, usages: ['sign', 'verify'], ...cloud.view(name) });
      expect(read.data.UUID).toMatch(/^[0-9a-f-]{36}$/);
      uuid = read.data.UUID;
      for (const secret of cloud.secrets()) expect(JSON.stringify(read)).not.toContain(secret);
      expect((await root.list(`sys/managed-keys/${cloud.type}`)).data.keys).toContain(name);

      // Generated at the cloud (allow_generate_key), then signed and verified there.
      await root.write(`sys/managed-keys/${cloud.type}/${name}/test/sign`, cloud.testSign);
      publicPem = await cloud.cloudPublicKey(name);
    });

    it('a managed_key transit key on a mount allowing it: signatures made through node-vault verify with node:crypto against the public key of the read', async () => {
      await root.mount({ mount_point: transitMount, type: 'transit', config: { allowed_managed_keys: [name] } });
      const key = unique('signer');
      await root.write(`${transitMount}/keys/${key}`, { type: 'managed_key', managed_key_name: name });
      const read = (await root.read(`${transitMount}/keys/${key}`)).data;
      expect(read).toMatchObject({ name: key, type: 'managed_key', managed_key_name: name, managed_key_id: uuid, supports_signing: true, exportable: false, latest_version: 1 });
      const pem = read.keys['1'].public_key as string;
      // The transit key's public key is the one the cloud holds.
      expect(spki(pem)).toBe(spki(publicPem));
      const publicKey = createPublicKey(pem);

      const data = `signed at ${cloud.type} through node-vault`;
      for (const { body, hash, check } of cloud.signatures) {
        const signature = (await root.write(`${transitMount}/sign/${key}`, { input: b64(data), ...body })).data.signature as string;
        expect(signature).toMatch(/^vault:v1:/);
        expect(verify(hash, Buffer.from(data), check(publicKey), payload(signature))).toBe(true);
        expect(verify(hash, Buffer.from('something else'), check(publicKey), payload(signature))).toBe(false);
        expect((await root.write(`${transitMount}/verify/${key}`, { input: b64(data), signature, ...body })).data.valid).toBe(true);
        expect((await root.write(`${transitMount}/verify/${key}`, { input: b64('something else'), signature, ...body })).data.valid).toBe(false);
      }
    });

    it('PKI root/generate/kms on the key (allowed by tune): the certificate holds the cloud key and its self-signature verifies', async () => {
      await root.mount({ mount_point: pkiMount, type: 'pki', config: { max_lease_ttl: '87600h' } });
      await root.write(`sys/mounts/${pkiMount}/tune`, { allowed_managed_keys: [name] });
      const r = (await root.write(`${pkiMount}/root/generate/kms`, { managed_key_name: name, common_name: `node-vault ${cloud.type} Root`, ...cloud.pki.fields })).data;
      expect(r.private_key).toBeUndefined();
      const cert = new X509Certificate(r.certificate);
      expect(cert.subject).toBe(`CN=node-vault ${cloud.type} Root`);
      expect(cert.ca).toBe(true);
      expect(cert.publicKey.asymmetricKeyType).toBe(cloud.pki.keyType);
      expect(spki(cert.publicKey)).toBe(spki(publicPem));
      expect(cert.verify(cert.publicKey)).toBe(true);
      expect(cert.checkIssued(cert)).toBe(true);
      const key = (await root.read(`${pkiMount}/key/${r.key_id}`)).data;
      expect(key).toMatchObject({ managed_key_id: uuid, managed_key_name: name, key_type: cloud.pki.keyType });
    });

    it('wrong credentials: node-vault rejects with a 4xx whose message names the cloud error code and holds no secret', async () => {
      const wrongName = unique(`nv-${cloud.type}-wrong`);
      const wrong = cloud.wrong();
      await root.write(`sys/managed-keys/${cloud.type}/${wrongName}`, { ...cloud.fields(name), ...wrong.fields });
      let error: (Error & { response?: { statusCode: number; body?: { errors?: string[] } } }) | undefined;
      try {
        await root.write(`sys/managed-keys/${cloud.type}/${wrongName}/test/sign`, cloud.testSign);
      } catch (e) {
        error = e as typeof error;
      }
      expect(error?.response?.statusCode).toBeGreaterThanOrEqual(400);
      expect(error!.response!.statusCode).toBeLessThan(500);
      expect(error!.message).toMatch(wrong.code);
      expect(error!.response!.body?.errors).toEqual([error!.message]);
      for (const secret of wrong.secrets) {
        expect(error!.message).not.toContain(secret);
        expect(JSON.stringify(error!.response!.body)).not.toContain(secret);
      }
      // The read shows none of them either.
      const read = JSON.stringify(await root.read(`sys/managed-keys/${cloud.type}/${wrongName}`));
      for (const secret of wrong.secrets) expect(read).not.toContain(secret);
      await root.delete(`sys/managed-keys/${cloud.type}/${wrongName}`);
    });

    it('delete: refused while a mount lists the key; after unmounting, deleted and gone', async () => {
      const refused = await failure(root.delete(`sys/managed-keys/${cloud.type}/${name}`));
      expect(refused.status).toBe(400);
      expect(refused.errors[0]).toMatch(new RegExp(`^cannot delete managed key "${name}": it is listed in the allowed_managed_keys of mounts`));
      await root.unmount({ mount_point: transitMount });
      await root.unmount({ mount_point: pkiMount });
      await root.delete(`sys/managed-keys/${cloud.type}/${name}`);
      expect((await failure(root.read(`sys/managed-keys/${cloud.type}/${name}`))).status).toBe(404);
      const listed = await root.list(`sys/managed-keys/${cloud.type}`).catch((e: { response?: { statusCode: number } }) => {
        if (e.response?.statusCode === 404) return { data: { keys: [] as string[] } };
        throw e;
      });
      expect(listed.data.keys).not.toContain(name);
    });
  });
}
