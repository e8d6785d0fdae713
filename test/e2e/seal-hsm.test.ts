// `npm start` with COFFER_SEAL=pkcs11 on the local SoftHSM2 bridge (COFFER_HSM_BRIDGE=softhsm2):
// the root key is wrapped by the RSA key "coffer-seal" made on the launcher's token at the first
// init, and no seal key is on disk. Driven by node-vault (status, seal, unseal, health): the
// cluster reports type pkcs11 and the recovery seal, unseals by itself after a restart (the HSM
// unwraps the root key), stays sealed after sys/seal until the recovery key is given (as the
// static seal does: test/e2e/launcher.test.ts), survives sys/rotate and a restart, and with a
// wrong PIN stays sealed saying why. The launcher refuses pkcs11 without a bridge, an unknown
// seal type, and a data directory that began with another seal.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readInit, startLauncher, tempDir, type Server } from './processes';

type Client = ReturnType<typeof nodeVault>;
const client = (url: string, token?: string): Client => nodeVault({ apiVersion: 'v1', endpoint: url, token, noCustomHTTPVerbs: true });

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** The launcher's pkcs11 seal blobs begin so (src/managed-keys/seal.ts): the root key wrapped by the HSM key. */
const SEAL_BLOB = Buffer.from('{"seal":"pkcs11","v":1,"key_label":"coffer-seal","key_id":"","key_sha256":"');

