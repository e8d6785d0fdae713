// Sealing, unsealing and root token generation with both clients, on launchers of this file's own
// (sealing the shared one would stop every other test): one with the default static seal, one
// with the pkcs11 seal on the launcher's SoftHSM2 token (COFFER_SEAL=pkcs11).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodeVault from 'node-vault';
import { readInit, startLauncher, tempDir, type Server } from '../e2e/processes';
import { expectPassed, listTests, runModule } from './hvac/suite';

const SEALS: { type: string; env: Record<string, string> }[] = [
  { type: 'static', env: {} },
  { type: 'pkcs11', env: { COFFER_SEAL: 'pkcs11', COFFER_HSM_BRIDGE: 'softhsm2' } },
];

describe.each(SEALS)('the $type seal', ({ type, env }) => {
  let server: Server;
  let init: ReturnType<typeof readInit>;

  beforeAll(async () => {
    const dataDir = tempDir(`coffer-clients-seal-${type}-`);
    server = await startLauncher(dataDir, env);
    init = readInit(dataDir);
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  describe('node-vault', () => {
    it('seal, status and unseal with the recovery key', async () => {
      const vault = nodeVault({ endpoint: server.url, token: init.root_token, noCustomHTTPVerbs: true });
      expect(await vault.status()).toMatchObject({ sealed: false, type, recovery_seal: true });
      await vault.seal();
      expect(await vault.status()).toMatchObject({ sealed: true, t: 1, progress: 0, type });
      expect((await vault.unseal({ key: init.recovery_keys[0] })).sealed).toBe(false);
      expect((await vault.status()).sealed).toBe(false);
    });

    it('generateRootInit, generateRootUpdate and generateRootCancel', async () => {
      const vault = nodeVault({ endpoint: server.url, token: init.root_token, noCustomHTTPVerbs: true });
      const otp = 'abcdefghijklmnopqrstuvwxyz01';
      const started = await vault.generateRootInit({ otp });
      expect(started).toMatchObject({ started: true, required: 1, progress: 0 });
      const done = await vault.generateRootUpdate({ key: init.recovery_keys[0], nonce: started.nonce });
      expect(done.complete).toBe(true);
      const raw = Buffer.from(done.encoded_token, 'base64');
      const token = Buffer.from(raw.map((b, i) => b ^ otp.charCodeAt(i))).toString();
      expect((await nodeVault({ endpoint: server.url, token }).tokenLookupSelf()).data.policies).toEqual(['root']);

      await vault.generateRootInit({ otp });
      await vault.generateRootCancel();
      expect((await vault.request({ path: '/sys/generate-root/attempt', method: 'GET' })).started).toBe(false);
    });
  });

  describe('hvac', () => {
    const ids = listTests('seal_flow');
    let results: Awaited<ReturnType<typeof runModule>>;
    beforeAll(async () => {
      results = await runModule('seal_flow', { url: server.url, rootToken: init.root_token, recoveryKey: init.recovery_keys[0], extra: { COFFER_SEAL_TYPE: type } });
    });
    for (const id of ids) it(id, () => expectPassed(results, id));
  });
});
