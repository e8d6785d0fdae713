// Azure Key Vault managed keys checked against the official SDK: Coffer (the launcher, `npm start`)
// and @azure/keyvault-keys + @azure/identity share one emulated vault (test/emulators/azure-keyvault/).
// Each authenticates as an app registration of its own, so the emulator's Entra ID and its vault's
// token checks are exercised by the real MSAL / SDK too. The SDK must read the key Coffer generated
// (same public key) and accept signatures Coffer made (transit PKCS#1 v1.5 and PSS, a PKI root's
// self-signature) both at the vault (CryptographyClient.verify) and locally (verifyData); Coffer must
// use keys the SDK created (EC P-256 through transit, RSA 3072 under a PKI root).
//
// How the SDK reaches the emulator: MSAL takes only https authorities, and the SDK reads key ids as
// <vault URL>/keys/<name>/<version> (so a vault must sit at a host's root) and checks the 401
// challenge's resource against the vault's host name. The emulator therefore also listens with TLS
// (a throwaway self-signed certificate made by openssl in a temporary directory), and the SDK's
// pipelines get that certificate as their only CA plus a DNS lookup that sends every name to
// 127.0.0.1 (core-rest-pipeline passes `tlsOptions` to its https.Agent): the vault is
// https://<vault>.vault.azure.net:<port>, exactly as in Azure but for the port. Coffer's side stays
// on plain http through AZURE_AUTHORITY_HOST / AZURE_KEYVAULT_URL.
import { createHash, createPublicKey, type JsonWebKey as NodeJwk } from 'node:crypto';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { ClientSecretCredential } from '@azure/identity';
import { CryptographyClient, KeyClient, type JsonWebKey as AzureJwk } from '@azure/keyvault-keys';
import * as asn1js from 'asn1js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { azureEmulator } from '../emulators/azure-keyvault/client';
import { startAzureEmulator, type AzureEmulator } from '../emulators/azure-keyvault/server';
import { selfSignedCertificate } from '../emulators/azure-keyvault/tls';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForAzureKeyVault0';
const run = Math.random().toString(36).slice(2, 8);
const TENANT = '8d1e2f3a-4b5c-4d6e-8f70-000000000e2e';
const COFFER_CLIENT = 'c0ffe4e2-0000-4000-8000-00000000c0fe';
const COFFER_SECRET = `coffer~secret-${run}`;
const SDK_CLIENT = '5d4c0000-0000-4000-8000-0000000005d4';
const SDK_SECRET = `sdk~secret-${run}`;
const VAULT = `cofsdk${run}`;

type Lookup = (hostname: string, options: LookupOptions, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => void;
/** Every name is 127.0.0.1 (the https agent's connections only). */
const loopback: Lookup = (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

const b64url = (b?: Uint8Array) => Buffer.from(b ?? new Uint8Array()).toString('base64url');
const pemDer = (pem: string) => Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
/** The SDK's JWK (bytes) as SPKI DER, converted by Node. */
function spkiOfJwk(k: AzureJwk): Buffer {
  const jwk: NodeJwk = k.kty?.startsWith('EC') ? { kty: 'EC', crv: k.crv, x: b64url(k.x), y: b64url(k.y) } : { kty: 'RSA', n: b64url(k.n), e: b64url(k.e) };
  return createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'der' });
}

