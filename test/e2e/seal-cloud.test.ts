// `npm start` with a cloud KMS seal (COFFER_SEAL=awskms | azurekeyvault | gcpckms, the key described
// by COFFER_SEAL_MANAGED_KEY: a JSON file, or the JSON itself) against the emulators of
// test/emulators/, started here in Node: AWS KMS named by the key's endpoint field, Azure Key Vault
// by AZURE_AUTHORITY_HOST / AZURE_KEYVAULT_URL and Google Cloud KMS by GOOGLE_CLOUDKMS_URL, which the
// launcher passes on to the Worker. Driven by node-vault (status, write/read, seal, unseal, health):
// the first start initialises on the seal (the key generated in the cloud, no seal key on disk,
// seal-status type = the seal's name, the recovery seal), the data directory holds only seal blobs,
// a restart unseals by itself (the cloud unwraps the root key), sys/seal holds across a restart
// until the recovery key is given, and credentials revoked at the cloud leave the server sealed
// saying why (without the secret) until they work again. Then the launcher's refusals.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kmsEmulator } from '../emulators/aws-kms/client';
import { startKmsEmulator } from '../emulators/aws-kms/server';
import { azureEmulator } from '../emulators/azure-keyvault/client';
import { startAzureEmulator } from '../emulators/azure-keyvault/server';
import { gcpKmsEmulator, type ServiceAccountKeyFile } from '../emulators/gcp-kms/client';
import { startGcpKmsEmulator } from '../emulators/gcp-kms/server';
import { readInit, startLauncher, tempDir, type Server } from './processes';

type Client = ReturnType<typeof nodeVault>;
const client = (url: string, token?: string): Client => nodeVault({ apiVersion: 'v1', endpoint: url, token, noCustomHTTPVerbs: true });

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

const run = Math.random().toString(36).slice(2, 8);
async function until(done: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !done() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 50));
}
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One cloud: its emulator, the seal key's fields, what the launcher needs, and how to revoke the credentials. */
interface Cloud {
  type: 'awskms' | 'azurekeyvault' | 'gcpckms';
  /** Starts the emulator and sets up the account; returns the seal key's fields and the launcher's extra environment. */
  start(): Promise<{ fields: Record<string, unknown>; env: Record<string, string> }>;
  stop(): Promise<void>;
  /** The generated key as the emulator holds it. */
  generatedKey(): Promise<Record<string, unknown> | undefined>;
  generated: Record<string, unknown>;
  /** The blob's key member. */
  blobKey: string;
  /** Secrets of the fields: never on disk, in a status or in the launcher's output. */
  secrets(): string[];
  revoke(): Promise<RegExp>;
  restore(): Promise<void>;
  /** Give the JSON inline instead of as a file. */
  inline?: boolean;
}

