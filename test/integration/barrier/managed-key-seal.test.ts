// The cloud KMS seals (SEAL_TYPE=awskms | azurekeyvault | gcpckms; src/managed-keys/seal.ts with
// SEAL_MANAGED_KEY read by seal-config.ts) against the emulators of test/emulators/, reached from
// workerd as the Worker reaches the clouds (managedKeyDeps: AWS by the key's endpoint field, Azure
// and Google by AZURE_AUTHORITY_HOST / AZURE_KEYVAULT_URL / GOOGLE_CLOUDKMS_URL). For each cloud:
// the configuration and its messages (validated as sys/managed-keys validates, no secret in any
// message), the key (generated only at init and only when allowed, as the emulator's state
// shows; keys that cannot seal refused), the envelope (round trip, the OAEP hash each cloud uses,
// context binding, another key, tampered blobs, other seals' blobs), wrong credentials and an
// unreachable cloud, then the seal state machine on it: init, restart, sys/seal and unseal with
// the recovery key, credentials revoked at the emulator (sealed, saying why) and restored.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { managedKeyDeps } from '../../../durable-objects/managed-key-deps';
import { MemoryPhysical } from '../../../src/core/barrier/physical';
import { StaticKeySeal, type Seal } from '../../../src/core/barrier/seal';
import { SealState } from '../../../src/core/barrier/seal-state';
import { fromBase64, fromUtf8, toBase64, toHex, utf8 } from '../../../src/crypto/encoding';
import { randomBytes } from '../../../src/crypto/random';
import { blobJson, contains, flipByteB64, withBlob } from '../../helpers/seal-blob';
import { CofferError } from '../../../src/framework/errors';
import { createBackend } from '../../../src/managed-keys/backends';
import { buildEntry } from '../../../src/managed-keys/entry';
import { CloudKmsSeal, cloudSealFromEnv, ManagedKeySealError, type CloudSealType } from '../../../src/managed-keys/seal';
import type { BackendDeps } from '../../../src/managed-keys/types';
import { kmsEmulator } from '../../emulators/aws-kms/client';
import { azureEmulator } from '../../emulators/azure-keyvault/client';
import { gcpKmsEmulator, type ServiceAccountKeyFile } from '../../emulators/gcp-kms/client';

/** Names unique to this run: a re-run against the same emulators never finds old keys. */
const run = Math.random().toString(36).slice(2, 8);
const deps = (): BackendDeps => managedKeyDeps(env);

const der = (pem: string) => fromBase64(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''))!;
const sha256Hex = async (b: Uint8Array) => toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', b)));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function failure(p: Promise<unknown>): Promise<ManagedKeySealError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!(e instanceof ManagedKeySealError)) throw new Error(`expected a ManagedKeySealError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  return e;
}

/** What a test needs of one cloud and its emulator. */
interface Cloud {
  type: CloudSealType;
  setup(): Promise<void>;
  /** SEAL_MANAGED_KEY's fields for the key `name`, without allow_generate_key. */
  fields(name: string): Record<string, unknown>;
  /** The secrets among the fields (never in a message). */
  secrets: string[];
  /** The key as the emulator holds it: its public key (SPKI DER) and what it is; undefined when there is none. */
  emulated(name: string): Promise<{ spki: Uint8Array; facts: Record<string, unknown> } | undefined>;
  /** What a generated key is, in `emulated().facts`. */
  generated: Record<string, unknown>;
  oaepHash: string;
  /** The blob's "key" member, and the seal's name of the key in messages. */
  blobKey(name: string): string;
  ref(name: string): string;
  /** A key made outside Coffer that can seal, and one that cannot (with the refusal). */
  makeUsable(name: string): Promise<void>;
  makeUnfit(name: string): Promise<RegExp>;
  /** Fields with wrong credentials, the refusal, and the wrong secret. */
  wrongCredentials(name: string): { fields: Record<string, unknown>; message: RegExp; secret: string };
  /** Deps whose cloud cannot be reached (the key's fields may change too). */
  unreachable(name: string): { deps: BackendDeps; fields: Record<string, unknown> };
  /** The emulator stops accepting the credentials (as after a revocation), and accepts them again. */
  revoke(): Promise<RegExp>;
  restore(): Promise<void>;
  /** Fields missing a required one, and entry.ts's message for it. */
  incomplete: { drop: string; message: string };
  /** Fields whose key cannot seal (not RSA encryption), and the message. */
  notForEncryption: { fields: Record<string, unknown>; message: string };
}

// ---- AWS KMS (the key names the emulator by its endpoint field; a tenant of this file's own)

const AWS_ENDPOINT = `${inject('awsKmsUrl')}/t/seal-${run}`;
const AWS_REGION = 'eu-west-2';
const AWS_CRED = { accessKeyId: 'AKIACOFFERSEALTEST01', secretAccessKey: `seal/${run}/Kms+Secret000000000000000001` };
const awsEmu = kmsEmulator(AWS_ENDPOINT);
const awsAlias = (name: string) => `alias/seal/${name}`;