describe('Azure Key Vault: Coffer and the official SDK on one vault', () => {
  let emulator: AzureEmulator;
  let server: Server | undefined;
  let tlsOptions: { ca: string; lookup: Lookup };
  let credential: ClientSecretCredential;
  let keys: KeyClient;
  const ctl = () => azureEmulator(emulator.base, TENANT);
  const crypto = (id: string) => new CryptographyClient(id, credential, { serviceVersion: '7.4', tlsOptions });

  /** A Coffer API call as root; throws unless 2xx. */
  async function coffer(method: string, path: string, body?: unknown): Promise<{ status: number; data: Record<string, any> }> {
    const res = await fetch(`${server!.url}/v1/${path}`, {
      method,
      headers: { 'X-Vault-Token': ROOT_TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return { status: res.status, data: text ? (JSON.parse(text).data ?? {}) : {} };
  }
  const managedKey = (name: string, fields: Record<string, unknown>) =>
    coffer('POST', `sys/managed-keys/azurekeyvault/${name}`, {
      tenant_id: TENANT,
      client_id: COFFER_CLIENT,
      client_secret: COFFER_SECRET,
      vault_name: VAULT,
      key_name: name,
      key_type: 'RSA-HSM',
      any_mount: true,
      ...fields,
    });

  beforeAll(async () => {
    const certDir = tempDir('coffer-e2e-azure-tls-');
    const tls = selfSignedCertificate(certDir);
    emulator = await startAzureEmulator({ https: tls });
    await ctl().register({
      clients: [
        { client_id: COFFER_CLIENT, client_secret: COFFER_SECRET },
        { client_id: SDK_CLIENT, client_secret: SDK_SECRET },
      ],
      vaults: [{ name: VAULT }],
    });
    tlsOptions = { ca: tls.cert, lookup: loopback };
    credential = new ClientSecretCredential(TENANT, SDK_CLIENT, SDK_SECRET, { authorityHost: emulator.httpsBase, disableInstanceDiscovery: true, tlsOptions });
    keys = new KeyClient(`https://${VAULT}.vault.azure.net:${emulator.httpsPort}`, credential, { serviceVersion: '7.4', tlsOptions });
    server = await startLauncher(tempDir('coffer-e2e-azure-'), {
      COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN,
      AZURE_AUTHORITY_HOST: emulator.base,
      AZURE_KEYVAULT_URL: `${emulator.base}/vaults/{vault_name}`,
    });
    await coffer('POST', 'sys/mounts/transit', { type: 'transit' });
    await coffer('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
  });

  afterAll(async () => {
    await server?.stop('SIGTERM');
    await emulator?.close();
  });

  it('Coffer generates an RSA-HSM key; the SDK reads the same public key', async () => {
    await managedKey('coffer-rsa', { key_bits: '2048', allow_generate_key: true, usages: 'sign,verify' });
    expect((await coffer('POST', 'sys/managed-keys/azurekeyvault/coffer-rsa/test/sign', { use_pss: true })).status).toBe(204);
    await coffer('POST', 'transit/keys/coffer-rsa', { type: 'managed_key', managed_key_name: 'coffer-rsa' });
    const transitPem = (await coffer('GET', 'transit/keys/coffer-rsa')).data.keys['1'].public_key as string;

    const key = await keys.getKey('coffer-rsa');
    expect(key.keyType).toBe('RSA-HSM');
    expect(key.keyOperations).toEqual(['sign', 'verify']);
    expect(key.properties.enabled).toBe(true);
    expect(spkiOfJwk(key.key!).equals(pemDer(transitPem))).toBe(true);
    expect(key.key!.n!.length).toBe(256);
  });

  it("the SDK accepts Coffer's transit signatures: PKCS#1 v1.5 and PSS, at the vault and locally", async () => {
    const key = await keys.getKey('coffer-rsa');
    const input = Buffer.from('signed by coffer through azure key vault');
    const sign = async (body: Record<string, unknown>) =>
      Buffer.from(((await coffer('POST', 'transit/sign/coffer-rsa', { input: input.toString('base64'), ...body })).data.signature as string).split(':')[2], 'base64');
    const client = crypto(key.id!);

    const pkcs1 = await sign({ signature_algorithm: 'pkcs1v15' });
    expect((await client.verify('RS256', sha256(input), pkcs1)).result).toBe(true);
    expect((await client.verifyData('RS256', input, pkcs1)).result).toBe(true);
    const tampered = Buffer.from(pkcs1);
    tampered[0] ^= 1;
    expect((await client.verify('RS256', sha256(input), tampered)).result).toBe(false);

    const pss = await sign({ signature_algorithm: 'pss', salt_length: 'hash' });
    expect((await client.verify('PS256', sha256(input), pss)).result).toBe(true);
    expect((await client.verify('PS256', sha256('something else'), pss)).result).toBe(false);
  });

  it('Coffer uses an EC P-256 key the SDK created: public key equal, JWS signatures verify at the vault', async () => {
    const created = await keys.createEcKey('sdk-ec', { curve: 'P-256', hsm: true });
    await managedKey('sdk-ec', {});
    expect((await coffer('POST', 'sys/managed-keys/azurekeyvault/sdk-ec/test/sign', {})).status).toBe(204);
    await coffer('POST', 'transit/keys/sdk-ec', { type: 'managed_key', managed_key_name: 'sdk-ec' });
    const transitPem = (await coffer('GET', 'transit/keys/sdk-ec')).data.keys['1'].public_key as string;
    expect(spkiOfJwk(created.key!).equals(pemDer(transitPem))).toBe(true);

    const input = Buffer.from('ecdsa through the vault');
    const jws = (await coffer('POST', 'transit/sign/sdk-ec', { input: input.toString('base64'), marshaling_algorithm: 'jws' })).data.signature as string;
    const raw = Buffer.from(jws.split(':')[2], 'base64url');
    expect(raw.length).toBe(64);
    const client = crypto(created.id!);
    expect((await client.verify('ES256', sha256(input), raw)).result).toBe(true);
    expect((await client.verify('ES256', sha256('not this'), raw)).result).toBe(false);
  });

  it("Coffer uses an RSA 3072 key the SDK created: a PKI root on it, whose signature the SDK verifies", async () => {
    const created = await keys.createRsaKey('sdk-rsa', { keySize: 3072 });
    await managedKey('sdk-rsa', {});
    const root = (await coffer('POST', 'pki/root/generate/kms', { managed_key_name: 'sdk-rsa', common_name: 'Azure SDK Root', ttl: '8760h' })).data;
    const der = pemDer(root.certificate as string);
    // The certificate's three parts, as encoded: TBSCertificate, signatureAlgorithm, signature.
    const parsed = asn1js.fromBER(new Uint8Array(der));
    expect(parsed.offset).toBe(der.length);
    const [tbs, , signature] = (parsed.result as asn1js.Sequence).valueBlock.value;
    const tbsDer = new Uint8Array(tbs.valueBeforeDecodeView);
    const sig = new Uint8Array((signature as asn1js.BitString).valueBlock.valueHexView);
    const spki = new Uint8Array(((tbs as asn1js.Sequence).valueBlock.value[6] as asn1js.Sequence).valueBeforeDecodeView);
    expect(Buffer.from(spki).equals(spkiOfJwk(created.key!))).toBe(true);

    const client = crypto(created.id!);
    expect((await client.verify('RS256', sha256(tbsDer), sig)).result).toBe(true);
    expect((await client.verifyData('RS256', tbsDer, sig)).result).toBe(true);
  });

  it('both implementations authenticated against the emulated Entra ID; a wrong secret is refused to the SDK too', async () => {
    const state = await ctl().state();
    expect(state.tokens_issued[SDK_CLIENT]).toBeGreaterThanOrEqual(1);
    expect(state.tokens_issued[COFFER_CLIENT]).toBeGreaterThanOrEqual(1);
    const calls = await ctl().calls();
    expect(calls.filter((c) => c.api === 'keyvault' && c.status === 200).map((c) => c.client_id)).toEqual(expect.arrayContaining([SDK_CLIENT, COFFER_CLIENT]));
    // The SDK starts with an unauthenticated request and its 401 challenge, as it does against Azure.
    expect(calls.filter((c) => c.api === 'keyvault' && c.client_id === undefined).map((c) => `${c.status}:${c.code}`)).toContain('401:Unauthorized');

    const wrong = new ClientSecretCredential(TENANT, SDK_CLIENT, 'not-the-secret', { authorityHost: emulator.httpsBase, disableInstanceDiscovery: true, tlsOptions });
    const refused = new KeyClient(`https://${VAULT}.vault.azure.net:${emulator.httpsPort}`, wrong, { serviceVersion: '7.4', tlsOptions });
    await expect(refused.getKey('coffer-rsa')).rejects.toThrow(/AADSTS7000215/);
  });
});
