// The real-client suite's world, started once (vitest globalSetup): the Worker built as `npm start`
// builds it, one launcher every client test talks to, a real OpenID provider, the AWS IAM/STS
// emulator (the aws engine's AWS; each test module takes a tenant of its own), the three cloud KMS
// emulators managed keys reach (AWS KMS by each key's endpoint, Azure Key Vault and Google Cloud KMS
// through the launcher's AZURE_* and GOOGLE_CLOUDKMS_URL; each test module registers a tenant,
// vault or project of its own through their control APIs), and a small helper service for what a
// client library does not do itself — minting JWTs with a key the JWT method is configured with,
// and signing a user in at the provider like a browser would.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import type { TestProject } from 'vitest/node';
// @ts-expect-error -- plain ESM helper without type declarations
import { build, ROOT } from '../../scripts/miniflare-server.mjs';
// @ts-expect-error -- plain ESM helper without type declarations
import { LIBRARY, TOKEN_LABEL } from '../../scripts/hsm-local.mjs';
import { Browser } from '../e2e/oidc-browser';
import { startIdP } from '../e2e/oidc-provider';
import { startDrPair } from '../e2e/dr-pair';
import { readInit, removeTempDirs, startLauncher, tempDir } from '../e2e/processes';
import { startAwsEmulator } from '../emulators/aws-iam-sts/server';
import { startKmsEmulator } from '../emulators/aws-kms/server';
import { startAzureEmulator } from '../emulators/azure-keyvault/server';
import { startGcpKmsEmulator } from '../emulators/gcp-kms/server';
import { buildTestPlugins } from '../global/plugins';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The launcher under test, its root token and its recovery key. */
    coffer: { url: string; rootToken: string; recoveryKey: string; dataDir: string };
    oidcIssuer: string;
    /** The helper service (below). */
    clientHelper: string;
    /** The AWS IAM/STS emulator, http://127.0.0.1:<port>: a module's account is `${awsEmulator}/t/<name>`. */
    awsEmulator: string;
    /** The launcher's SoftHSM2 bridge (COFFER_HSM_BRIDGE=softhsm2): what a pkcs11 managed key names. */
    cofferHsm: { library: string; tokenLabel: string; pin: string };
    /**
     * The cloud KMS emulators, http://127.0.0.1:<port> each: AWS KMS (a module's account is
     * `${aws}/t/<name>`, named by a key's endpoint), Azure (Entra ID and Key Vault: the launcher's
     * AZURE_AUTHORITY_HOST, and AZURE_KEYVAULT_URL `${azure}/vaults/{vault_name}`; tenants by id) and
     * Google Cloud KMS (the launcher's GOOGLE_CLOUDKMS_URL; projects by name).
     */
    cloudKms: { aws: string; azure: string; gcp: string };
    /** The launcher's plugin directory, and the plugins built into it (command = `<name>.js`). */
    clientPlugins: { dir: string; sha256: Record<'totp' | 'userpass' | 'misbehave', string> };
    /** Two more launchers for hvac's DR test (a future primary, and a secondary sharing its seal key). */
    drPair: {
      primary: { url: string; rootToken: string; recoveryKeys: string[] };
      secondary: { url: string; rootToken: string };
    };
  }
}

/** JSON body of a request to the helper. */
async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
}

/**
 * POST /jwt {claims, ttl?}: a JWT signed with the helper's ES256 key (exp, iat, nbf filled in);
 * GET /jwt/public-key: that key as PEM, for jwt_validation_pubkeys;
 * POST /sign-in {auth_url, user, password, redirect_uri}: the URL the provider redirects the user's
 * browser to (carrying code and state), after filling in its login and consent pages.
 */
async function startHelper(): Promise<{ url: string; close(): Promise<void> }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const publicPem = await exportSPKI(publicKey);
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    (async () => {
      if (req.method === 'GET' && req.url === '/jwt/public-key') return reply(200, { public_key: publicPem });
      const body = await readJson(req);
      if (req.method === 'POST' && req.url === '/jwt') {
        const now = Math.floor(Date.now() / 1000);
        const ttl = typeof body.ttl === 'number' ? body.ttl : 300;
        const jwt = await new SignJWT({ iat: now, nbf: now, exp: now + ttl, ...(body.claims as JWTPayload) })
          .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
          .sign(privateKey);
        return reply(200, { jwt });
      }
      if (req.method === 'POST' && req.url === '/sign-in') {
        const result = await new Browser().signIn(String(body.auth_url), String(body.user), String(body.password), String(body.redirect_uri));
        if (result.kind !== 'redirect') return reply(502, { error: `the provider answered ${JSON.stringify(result)}` });
        return reply(200, { url: result.url.toString() });
      }
      reply(404, { error: 'unknown helper route' });
    })().catch((e: unknown) => reply(500, { error: String(e) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  build(path.join(ROOT, 'wrangler.toml'), path.join(ROOT, 'dist'));
  const idp = await startIdP();
  const helper = await startHelper();
  const aws = await startAwsEmulator();
  const [awsKms, azure, gcp] = await Promise.all([startKmsEmulator(), startAzureEmulator(), startGcpKmsEmulator()]);
  const dataDir = tempDir('coffer-clients-');
  // The plugins, built into the launcher's default plugin directory before it starts.
  const pluginDir = path.join(dataDir, 'plugins');
  const plugins = await buildTestPlugins(pluginDir);
  // With a local HSM bridge on SoftHSM2, so that clients can use pkcs11 managed keys; the Worker
  // reaches Entra ID, Key Vault and Cloud KMS at the emulators.
  const server = await startLauncher(dataDir, {
    COFFER_HSM_BRIDGE: 'softhsm2',
    // Every handed-off path is handed off, cheap AES requests included, so the offload suites'
    // counts do not depend on the cost threshold (its estimates have unit tests).
    OFFLOAD_MIN_COST_US: '0',
    AZURE_AUTHORITY_HOST: azure.base,
    AZURE_KEYVAULT_URL: `${azure.base}/vaults/{vault_name}`,
    GOOGLE_CLOUDKMS_URL: gcp.base,
  });
  const init = readInit(dataDir);
  // DR promotes and demotes whole deployments: hvac's DR test gets a pair of its own.
  const pair = await startDrPair().catch(async (e: unknown) => {
    await server.stop('SIGTERM');
    throw e;
  });
  project.provide('drPair', {
    primary: { url: pair.primary.url, rootToken: pair.primary.rootToken, recoveryKeys: pair.primary.recoveryKeys },
    secondary: { url: pair.secondary.url, rootToken: pair.secondary.rootToken },
  });
  project.provide('coffer', { url: server.url, rootToken: init.root_token, recoveryKey: init.recovery_keys[0], dataDir });
  project.provide('oidcIssuer', idp.issuer);
  project.provide('clientHelper', helper.url);
  project.provide('awsEmulator', aws.base);
  project.provide('cloudKms', { aws: awsKms.base, azure: azure.base, gcp: gcp.base });
  project.provide('clientPlugins', { dir: pluginDir, sha256: { totp: plugins.totp.sha256, userpass: plugins.userpass.sha256, misbehave: plugins.misbehave.sha256 } });
  project.provide('cofferHsm', { library: LIBRARY, tokenLabel: TOKEN_LABEL, pin: readFileSync(path.join(dataDir, 'hsm', 'pin'), 'utf8').trim() });
  return async () => {
    await Promise.all([server.stop('SIGTERM'), pair.stop()]);
    await Promise.all([idp.close(), helper.close(), aws.close(), awsKms.close(), azure.close(), gcp.close()]);
    removeTempDirs();
  };
}
