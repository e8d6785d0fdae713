// `npm start` with COFFER_HSM_BRIDGE=softhsm2 (scripts/hsm-local.mjs): the launcher keeps a
// SoftHSM2 token, the link's certificates and the bridge's configuration under <dataDir>/hsm/,
// starts the bridge as its child and binds it to the Worker. pkcs11 managed keys made with
// node-vault generate and sign at the token; after a restart on the same data directory the keys
// still sign (the token and the PIN persisted); the bridge goes with the launcher, whether the
// launcher stops in order or is killed; and nothing is left in the system's temporary folder.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHsmBridge } from '../global/hsm-bridge';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForLauncherHsm0';
type Client = ReturnType<typeof nodeVault>;

/** The pids of `parent`'s children (read from /proc), those running the HSM bridge unless `all`. */
function bridgeChildren(parent: number, all = false): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === parent && (all || cmdline.includes('hsm-bridge/src/main.mjs'))) pids.push(Number(entry));
    } catch {
      // the process ended while being read
    }
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, ms = 15_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

describe('npm start with COFFER_HSM_BRIDGE=softhsm2', () => {
  const tmpBefore = new Set(readdirSync(os.tmpdir()));
  let dataDir = '';
  let server: Server | undefined;
  const hsmDir = () => path.join(dataDir, 'hsm');
  const pin = () => readFileSync(path.join(hsmDir(), 'pin'), 'utf8');
  const client = (): Client => nodeVault({ endpoint: server!.url, token: ROOT_TOKEN, noCustomHTTPVerbs: true });
  const start = async () => {
    server = await startLauncher(dataDir, { COFFER_HSM_BRIDGE: 'softhsm2', COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
    const bridges = bridgeChildren(server.proc.pid!);
    expect(bridges).toHaveLength(1);
    return bridges[0];
  };
  const signs = async (name: string, body: Record<string, unknown> = {}) => {
    // node-vault rejects any answer but 2xx; test/sign answers 204 when the HSM signed and verified.
    await client().write(`sys/managed-keys/pkcs11/${name}/test/sign`, body);
  };

  beforeAll(async () => {
    dataDir = tempDir('coffer-e2e-launcher-hsm-');
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  let firstPin = '';
  it('starts the bridge, and pkcs11 keys made with node-vault generate and sign (ECDSA P-256, RSA 2048 PSS)', async () => {
    const bridge = await start();
    firstPin = pin();
    expect(firstPin).toMatch(/^[0-9a-f]{32}$/);
    const vault = client();
    await vault.write('sys/managed-keys/pkcs11/ec-key', { library: 'softhsm', token_label: 'coffer', pin: firstPin, key_label: 'ec-key', mechanism: '0x1041', curve: 'P256', allow_generate_key: true });
    await vault.write('sys/managed-keys/pkcs11/rsa-pss', { library: 'softhsm', token_label: 'coffer', pin: firstPin, key_label: 'rsa-pss', mechanism: '0x000D', key_bits: 2048, allow_generate_key: true });
    await signs('ec-key');
    await signs('ec-key', { hash_algorithm: 'sha2-384' });
    await signs('rsa-pss', { use_pss: true });
    await signs('rsa-pss', { use_pss: true, hash_algorithm: 'sha2-512' });
    const key = await vault.read('sys/managed-keys/pkcs11/ec-key');
    expect(key.data).toMatchObject({ library: 'softhsm', token_label: 'coffer', pin: 'redacted', mechanism: 0x1041 });

    // A wrong PIN reaches the token and is refused there.
    await vault.write('sys/managed-keys/pkcs11/wrong-pin', { library: 'softhsm', token_label: 'coffer', pin: 'not-the-pin', key_label: 'ec-key', mechanism: '0x1041', curve: 'P256' });
    await expect(signs('wrong-pin')).rejects.toMatchObject({ response: { statusCode: expect.any(Number) } });

    // The token's state and secrets are the owner's alone.
    expect(statSync(hsmDir()).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(hsmDir(), 'pin')).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(hsmDir(), 'so-pin')).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(hsmDir(), 'client.key')).mode & 0o777).toBe(0o600);
    // The PIN is not in the launcher's output.
    expect(server!.output()).not.toContain(firstPin);

    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    expect(await gone(bridge)).toBe(true);
  });

  it('restarts on the same data directory: same token and PIN, the keys still sign', async () => {
    expect(firstPin).not.toBe('');
    const bridge = await start();
    expect(pin()).toBe(firstPin);
    await signs('ec-key');
    await signs('rsa-pss', { use_pss: true });
    // One more key on the reused token.
    await client().write('sys/managed-keys/pkcs11/ec-384', { library: 'softhsm', token_label: 'coffer', pin: pin(), key_label: 'ec-384', mechanism: '0x1041', curve: 'P384', allow_generate_key: true });
    await signs('ec-384');
    expect(await server!.stop('SIGINT')).toBe(0);
    server = undefined;
    expect(await gone(bridge)).toBe(true);
  });

  it('leaves no bridge behind when the launcher is killed outright', async () => {
    const bridge = await start();
    const launcher = server!;
    await signs('ec-key');
    const children = bridgeChildren(launcher.proc.pid!, true);
    expect(children).toContain(bridge);
    await launcher.stop('SIGKILL');
    server = undefined;
    // The bridge notices its stdin (a pipe from the launcher) closing and stops itself.
    expect(await gone(bridge)).toBe(true);
    // workerd (Miniflare's child) outlives a killed launcher: not this test's subject, but it must
    // not outlive the test either.
    for (const pid of children.filter((p) => p !== bridge && alive(p))) {
      process.kill(pid, 'SIGKILL');
      expect(await gone(pid)).toBe(true);
    }
  });

  it('uses a bridge run elsewhere: COFFER_HSM_BRIDGE_URL with the client pair and the CA as PEM files', async () => {
    const hsm = await startHsmBridge({ tokenLabel: 'coffer-external' });
    try {
      const files = tempDir('coffer-e2e-launcher-hsm-pem-');
      const file = (name: string, pem: string) => {
        writeFileSync(path.join(files, name), pem);
        return path.join(files, name);
      };
      server = await startLauncher(tempDir('coffer-e2e-launcher-hsm-ext-'), {
        COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN,
        COFFER_HSM_BRIDGE_URL: hsm.url,
        COFFER_HSM_BRIDGE_CLIENT_CERT: file('client.pem', hsm.clientCertPem),
        COFFER_HSM_BRIDGE_CLIENT_KEY: file('client.key', hsm.clientKeyPem),
        COFFER_HSM_BRIDGE_CA: file('ca.pem', hsm.caPem),
      });
      expect(bridgeChildren(server.proc.pid!)).toEqual([]);
      await client().write('sys/managed-keys/pkcs11/ext', { library: hsm.library, token_label: hsm.tokenLabel, pin: hsm.pin, key_label: 'ext', mechanism: '0x0001', key_bits: 2048, allow_generate_key: true });
      await signs('ext');
      expect(await server.stop('SIGTERM')).toBe(0);
      server = undefined;
    } finally {
      await hsm.stop();
    }
  });

  it('fails clearly on a bad setting', async () => {
    await expect(startLauncher(tempDir('coffer-e2e-launcher-hsm-bad-'), { COFFER_HSM_BRIDGE: 'pkcs11' })).rejects.toThrow(/COFFER_HSM_BRIDGE=pkcs11: the only value is "softhsm2"/);
    await expect(startLauncher(tempDir('coffer-e2e-launcher-hsm-bad-'), { COFFER_HSM_BRIDGE_URL: 'https://127.0.0.1:1' })).rejects.toThrow(
      /COFFER_HSM_BRIDGE_URL needs COFFER_HSM_BRIDGE_CLIENT_CERT, COFFER_HSM_BRIDGE_CLIENT_KEY, COFFER_HSM_BRIDGE_CA too/,
    );
  });

  it('leaves nothing in the temporary folder but its own data directories', () => {
    const added = readdirSync(os.tmpdir()).filter((e) => !tmpBefore.has(e));
    expect(added.filter((e) => !e.startsWith('coffer-e2e-launcher-hsm-'))).toEqual([]);
  });
});