const aws: Cloud = {
  type: 'awskms',
  async setup() {
    await awsEmu.reset({ credentials: [{ ...AWS_CRED, userName: 'coffer-seal' }] });
  },
  fields: (name) => ({ access_key: AWS_CRED.accessKeyId, secret_key: AWS_CRED.secretAccessKey, region: AWS_REGION, endpoint: AWS_ENDPOINT, key_type: 'RSA', key_bits: '2048', kms_key: awsAlias(name) }),
  secrets: [AWS_CRED.secretAccessKey],
  async emulated(name) {
    const k = (await awsEmu.state()).keys.find((key) => key.Aliases.includes(awsAlias(name)));
    return k && { spki: fromBase64(k.PublicKey)!, facts: { KeySpec: k.KeySpec, KeyUsage: k.KeyUsage, KeyState: k.KeyState, Region: k.Region } };
  },
  generated: { KeySpec: 'RSA_2048', KeyUsage: 'ENCRYPT_DECRYPT', KeyState: 'Enabled', Region: AWS_REGION },
  oaepHash: 'sha2-256',
  blobKey: awsAlias,
  ref: (name) => `AWS KMS key "${awsAlias(name)}" in region ${AWS_REGION}`,
  async makeUsable(name) {
    await awsEmu.createKey({ region: AWS_REGION, keySpec: 'RSA_2048', keyUsage: 'ENCRYPT_DECRYPT', alias: awsAlias(name) });
  },
  async makeUnfit(name) {
    await awsEmu.createKey({ region: AWS_REGION, keySpec: 'RSA_2048', keyUsage: 'SIGN_VERIFY', alias: awsAlias(name) });
    return /cannot read the key \(the AWS KMS key .*\): AWS KMS key arn:aws:kms:.* cannot serve managed key "seal": its KeyUsage is SIGN_VERIFY, and the managed key's usages \(encrypt, decrypt\) need ENCRYPT_DECRYPT$/;
  },
  wrongCredentials: (name) => {
    const secret = `wrong/${run}/Kms+Secret00000000000000000002`;
    return { fields: { ...aws.fields(name), secret_key: secret }, message: /AWS KMS DescribeKey failed with InvalidSignatureException: .*\(check secret_key \(and the clock\)\)$/, secret };
  },
  unreachable: (name) => ({ deps: deps(), fields: { ...aws.fields(name), endpoint: 'http://127.0.0.1:1' } }),
  async revoke() {
    // What AWS answers once the access key is deleted.
    await awsEmu.faults({ faults: [{ action: '*', status: 400, code: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.', times: 1000 }] });
    return /AWS KMS DescribeKey failed with UnrecognizedClientException: The security token included in the request is invalid\. \(AWS does not know the access_key\)$/;
  },
  async restore() {
    await awsEmu.faults({});
  },
  incomplete: { drop: 'kms_key', message: 'missing required field "kms_key"' },
  notForEncryption: {
    fields: { key_type: 'ECDSA', key_bits: '', curve: 'P256' },
    message: 'SEAL_MANAGED_KEY: key_type ECDSA cannot seal: the seal wraps with RSA-OAEP, so the key must be key_type "RSA" (an RSA KMS key with KeyUsage ENCRYPT_DECRYPT)',
  },
};

// ---- Azure Key Vault (AZURE_AUTHORITY_HOST and AZURE_KEYVAULT_URL name the emulator; a tenant of this file's own)

const AZURE_URL = inject('azureKeyVaultUrl');
const AZ_TENANT = crypto.randomUUID();
const AZ_CLIENT = crypto.randomUUID();
const AZ_SECRET = `seal-secret~${run}-3c9d1e`;
const AZ_VAULT = `cofseal${run}`;
const azEmu = azureEmulator(AZURE_URL, AZ_TENANT);

const azure: Cloud = {
  type: 'azurekeyvault',
  async setup() {
    await azEmu.register({ clients: [{ client_id: AZ_CLIENT, client_secret: AZ_SECRET }], vaults: [{ name: AZ_VAULT }] });
  },
  fields: (name) => ({ tenant_id: AZ_TENANT, client_id: AZ_CLIENT, client_secret: AZ_SECRET, vault_name: AZ_VAULT, key_name: name, key_type: 'RSA-HSM', key_bits: '2048' }),
  secrets: [AZ_SECRET],
  async emulated(name) {
    const versions = (await azEmu.state()).vaults.find((v) => v.name === AZ_VAULT)?.keys[name.toLowerCase()];
    const v = versions?.at(-1);
    return v && { spki: der(v.public_key), facts: { kty: v.kty, key_size: v.key_size, key_ops: v.key_ops, enabled: v.enabled, versions: versions!.length } };
  },
  generated: { kty: 'RSA-HSM', key_size: 2048, key_ops: ['encrypt', 'decrypt'], enabled: true, versions: 1 },
  oaepHash: 'sha2-256',
  blobKey: (name) => `${AZ_VAULT}/${name}`,
  ref: (name) => `Azure Key Vault key "${name}" in vault "${AZ_VAULT}"`,
  async makeUsable(name) {
    await azEmu.createKey(AZ_VAULT, name, { kty: 'RSA-HSM', key_size: 2048, key_ops: ['encrypt', 'decrypt'] });
  },
  async makeUnfit(name) {
    await azEmu.createKey(AZ_VAULT, name, { kty: 'EC-HSM', crv: 'P-256' });
    return /^azurekeyvault seal: the Azure Key Vault key ".*" in vault ".*" is an EC key: the seal wraps with RSA-OAEP and needs an RSA key$/;
  },
  wrongCredentials: (name) => {
    const secret = `wrong-secret~${run}-77aa`;
    return {
      fields: { ...azure.fields(name), client_secret: secret },
      message: new RegExp(`Azure AD refused the token request of client "${AZ_CLIENT}" in tenant "${AZ_TENANT}": invalid client secret \\(invalid_client, AADSTS7000215\\)$`),
      secret,
    };
  },
  unreachable: (name) => ({ deps: { ...deps(), endpoints: { ...deps().endpoints, azureKeyVault: 'http://127.0.0.1:1/vaults/{vault_name}' } }, fields: azure.fields(name) }),
  async revoke() {
    // The client secret deleted: tokens issued so far stop working, and no new one is granted.
    await azEmu.faults([{ op: 'token', status: 401, code: 'invalid_client', aadsts: 7000215, message: 'AADSTS7000215: Invalid client secret provided.', times: 1000 }]);
    await azEmu.revokeTokens();
    return /Azure AD refused the token request of client ".*" in tenant ".*": invalid client secret \(invalid_client, AADSTS7000215\)$/;
  },
  async restore() {
    await azEmu.faults([]);
  },
  incomplete: { drop: 'vault_name', message: 'missing required field "vault_name"' },
  notForEncryption: { fields: { key_type: 'EC-HSM' }, message: 'SEAL_MANAGED_KEY: invalid key_type "EC-HSM": the only supported key type is RSA-HSM' },
};

// ---- Google Cloud KMS (GOOGLE_CLOUDKMS_URL names the emulator; the key file its token endpoint; a project of this file's own)

const gcpEmu = gcpKmsEmulator(inject('gcpKmsUrl'));
const GCP_PROJECT = `it-seal-${run}`;
const GCP_RING = 'seal-ring';
const GCP_ALG = 'RSA_DECRYPT_OAEP_2048_SHA256';
let sa: ServiceAccountKeyFile;
const gcpVersion = (name: string) => `projects/${GCP_PROJECT}/locations/global/keyRings/${GCP_RING}/cryptoKeys/${name}/cryptoKeyVersions/1`;

/** A PKCS#8 RSA key the emulator does not know. */
async function strangerKey(): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array((await crypto.subtle.exportKey('pkcs8', pair.privateKey)) as ArrayBuffer);
  return `-----BEGIN PRIVATE KEY-----\n${toBase64(pkcs8).replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`;
}

const gcp: Cloud = {
  type: 'gcpckms',
  async setup() {
    await gcpEmu.reset(GCP_PROJECT, { generationDelayMs: 100 });
    sa = await gcpEmu.serviceAccount({ project: GCP_PROJECT, name: 'coffer-seal' });
    await gcpEmu.keyRing(GCP_PROJECT, 'global', GCP_RING);
    gcp.secrets.push(sa.private_key.split('\n')[1]);
  },
  fields: (name) => ({ credentials: JSON.stringify(sa), project: GCP_PROJECT, region: 'global', key_ring: GCP_RING, crypto_key: name, algorithm: GCP_ALG }),
  secrets: [],
  async emulated(name) {
    const ring = (await gcpEmu.state(GCP_PROJECT)).keyRings.find((r) => r.name.endsWith(`/keyRings/${GCP_RING}`));
    const key = ring?.cryptoKeys.find((k) => k.name.endsWith(`/cryptoKeys/${name}`));
    const v = key?.versions[0];
    return v?.publicKeyPem ? { spki: der(v.publicKeyPem), facts: { purpose: key!.purpose, algorithm: v.algorithm, state: v.state, versions: key!.versions.length } } : undefined;
  },
  generated: { purpose: 'ASYMMETRIC_DECRYPT', algorithm: GCP_ALG, state: 'ENABLED', versions: 1 },
  oaepHash: 'sha2-256',
  blobKey: gcpVersion,
  ref: (name) => `Google Cloud KMS key version ${gcpVersion(name)}`,
  async makeUsable(name) {
    // Made with the managed-key backend itself, as another Coffer (or an administrator) would.
    const entry = buildEntry({ type: 'cloudckms', name: 'outside', raw: { ...gcp.fields(name), usages: 'decrypt', allow_generate_key: true }, previous: null, newId: () => 'x' });
    await createBackend(entry, deps()).generate();
  },
  async makeUnfit(name) {
    const entry = buildEntry({ type: 'cloudckms', name: 'outside', raw: { ...gcp.fields(name), algorithm: 'RSA_SIGN_PKCS1_2048_SHA256', allow_generate_key: true }, previous: null, newId: () => 'x' });
    await createBackend(entry, deps()).generate();
    return new RegExp(`cannot read the key \\(.*\\): Google Cloud KMS key version ${escape(gcpVersion(name))} is RSA_SIGN_PKCS1_2048_SHA256, but the managed key's algorithm is ${GCP_ALG}$`);
  },
  wrongCredentials: (name) => {
    // The account's key deleted: the key file's private key is one Google does not know.
    const secret = `stranger-${run}`;
    return {
      fields: { ...gcp.fields(name), credentials: JSON.stringify({ ...sa, private_key: STRANGER_KEY, private_key_id: secret }) },
      message: new RegExp(`Google refused a token for ${escape(sa.client_email)} \\(HTTP 400\\): invalid_grant: Invalid JWT Signature\\.$`),
      secret: STRANGER_KEY.split('\n')[1],
    };
  },
  unreachable: (name) => ({ deps: { ...deps(), endpoints: { ...deps().endpoints, googleCloudKms: 'http://127.0.0.1:1' } }, fields: gcp.fields(name) }),
  async revoke() {
    await gcpEmu.faults(GCP_PROJECT, [{ rpc: 'Token', status: 400, code: 'invalid_grant', message: 'Invalid JWT Signature.', times: 1000 }]);
    await gcpEmu.revokeTokens(sa.client_email);
    return /Google refused a token for .* \(HTTP 400\): invalid_grant: Invalid JWT Signature\.$/;
  },
  async restore() {
    await gcpEmu.faults(GCP_PROJECT, []);
  },
  incomplete: { drop: 'key_ring', message: 'missing required field "key_ring"' },
  notForEncryption: {
    fields: { algorithm: 'RSA_SIGN_PSS_2048_SHA256' },
    message:
      'SEAL_MANAGED_KEY: algorithm RSA_SIGN_PSS_2048_SHA256 cannot seal: the seal wraps with RSA-OAEP, so the key must be an ASYMMETRIC_DECRYPT key of one of RSA_DECRYPT_OAEP_2048_SHA256, RSA_DECRYPT_OAEP_3072_SHA256, RSA_DECRYPT_OAEP_4096_SHA256, RSA_DECRYPT_OAEP_4096_SHA512, RSA_DECRYPT_OAEP_2048_SHA1, RSA_DECRYPT_OAEP_3072_SHA1, RSA_DECRYPT_OAEP_4096_SHA1',
  },
};
let STRANGER_KEY = '';

const CLOUDS = [aws, azure, gcp];

beforeAll(async () => {
  STRANGER_KEY = await strangerKey();
  await Promise.all(CLOUDS.map((c) => c.setup()));
}, 60_000);

describe.each(CLOUDS)('the $type seal', (cloud) => {
  const { type } = cloud;
  const name = (n: string) => `${type}-${n}-${run}`.slice(0, 60);
  const vars = (fields: Record<string, unknown>) => ({ SEAL_MANAGED_KEY: JSON.stringify(fields) });
  /** A seal of the key `n` (allowed to generate it unless told otherwise). */
  const sealOf = (n: string, over: Record<string, unknown> = {}, options: { initialized?: () => boolean } = {}, d = deps()) =>
    new CloudKmsSeal(type, vars({ ...cloud.fields(name(n)), allow_generate_key: true, ...over }), d, options);
  const configError = (fields: Record<string, unknown> | string | undefined) => {
    const { seal, error } = cloudSealFromEnv(type, { SEAL_MANAGED_KEY: typeof fields === 'object' ? JSON.stringify(fields) : fields }, deps());
    expect(seal.type).toBe(type);
    return error;
  };
  const misconfigured = `the ${type} seal is misconfigured: `;

  describe('configuration (SEAL_MANAGED_KEY)', () => {
    it('is required, as a JSON object; its text is never echoed', async () => {
      expect(configError(undefined)).toBe(
        `${misconfigured}SEAL_TYPE=${type} needs SEAL_MANAGED_KEY (a Worker secret): the JSON object of a ${type} managed key's fields, as sys/managed-keys/${type}/<name> takes them`,
      );
      expect(configError('  ')).toMatch(/needs SEAL_MANAGED_KEY \(a Worker secret\)/);
      const broken = JSON.stringify(cloud.fields(name('x'))).slice(0, -1);
      const error = configError(broken)!;
      expect(error).toMatch(new RegExp(`^${escape(misconfigured)}SEAL_MANAGED_KEY is not valid JSON( \\(at position \\d+\\))?: give the ${type} managed key's fields as one JSON object$`));
      for (const s of cloud.secrets) expect(error).not.toContain(s);
      expect(configError('["a"]')).toBe(`${misconfigured}SEAL_MANAGED_KEY is not a JSON object: give the ${type} managed key's fields as one JSON object`);
      // The unavailable seal fails with the reason, whatever it is asked.
      const { seal, error: reason } = cloudSealFromEnv(type, {}, deps());
      expect((await failure(seal.encrypt(utf8('x'), 'root-key'))).message).toBe(reason);
      expect((await failure(seal.decrypt(utf8('x'), 'root-key'))).message).toBe(reason);
      expect(cloudSealFromEnv(type, vars(cloud.fields(name('x'))), deps())).toEqual({ seal: expect.any(CloudKmsSeal) });
    });

    it('is validated as sys/managed-keys validates it, with the same messages', () => {
      const fields = cloud.fields(name('x'));
      const { [cloud.incomplete.drop]: _dropped, ...incomplete } = fields;
      expect(configError(incomplete)).toBe(`${misconfigured}SEAL_MANAGED_KEY: ${cloud.incomplete.message}`);
      // The same words as the API's: entry.ts's own message.
      let apiMessage = '';
      try {
        buildEntry({ type: ({ awskms: 'cloudakms', azurekeyvault: 'cloudbkeyvault', gcpckms: 'cloudckms' } as const)[type], name: 'k', raw: incomplete, previous: null, newId: () => '' });
      } catch (e) {
        apiMessage = (e as CofferError).errors[0];
      }
      expect(apiMessage).toBe(cloud.incomplete.message);
      expect(configError({ ...fields, allow_generate_key: 'perhaps' })).toMatch(new RegExp(`^${escape(misconfigured)}SEAL_MANAGED_KEY: error converting input "perhaps" for field "allow_generate_key"`));
      // Another backend's field: entry.ts's message; a field no backend has: most likely a typo.
      const foreign = type === 'awskms' ? 'vault_name' : 'kms_key';
      expect(configError({ ...fields, [foreign]: 'x' })).toMatch(new RegExp(`^${escape(misconfigured)}SEAL_MANAGED_KEY: "${foreign}" is not a field of \\w+ \\(${type}\\) managed keys$`));
      expect(configError({ ...fields, key_nmae: 'x' })).toMatch(new RegExp(`^${escape(misconfigured)}SEAL_MANAGED_KEY: unknown field "key_nmae": the fields of ${type} managed keys are .*, and "allow_generate_key"$`));
    });

    it('refuses what does not apply to the seal key, and keys that cannot encrypt', () => {
      const fields = cloud.fields(name('x'));
      expect(configError({ ...fields, usages: 'sign,verify', any_mount: true })).toBe(
        `${misconfigured}SEAL_MANAGED_KEY: "usages", "any_mount" do not apply to the seal's key: it only encrypts and decrypts (usages encrypt,decrypt) and is never replaced; leave them out`,
      );
      expect(configError({ ...fields, ...cloud.notForEncryption.fields })).toBe(`${misconfigured}${cloud.notForEncryption.message}`);
    });

    it('never puts a secret into a message, even a malformed one', () => {
      const secretField = { awskms: 'secret_key', azurekeyvault: 'client_secret', gcpckms: 'credentials' }[type];
      const nested = { value: `hidden-${run}-secret-value` };
      const error = configError({ ...cloud.fields(name('x')), [secretField]: nested })!;
      expect(error).toMatch(new RegExp(`^${escape(misconfigured)}SEAL_MANAGED_KEY: `));
      expect(error).not.toContain(nested.value);
      const other = configError({ ...cloud.fields(name('x')), [cloud.incomplete.drop]: undefined, allow_generate_key: 'maybe' })!;
      expect(other).toMatch(new RegExp(`^${escape(misconfigured)}SEAL_MANAGED_KEY: `));
      for (const s of cloud.secrets) expect(other).not.toContain(s);
    });
  });

  describe('the key', () => {
    it('is not generated unless allow_generate_key is true', async () => {
      const n = name('not-allowed');
      const e = await failure(sealOf('not-allowed', { allow_generate_key: false }).encrypt(randomBytes(32), 'root-key'));
      expect(e.status).toBe(400);
      expect(e.message).toMatch(new RegExp(`^${type} seal: the ${escape(cloud.ref(n))} does not exist.*: .*, or set "allow_generate_key": true in SEAL_MANAGED_KEY to have sys/init create it$`));
      expect(await cloud.emulated(n)).toBeUndefined();
    });

    it('is not generated once the cluster is initialised, nor to decrypt', async () => {
      const n = name('initialised');
      const e = await failure(sealOf('initialised', {}, { initialized: () => true }).encrypt(randomBytes(32), 'unseal-progress'));
      expect(e.message).toMatch(new RegExp(`^${type} seal: the ${escape(cloud.ref(n))} does not exist.*: the key this cluster was sealed with is missing, or SEAL_MANAGED_KEY names another key$`));
      const blob = await sealOf('main').encrypt(randomBytes(32), 'root-key');
      expect((await failure(sealOf('initialised').decrypt(blob, 'root-key'))).message).toMatch(/the key this cluster was sealed with is missing/);
      expect(await cloud.emulated(n)).toBeUndefined();
    });

    it('is generated at the first encrypt when allowed (an RSA encryption key), then found again', async () => {
      const n = name('generated');
      expect(await cloud.emulated(n)).toBeUndefined();
      const blob = await sealOf('generated', {}, { initialized: () => false }).encrypt(utf8('hello'), 'root-key');
      const key = await cloud.emulated(n);
      expect(key?.facts).toEqual(cloud.generated);
      expect(blobJson(blob).key_sha256).toBe(await sha256Hex(key!.spki));
      // A new instance (a restart) without generation finds it and opens the blob; nothing more is created.
      expect(fromUtf8(await sealOf('generated', { allow_generate_key: false }).decrypt(blob, 'root-key'))).toBe('hello');
      expect((await cloud.emulated(n))?.facts).toEqual(cloud.generated);
    });

    it('may be made outside Coffer', async () => {
      await cloud.makeUsable(name('outside'));
      const seal = sealOf('outside', { allow_generate_key: false });
      expect(fromUtf8(await seal.decrypt(await seal.encrypt(utf8('made outside'), 'root-key'), 'root-key'))).toBe('made outside');
    });

    it('must be an RSA key for encryption', async () => {
      const message = await cloud.makeUnfit(name('unfit'));
      const e = await failure(sealOf('unfit', { allow_generate_key: false }).encrypt(randomBytes(32), 'root-key'));
      expect(e.status).toBe(400);
      expect(e.message).toMatch(message);
    });
  });

  describe('the envelope', () => {
    let seal: CloudKmsSeal;
    const secret = randomBytes(32);
    let blob: Uint8Array;
    beforeAll(async () => {
      seal = sealOf('main');
      blob = await seal.encrypt(secret, 'root-key');
    });

    it('round-trips, also through another instance (a restart)', async () => {
      expect(toHex(await seal.decrypt(blob, 'root-key'))).toBe(toHex(secret));
      expect(toHex(await sealOf('main', { allow_generate_key: false }).decrypt(blob, 'root-key'))).toBe(toHex(secret));
      const big = randomBytes(5000);
      expect(toHex(await seal.decrypt(await seal.encrypt(big, 'recovery'), 'recovery'))).toBe(toHex(big));
      expect((await seal.decrypt(await seal.encrypt(new Uint8Array(0), 'empty'), 'empty')).length).toBe(0);
    });

    it('stores a versioned JSON blob naming the key and the OAEP hash, without the plaintext', async () => {
      const b = blobJson(blob);
      expect(Object.keys(b)).toEqual(['seal', 'v', 'key', 'key_sha256', 'oaep_hash', 'wrapped_key', 'ciphertext']);
      const key = await cloud.emulated(name('main'));
      expect(b).toMatchObject({ seal: type, v: 1, key: cloud.blobKey(name('main')), key_sha256: await sha256Hex(key!.spki), oaep_hash: cloud.oaepHash });
      expect(fromBase64(b.wrapped_key as string)!.length).toBe(256);
      expect(fromBase64(b.ciphertext as string)!.length).toBe(12 + 32 + 16);
      for (const form of [secret, utf8(toHex(secret)), utf8(toBase64(secret)), secret.subarray(0, 8)]) expect(contains(blob, form)).toBe(false);
      for (const s of cloud.secrets) expect(fromUtf8(blob)).not.toContain(s);
      const again = blobJson(await seal.encrypt(secret, 'root-key'));
      expect(again.wrapped_key).not.toBe(b.wrapped_key);
      expect(again.ciphertext).not.toBe(b.ciphertext);
    });

    it('refuses another context', async () => {
      const e = await failure(seal.decrypt(blob, 'recovery'));
      expect(e.status).toBe(400);
      expect(e.message).toBe(`${type} seal: the stored recovery fails authentication: it was damaged or tampered with, or sealed for another purpose`);
    });

    it('refuses a blob of another key, naming both keys', async () => {
      const other = sealOf('other');
      const otherBlob = await other.encrypt(secret, 'root-key');
      const e = await failure(seal.decrypt(otherBlob, 'root-key'));
      expect(e.message).toMatch(
        new RegExp(
          `^${type} seal: the stored root-key was sealed by another .* key \\(${escape(cloud.blobKey(name('other')))}, public key SHA-256 [0-9a-f]{16}…\\), but the ${escape(cloud.ref(name('main')))} has public key SHA-256 [0-9a-f]{16}…: set SEAL_MANAGED_KEY to the key this cluster was initialised with$`,
        ),
      );
      // Relabelled to claim this key: the cloud cannot unwrap another key's data key.
      const forged = withBlob(otherBlob, (b) => {
        b.key_sha256 = blobJson(blob).key_sha256;
        b.key = blobJson(blob).key;
      });
      expect((await failure(seal.decrypt(forged, 'root-key'))).message).toBe(
        `${type} seal: the ${cloud.ref(name('main'))} cannot unwrap the data key of the stored root-key: the value was damaged or tampered with`,
      );
    });

    it('refuses tampered blobs', async () => {
      const wrappedFlip = withBlob(blob, (b) => (b.wrapped_key = flipByteB64(b.wrapped_key as string, 100)));
      expect((await failure(seal.decrypt(wrappedFlip, 'root-key'))).message).toMatch(/cannot unwrap the data key of the stored root-key: the value was damaged or tampered with$/);
      for (const at of [0, 20, 59]) {
        const ctFlip = withBlob(blob, (b) => (b.ciphertext = flipByteB64(b.ciphertext as string, at)));
        expect((await failure(seal.decrypt(ctFlip, 'root-key'))).message).toMatch(/fails authentication/);
      }
      // Another OAEP hash than the one the data key was wrapped with.
      const hashed = withBlob(blob, (b) => (b.oaep_hash = 'sha1'));
      expect((await failure(seal.decrypt(hashed, 'root-key'))).message).toMatch(/cannot unwrap the data key|uses OAEP with sha2-256 only|fails authentication/);
      expect((await failure(seal.decrypt(withBlob(blob, (b) => (b.ciphertext = '!!')), 'root-key'))).message).toMatch(/is damaged \(its wrapped key or ciphertext is not base64\)/);
      expect((await failure(seal.decrypt(withBlob(blob, (b) => delete b.key), 'root-key'))).message).toBe(
        `${type} seal: the stored value is damaged (a member of its ${type} seal blob is missing or malformed)`,
      );
      expect((await failure(seal.decrypt(withBlob(blob, (b) => (b.oaep_hash = 'md5')), 'root-key'))).message).toMatch(/missing or malformed/);
      expect((await failure(seal.decrypt(withBlob(blob, (b) => (b.v = 2)), 'root-key'))).message).toBe(`${type} seal: the stored value is in ${type} seal format version 2; this version reads 1`);
      expect((await failure(seal.decrypt(blob.subarray(0, blob.length - 3), 'root-key'))).message).toMatch(new RegExp(`was not sealed by the ${type} seal`));
    });

    it("names other seals' blobs, and the static seal names this one's", async () => {
      const staticSeal = new StaticKeySeal(randomBytes(32));
      expect((await failure(seal.decrypt(await staticSeal.encrypt(secret, 'root-key'), 'root-key'))).message).toBe(
        `${type} seal: the stored value was not sealed by the ${type} seal: this cluster was initialised with another seal type (static, SEAL_KEY?); migrating between seal types is not supported`,
      );
      await expect(staticSeal.decrypt(blob, 'root-key')).rejects.toThrow(`the stored root key was sealed by the ${type} seal, not the static one: set SEAL_TYPE=${type} (migrating between seal types is not supported)`);
      for (const other of ['pkcs11', ...CLOUDS.map((c) => c.type).filter((t) => t !== type)]) {
        const foreign = withBlob(blob, (b) => (b.seal = other));
        expect((await failure(seal.decrypt(foreign, 'root-key'))).message).toBe(
          `${type} seal: the stored value was sealed by the ${other} seal, not the ${type} one: set SEAL_TYPE=${other} (migrating between seal types is not supported)`,
        );
      }
    });
  });

  describe('credentials and reachability', () => {
    let blob: Uint8Array;
    beforeAll(async () => {
      blob = await sealOf('main').encrypt(utf8('x'), 'root-key');
    });

    it('wrong credentials: 400 saying so, without the secret', async () => {
      const wrong = cloud.wrongCredentials(name('main'));
      const seal = new CloudKmsSeal(type, vars(wrong.fields), deps());
      const e = await failure(seal.decrypt(blob, 'root-key'));
      expect(e.status).toBe(400);
      expect(e.message).toMatch(new RegExp(`^${type} seal: cannot read the key \\(the ${escape(cloud.ref(name('main')))}\\): `));
      expect(e.message).toMatch(wrong.message);
      expect(e.message).not.toContain(wrong.secret);
      for (const s of cloud.secrets) expect(e.message).not.toContain(s);
      expect((await failure(seal.encrypt(utf8('x'), 'root-key'))).message).toBe(e.message);
    });

    it('an unreachable cloud: 502 saying so', async () => {
      const { deps: closed, fields } = cloud.unreachable(name('main'));
      const e = await failure(new CloudKmsSeal(type, vars(fields), closed).decrypt(blob, 'root-key'));
      expect(e.status).toBe(502);
      expect(e.message).toMatch(new RegExp(`^${type} seal: cannot read the key \\(the ${escape(cloud.ref(name('main')))}\\): .*(cannot be reached|reach)`));
    });
  });

  describe('the seal state machine on it', () => {
    const physical = new MemoryPhysical();
    let recovery: string[] = [];
    /** A SealState on `physical` with a new seal (a restart, each call). */
    function node(over: Record<string, unknown> = {}, sealed?: Seal) {
      let core: SealState | null = null;
      const seal = sealed ?? sealOf('cluster', over, { initialized: () => core!.isInitialized() });
      core = new SealState(physical, seal, { createRootToken: async () => undefined, keyringRotated: async () => undefined });
      return core;
    }

    it(`initialises (generating the key), reports type ${type}, and stores only ${type} blobs`, async () => {
      expect(await cloud.emulated(name('cluster'))).toBeUndefined();
      const core = node();
      expect(await core.sealStatus()).toMatchObject({ type, initialized: false, sealed: true, recovery_seal: true, recovery_seal_type: 'shamir' });
      const out = await core.init({ recovery_shares: 3, recovery_threshold: 2 });
      recovery = out.recovery_keys as string[];
      expect((await cloud.emulated(name('cluster')))?.facts).toEqual(cloud.generated);
      expect(await core.sealStatus()).toMatchObject({ type, initialized: true, sealed: false, t: 2, n: 3 });
      for (const k of ['core/root-key', 'core/recovery']) expect(blobJson(physical.get(k)!)).toMatchObject({ seal: type, v: 1, key: cloud.blobKey(name('cluster')) });
      expect(JSON.parse(fromUtf8(physical.get('core/seal-config')!))).toEqual({ type, recovery_shares: 3, recovery_threshold: 2 });
    });

    it('unseals by itself after a restart, and rotates', async () => {
      const core = node({ allow_generate_key: false });
      expect(await core.isSealed()).toBe(false);
      await core.rotate();
      expect((await node().keyStatus()).term).toBe(2);
    });

    it('after sys/seal: stays sealed across a restart until the recovery shares are given', async () => {
      await node().sealNow();
      const core = node();
      expect(await core.isSealed()).toBe(true);
      expect((await core.sealStatus()).warnings).toBeUndefined();
      expect(await core.unseal({ key: recovery[0] })).toMatchObject({ type, sealed: true, progress: 1 });
      expect(blobJson(physical.get('core/unseal-progress')!).seal).toBe(type);
      expect(await node().unseal({ key: recovery[1] })).toMatchObject({ type, sealed: false });
    });

    it('credentials revoked at the cloud: sealed, saying why (no secret); unsealed on a later request once they work again', async () => {
      const why = await cloud.revoke();
      try {
        const core = node();
        expect(await core.isSealed()).toBe(true);
        const status = await core.sealStatus();
        expect(status).toMatchObject({ type, initialized: true, sealed: true });
        expect(status.warnings).toEqual([expect.stringMatching(new RegExp(`^${type} seal: cannot read the key \\(the ${escape(cloud.ref(name('cluster')))}\\): `))]);
        expect((status.warnings as string[])[0]).toMatch(why);
        for (const s of cloud.secrets) expect(JSON.stringify(status)).not.toContain(s);
        const e = (await core.unseal({ key: recovery[0] }).catch((err) => err)) as CofferError;
        expect(e.status).toBe(400);
        expect(e.errors[0]).toMatch(why);
        await cloud.restore();
        expect(await core.isSealed()).toBe(false);
        expect((await core.sealStatus()).warnings).toBeUndefined();
      } finally {
        await cloud.restore();
      }
    });

    it('another key: sealed, naming the key the root key was sealed with', async () => {
      const core = node({}, sealOf('main'));
      expect(await core.isSealed()).toBe(true);
      expect((await core.sealStatus()).warnings).toEqual([expect.stringContaining(`sealed by another`)]);
      expect((await core.sealStatus()).warnings).toEqual([expect.stringContaining(`(${cloud.blobKey(name('cluster'))}, public key SHA-256`)]);
    });

    it(`a misconfiguration: type ${type}, sealed, the reason in seal-status and in the refusal of init`, async () => {
      const { seal, error } = cloudSealFromEnv(type, {}, deps());
      const fresh = new SealState(new MemoryPhysical(), seal, { createRootToken: async () => undefined, keyringRotated: async () => undefined }, { sealConfigError: error });
      expect(await fresh.sealStatus()).toMatchObject({ type, initialized: false, sealed: true, warnings: [error] });
      const e = (await fresh.init({ recovery_shares: 1, recovery_threshold: 1 }).catch((err) => err)) as CofferError;
      expect(e.status).toBe(400);
      expect(e.errors).toEqual([error]);
      const onData = new SealState(physical, seal, { createRootToken: async () => undefined, keyringRotated: async () => undefined }, { sealConfigError: error });
      expect(await onData.isSealed()).toBe(true);
      expect((await onData.sealStatus()).warnings).toEqual([error]);
    });
  });
});

describe('the OAEP hash follows the key', () => {
  it("Google Cloud KMS: the algorithm's hash (SHA-1 here), recorded in the blob", async () => {
    const fields = { ...gcp.fields(`sha1-${run}`), algorithm: 'RSA_DECRYPT_OAEP_2048_SHA1', allow_generate_key: true };
    const seal = new CloudKmsSeal('gcpckms', { SEAL_MANAGED_KEY: JSON.stringify(fields) }, deps());
    const blob = await seal.encrypt(utf8('sha1'), 'root-key');
    expect(blobJson(blob).oaep_hash).toBe('sha1');
    expect(fromUtf8(await seal.decrypt(blob, 'root-key'))).toBe('sha1');
  });
});