describe('npm start with COFFER_SEAL=pkcs11 and COFFER_HSM_BRIDGE=softhsm2', () => {
  const dataDir = tempDir('coffer-e2e-seal-hsm-');
  const secret = `seal-hsm-plaintext-${Date.now()}`;
  let server: Server | undefined;
  let init: ReturnType<typeof readInit>;
  let vault: Client;

  const start = async (env: Record<string, string> = {}) => {
    server = await startLauncher(dataDir, { COFFER_SEAL: 'pkcs11', COFFER_HSM_BRIDGE: 'softhsm2', ...env });
    vault = client(server.url, init?.root_token);
    return server;
  };
  const restart = async (env: Record<string, string> = {}) => {
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    return start(env);
  };

  beforeAll(async () => {
    await start();
    init = readInit(dataDir);
    vault = client(server!.url, init.root_token);
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('initialised on the pkcs11 seal: no seal key on disk, seal-status type pkcs11 with the recovery seal', async () => {
    expect(init.recovery_keys).toHaveLength(1);
    expect(existsSync(path.join(dataDir, 'seal.key'))).toBe(false);
    expect(readFileSync(path.join(dataDir, 'seal-type'), 'utf8')).toBe('pkcs11\n');
    expect(await vault.status()).toMatchObject({
      type: 'pkcs11',
      initialized: true,
      sealed: false,
      t: 1,
      n: 1,
      progress: 0,
      recovery_seal: true,
      recovery_seal_type: 'shamir',
      storage_type: 'durable-objects',
    });
    expect((await vault.status()).warnings).toBeUndefined();
    expect(await vault.health()).toMatchObject({ initialized: true, sealed: false });
  });

  it('made the RSA key "coffer-seal" on the launcher\'s token (it signs as a pkcs11 managed key)', async () => {
    const pin = readFileSync(path.join(dataDir, 'hsm', 'pin'), 'utf8');
    await vault.write('sys/managed-keys/pkcs11/seal-key', { library: 'softhsm', token_label: 'coffer', pin, key_label: 'coffer-seal', mechanism: '0x0001' });
    // 204 only when the HSM signed with the key and the signature verified (RSA PKCS#1 v1.5: an RSA key).
    await vault.write('sys/managed-keys/pkcs11/seal-key/test/sign', {});
    await vault.delete('sys/managed-keys/pkcs11/seal-key');
  });

  it('stores the root key as a pkcs11 seal blob, and no plaintext secret', async () => {
    await vault.write('secret/data/app', { data: { password: secret } });
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    const files = filesUnder(path.join(dataDir, 'do'));
    const needles = [secret, init.root_token, init.recovery_keys[0], init.recovery_keys_base64[0]];
    let blobs = 0;
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const n of needles) expect(bytes.includes(Buffer.from(n)), `${n} in ${f}`).toBe(false);
      if (bytes.includes(SEAL_BLOB)) blobs++;
    }
    expect(blobs).toBeGreaterThan(0);
  });

  it('restarts unsealed: the HSM unwraps the root key, the secret is readable', async () => {
    await start();
    expect(await vault.status()).toMatchObject({ type: 'pkcs11', sealed: false });
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
  });

  it('sys/seal: sealed (also across a restart) until the recovery key is given to sys/unseal', async () => {
    await vault.seal();
    expect(await vault.status()).toMatchObject({ type: 'pkcs11', sealed: true, t: 1, progress: 0 });
    await expect(vault.read('secret/data/app')).rejects.toThrow('Vault is sealed');
    await restart();
    expect(await vault.status()).toMatchObject({ type: 'pkcs11', sealed: true });
    expect((await vault.status()).warnings).toBeUndefined();
    expect((await vault.health()).sealed).toBe(true);
    const res = await vault.unseal({ key: init.recovery_keys[0] });
    expect(res).toMatchObject({ type: 'pkcs11', sealed: false });
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
  });

  it('sys/rotate, then a restart: unseals by itself, data from before and after the rotation readable', async () => {
    await vault.write('sys/rotate', {});
    expect((await vault.read('sys/key-status')).data.term).toBe(2);
    await vault.write('secret/data/after', { data: { v: 'after rotate' } });
    await restart();
    expect(await vault.status()).toMatchObject({ type: 'pkcs11', sealed: false });
    expect((await vault.read('sys/key-status')).data.term).toBe(2);
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
    expect((await vault.read('secret/data/after')).data.data.v).toBe('after rotate');
  });

  it('a wrong PIN: stays sealed; seal-status, the launcher and sys/unseal say CKR_PIN_INCORRECT', async () => {
    await restart({ SEAL_PKCS11_PIN: 'not-the-pin-0c7f' });
    const status = await vault.status();
    expect(status).toMatchObject({ type: 'pkcs11', initialized: true, sealed: true });
    expect(status.warnings).toEqual([expect.stringMatching(/^pkcs11 seal: cannot read the key \(the key with label "coffer-seal" on token "coffer" of library "softhsm"\): HSM bridge: .*CKR_PIN_INCORRECT/)]);
    // The launcher says so after it printed that it listens (it asks for the seal status first).
    await vi.waitFor(() => expect(server!.output()).toMatch(/The cluster is sealed: pkcs11 seal: .*CKR_PIN_INCORRECT/), { timeout: 15_000 });
    await expect(vault.read('secret/data/app')).rejects.toThrow('Vault is sealed');
    const refused = await vault.unseal({ key: init.recovery_keys[0] }).then(
      () => null,
      (e: { response?: { statusCode: number }; message: string }) => e,
    );
    expect(refused?.response?.statusCode).toBe(400);
    expect(refused?.message).toMatch(/CKR_PIN_INCORRECT/);
    expect(JSON.stringify(status)).not.toContain('not-the-pin-0c7f');
    expect(server!.output()).not.toContain('not-the-pin-0c7f');

    // The right PIN again: unsealed by itself.
    await restart();
    expect(await vault.status()).toMatchObject({ type: 'pkcs11', sealed: false });
    expect((await vault.read('secret/data/app')).data.data.password).toBe(secret);
  });

  it('keeps the data directory on its seal type: COFFER_SEAL=static is refused, and no seal key is made', async () => {
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    await expect(startLauncher(dataDir, { COFFER_SEAL: 'static' })).rejects.toThrow(/COFFER_SEAL=static: .* began with the pkcs11 seal, and migrating between seal types is not supported/);
    // Without COFFER_SEAL the data directory's type is used: pkcs11, which needs a bridge.
    await expect(startLauncher(dataDir)).rejects.toThrow(/COFFER_SEAL=pkcs11 needs an HSM bridge: set COFFER_HSM_BRIDGE=softhsm2/);
    expect(existsSync(path.join(dataDir, 'seal.key'))).toBe(false);
    await start({ COFFER_SEAL: '' });
    expect(await vault.status()).toMatchObject({ type: 'pkcs11', sealed: false });
  });

  it('refuses COFFER_SEAL=pkcs11 without a bridge and an unknown seal type, recording nothing', async () => {
    const fresh = tempDir('coffer-e2e-seal-hsm-bad-');
    await expect(startLauncher(fresh, { COFFER_SEAL: 'pkcs11' })).rejects.toThrow(
      /COFFER_SEAL=pkcs11 needs an HSM bridge: set COFFER_HSM_BRIDGE=softhsm2 \(a local SoftHSM2 token\), or COFFER_HSM_BRIDGE_URL/,
    );
    await expect(startLauncher(fresh, { COFFER_SEAL: 'hsm' })).rejects.toThrow(/COFFER_SEAL=hsm: the seal types are "static" \(the default: a seal key in the data directory\) and "pkcs11"/);
    expect(readdirSync(fresh).filter((e) => e !== 'tmp')).toEqual([]);
  });
});