const AWS_REGION = 'ap-southeast-2';
const AWS_CRED = { accessKeyId: 'AKIACOFFERE2ESEAL001', secretAccessKey: `e2e/${run}/Kms+Seal+Secret000000000001` };
function awsCloud(): Cloud {
  let emu: Awaited<ReturnType<typeof startKmsEmulator>>;
  const ctl = () => kmsEmulator(emu.base);
  return {
    type: 'awskms',
    async start() {
      emu = await startKmsEmulator();
      await ctl().reset({ credentials: [{ ...AWS_CRED, userName: 'coffer-seal' }] });
      const fields = { access_key: AWS_CRED.accessKeyId, secret_key: AWS_CRED.secretAccessKey, region: AWS_REGION, endpoint: emu.base, key_type: 'RSA', key_bits: '2048', kms_key: 'alias/coffer-seal', allow_generate_key: true };
      return { fields, env: {} };
    },
    stop: () => emu?.close(),
    async generatedKey() {
      const k = (await ctl().state()).keys.find((key) => key.Aliases.includes('alias/coffer-seal'));
      return k && { KeySpec: k.KeySpec, KeyUsage: k.KeyUsage, KeyState: k.KeyState, Region: k.Region };
    },
    generated: { KeySpec: 'RSA_2048', KeyUsage: 'ENCRYPT_DECRYPT', KeyState: 'Enabled', Region: AWS_REGION },
    blobKey: 'alias/coffer-seal',
    secrets: () => [AWS_CRED.secretAccessKey],
    async revoke() {
      // What AWS answers for an access key that was deleted.
      await ctl().faults({ faults: [{ action: '*', status: 400, code: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.', times: 10_000 }] });
      return /^awskms seal: cannot read the key \(the AWS KMS key "alias\/coffer-seal" in region ap-southeast-2\): AWS KMS DescribeKey failed with UnrecognizedClientException: The security token included in the request is invalid\. \(AWS does not know the access_key\)$/;
    },
    async restore() {
      await ctl().faults({});
    },
  };
}

const AZ_TENANT = '3f0c2a1b-5d4e-4f60-8a71-00000000e2e5';
const AZ_CLIENT = 'c0ffee5e-a100-4000-8000-0000000000e2';
const AZ_SECRET = `e2e-seal~${run}-secret-51c3`;
const AZ_VAULT = `cofe2eseal${run}`;
function azureCloud(): Cloud {
  let emu: Awaited<ReturnType<typeof startAzureEmulator>>;
  const ctl = () => azureEmulator(emu.base, AZ_TENANT);
  return {
    type: 'azurekeyvault',
    inline: true,
    async start() {
      emu = await startAzureEmulator();
      await ctl().register({ clients: [{ client_id: AZ_CLIENT, client_secret: AZ_SECRET }], vaults: [{ name: AZ_VAULT }] });
      const fields = { tenant_id: AZ_TENANT, client_id: AZ_CLIENT, client_secret: AZ_SECRET, vault_name: AZ_VAULT, key_name: 'coffer-seal', key_type: 'RSA-HSM', key_bits: 3072, allow_generate_key: 'true' };
      return { fields, env: { AZURE_AUTHORITY_HOST: emu.base, AZURE_KEYVAULT_URL: `${emu.base}/vaults/{vault_name}` } };
    },
    stop: () => emu?.close(),
    async generatedKey() {
      const v = (await ctl().state()).vaults.find((x) => x.name === AZ_VAULT)?.keys['coffer-seal']?.at(-1);
      return v && { kty: v.kty, key_size: v.key_size, key_ops: v.key_ops, enabled: v.enabled };
    },
    generated: { kty: 'RSA-HSM', key_size: 3072, key_ops: ['encrypt', 'decrypt'], enabled: true },
    blobKey: `${AZ_VAULT}/coffer-seal`,
    secrets: () => [AZ_SECRET],
    async revoke() {
      // The client secret deleted in Entra ID: no new token, and the vault refuses the ones issued.
      await ctl().faults([{ op: 'token', status: 401, code: 'invalid_client', aadsts: 7000215, message: 'AADSTS7000215: Invalid client secret provided.', times: 10_000 }]);
      await ctl().revokeTokens();
      return new RegExp(
        `^azurekeyvault seal: cannot read the key \\(the Azure Key Vault key "coffer-seal" in vault "${AZ_VAULT}"\\): Azure AD refused the token request of client "${AZ_CLIENT}" in tenant "${AZ_TENANT}": invalid client secret \\(invalid_client, AADSTS7000215\\)$`,
      );
    },
    async restore() {
      await ctl().faults([]);
    },
  };
}

const GCP_PROJECT = `e2e-seal-${run}`;
function gcpCloud(): Cloud {
  let emu: Awaited<ReturnType<typeof startGcpKmsEmulator>>;
  let sa: ServiceAccountKeyFile;
  const ctl = () => gcpKmsEmulator(emu.base);
  const version = `projects/${GCP_PROJECT}/locations/europe-west1/keyRings/coffer/cryptoKeys/coffer-seal/cryptoKeyVersions/1`;
  return {
    type: 'gcpckms',
    async start() {
      emu = await startGcpKmsEmulator();
      await ctl().reset(GCP_PROJECT, { generationDelayMs: 100 });
      sa = await ctl().serviceAccount({ project: GCP_PROJECT, name: 'coffer-seal' });
      await ctl().keyRing(GCP_PROJECT, 'europe-west1', 'coffer');
      const fields = {
        // The key file as an object (a string works too, as at sys/managed-keys).
        credentials: sa,
        project: GCP_PROJECT,
        region: 'europe-west1',
        key_ring: 'coffer',
        crypto_key: 'coffer-seal',
        algorithm: 'RSA_DECRYPT_OAEP_4096_SHA512',
        allow_generate_key: true,
      };
      return { fields, env: { GOOGLE_CLOUDKMS_URL: emu.base } };
    },
    stop: () => emu?.close(),
    async generatedKey() {
      const key = (await ctl().state(GCP_PROJECT)).keyRings[0]?.cryptoKeys.find((k) => k.name.endsWith('/cryptoKeys/coffer-seal'));
      return key && { purpose: key.purpose, algorithm: key.algorithm, versions: key.versions.map((v) => v.state) };
    },
    generated: { purpose: 'ASYMMETRIC_DECRYPT', algorithm: 'RSA_DECRYPT_OAEP_4096_SHA512', versions: ['ENABLED'] },
    blobKey: version,
    secrets: () => [sa.private_key.split('\n')[1], sa.private_key.split('\n')[5]],
    async revoke() {
      // The account's key deleted: Google refuses the key file's assertions, and the tokens issued.
      await ctl().faults(GCP_PROJECT, [{ rpc: 'Token', status: 400, code: 'invalid_grant', message: 'Invalid JWT Signature.', times: 10_000 }]);
      await ctl().revokeTokens(sa.client_email);
      return new RegExp(`^gcpckms seal: cannot read the key \\(the Google Cloud KMS key version ${escape(version)}\\): Google refused a token for ${escape(sa.client_email)} \\(HTTP 400\\): invalid_grant: Invalid JWT Signature\\.$`);
    },
    async restore() {
      await ctl().faults(GCP_PROJECT, []);
    },
  };
}

describe.each([awsCloud(), azureCloud(), gcpCloud()])('npm start with COFFER_SEAL=$type', (cloud) => {
  const { type } = cloud;
  const dataDir = tempDir(`coffer-e2e-seal-${type}-`);
  const secret = `seal-${type}-plaintext-${Date.now()}`;
  let launcherEnv: Record<string, string>;
  let server: Server | undefined;
  let init: ReturnType<typeof readInit>;
  let vault: Client;

  const start = async () => {
    server = await startLauncher(dataDir, launcherEnv);
    vault = client(server.url, init?.root_token);
    return server;
  };
  const restart = async () => {
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    return start();
  };
  const noSecretIn = (text: string) => {
    for (const s of cloud.secrets()) expect(text).not.toContain(s);
  };

  beforeAll(async () => {
    const { fields, env } = await cloud.start();
    let managedKey = JSON.stringify(fields, null, 2);
    if (!cloud.inline) {
      const file = path.join(tempDir(`coffer-e2e-seal-${type}-key-`), 'seal-key.json');
      writeFileSync(file, managedKey, { mode: 0o600 });
      managedKey = file;
    }
    launcherEnv = { COFFER_SEAL: type, COFFER_SEAL_MANAGED_KEY: managedKey, ...env };
    await start();
    init = readInit(dataDir);
    vault = client(server!.url, init.root_token);
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
    await cloud.stop();
  });

  it(`initialised on the ${type} seal: the key made in the cloud, no seal key on disk, seal-status type ${type}`, async () => {
    expect(init.recovery_keys).toHaveLength(1);
    expect(await cloud.generatedKey()).toEqual(cloud.generated);
    expect(existsSync(path.join(dataDir, 'seal.key'))).toBe(false);
    expect(readFileSync(path.join(dataDir, 'seal-type'), 'utf8')).toBe(`${type}\n`);
    const status = await vault.status();
    expect(status).toMatchObject({ type, initialized: true, sealed: false, t: 1, n: 1, progress: 0, recovery_seal: true, recovery_seal_type: 'shamir', storage_type: 'durable-objects' });
    expect(status.warnings).toBeUndefined();
    expect(await vault.health()).toMatchObject({ initialized: true, sealed: false });
    expect(server!.output()).not.toMatch(/The cluster is sealed/);
  });

  it('stores the root key as a seal blob naming the cloud key, and neither plaintext nor credentials', async () => {
    await vault.write('secret/data/app', { data: { password: secret } });
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    const prefix = Buffer.from(`{"seal":"${type}","v":1,"key":${JSON.stringify(cloud.blobKey)},"key_sha256":"`);
    // The objects' storage holds no plaintext, token or recovery key (init.json holds the last two, as the launcher's output).
    const needles = [secret, init.root_token, init.recovery_keys[0], init.recovery_keys_base64[0]];
    let blobs = 0;
    for (const f of filesUnder(path.join(dataDir, 'do'))) {
      const bytes = readFileSync(f);
      for (const n of needles) expect(bytes.includes(Buffer.from(n)), `${n} in ${f}`).toBe(false);
      if (bytes.includes(prefix)) blobs++;
    }
    expect(blobs).toBeGreaterThan(0);
    // The credentials are nowhere in the data directory: the launcher passes them on, and keeps no copy.
    for (const f of filesUnder(dataDir)) {
      const text = readFileSync(f).toString('latin1');
      for (const n of cloud.secrets()) expect(text.includes(n), `a credential in ${f}`).toBe(false);
    }
  });

  it('restarts unsealed: the cloud unwraps the root key, the secret is readable', async () => {
    await start();
    expect(await vault.status()).toMatchObject({ type, sealed: false });
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
  });

  it('sys/seal: sealed (also across a restart) until the recovery key is given to sys/unseal', async () => {
    await vault.seal();
    expect(await vault.status()).toMatchObject({ type, sealed: true, t: 1, progress: 0 });
    await expect(vault.read('secret/data/app')).rejects.toThrow('Vault is sealed');
    await restart();
    const status = await vault.status();
    expect(status).toMatchObject({ type, sealed: true });
    expect(status.warnings).toBeUndefined();
    expect((await vault.health()).sealed).toBe(true);
    expect(await vault.unseal({ key: init.recovery_keys[0] })).toMatchObject({ type, sealed: false });
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
  });

  it('credentials revoked at the cloud: stays sealed, and seal-status, the launcher and sys/unseal say why', async () => {
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    const why = await cloud.revoke();
    try {
      await start();
      const status = await vault.status();
      expect(status).toMatchObject({ type, initialized: true, sealed: true });
      expect(status.warnings).toEqual([expect.stringMatching(why)]);
      // The launcher prints the reason just after it says it listens.
      await until(() => /The cluster is sealed: /.test(server!.output()));
      expect(server!.output()).toMatch(new RegExp(`The cluster is sealed: ${type} seal: cannot read the key`));
      await expect(vault.read('secret/data/app')).rejects.toThrow('Vault is sealed');
      const refused = await vault.unseal({ key: init.recovery_keys[0] }).then(
        () => null,
        (e: { response?: { statusCode: number }; message: string }) => e,
      );
      expect(refused?.response?.statusCode).toBe(400);
      expect(refused?.message).toMatch(/cannot read the key/);
      noSecretIn(JSON.stringify(status));
      noSecretIn(server!.output());
    } finally {
      await cloud.restore();
    }
    // The credentials work again: the next request unseals, without a restart.
    expect(await vault.status()).toMatchObject({ type, sealed: false });
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
  });
});

describe('the launcher refuses cloud seals it cannot start', () => {
  it('no COFFER_SEAL_MANAGED_KEY, no such file, not JSON: refused before anything is recorded, the text never echoed', async () => {
    const fresh = tempDir('coffer-e2e-seal-cloud-bad-');
    await expect(startLauncher(fresh, { COFFER_SEAL: 'gcpckms' })).rejects.toThrow(
      /COFFER_SEAL=gcpckms needs COFFER_SEAL_MANAGED_KEY: the path of a JSON file \(or the JSON itself\) with the fields of a gcpckms managed key/,
    );
    await expect(startLauncher(fresh, { COFFER_SEAL: 'awskms', COFFER_SEAL_MANAGED_KEY: path.join(fresh, 'missing.json') })).rejects.toThrow(/COFFER_SEAL_MANAGED_KEY=.*missing\.json: no such file/);
    const broken = '{"secret_key": "do-not-echo-7f3a", ';
    const e = await startLauncher(fresh, { COFFER_SEAL: 'awskms', COFFER_SEAL_MANAGED_KEY: broken }).catch((err: Error) => err);
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).message).toMatch(/COFFER_SEAL_MANAGED_KEY is not valid JSON: give one JSON object with the fields of a awskms managed key/);
    expect((e as Error).message).not.toContain('do-not-echo-7f3a');
    await expect(startLauncher(fresh, { COFFER_SEAL: 'kms' })).rejects.toThrow(
      /COFFER_SEAL=kms: the seal types are "static" \(the default: a seal key in the data directory\) and "pkcs11" .*"awskms", "azurekeyvault" and "gcpckms" \(with COFFER_SEAL_MANAGED_KEY\)/,
    );
    expect(readdirSync(fresh).filter((x) => x !== 'tmp')).toEqual([]);
  });

  it("fields the Worker refuses: the first start fails with the seal's reason, without the secret", async () => {
    const fresh = tempDir('coffer-e2e-seal-cloud-invalid-');
    const fields = { access_key: 'AKIAEXAMPLE000000001', secret_key: `never-shown-${run}`, key_type: 'RSA', key_bits: '2048' };
    const e = await startLauncher(fresh, { COFFER_SEAL: 'awskms', COFFER_SEAL_MANAGED_KEY: JSON.stringify(fields) }).catch((err: Error) => err);
    expect((e as Error).message).toMatch(/PUT sys\/init: 400 .*the awskms seal is misconfigured: SEAL_MANAGED_KEY: missing required field \\"kms_key\\"/);
    expect((e as Error).message).not.toContain(`never-shown-${run}`);
    // The data directory keeps its type: another seal is refused, and without COFFER_SEAL the managed key is still needed.
    expect(readFileSync(path.join(fresh, 'seal-type'), 'utf8')).toBe('awskms\n');
    await expect(startLauncher(fresh, { COFFER_SEAL: 'static' })).rejects.toThrow(/COFFER_SEAL=static: .* began with the awskms seal, and migrating between seal types is not supported/);
    await expect(startLauncher(fresh)).rejects.toThrow(new RegExp(`COFFER_SEAL=awskms \\(${escape(fresh)} began with that seal\\) needs COFFER_SEAL_MANAGED_KEY`));
    expect(existsSync(path.join(fresh, 'seal.key'))).toBe(false);
  });
});
