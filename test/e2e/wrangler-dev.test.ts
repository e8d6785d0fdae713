// `npx wrangler dev` still serves Coffer (the launcher is the faster default); node-vault drives it.
import { randomBytes } from 'node:crypto';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWranglerDev, tempDir, type Server } from './processes';

describe('wrangler dev', () => {
  let server: Server;
  beforeAll(async () => {
    server = await startWranglerDev(tempDir('coffer-wrangler-'), { SEAL_KEY: randomBytes(32).toString('hex') });
  });
  afterAll(async () => {
    await server?.stop('SIGINT');
  });

  it('initialises with node-vault and serves KV v1', async () => {
    const anon = nodeVault({ endpoint: server.url, noCustomHTTPVerbs: true });
    const init = await anon.init({ secret_shares: 1, secret_threshold: 1 });
    expect(init.root_token).toMatch(/^hvs\./);
    const vault = nodeVault({ endpoint: server.url, token: init.root_token, noCustomHTTPVerbs: true });
    await vault.mount({ mount_point: 'secret', type: 'kv' });
    await vault.write('secret/hello', { who: 'wrangler dev' });
    expect((await vault.read('secret/hello')).data).toEqual({ who: 'wrangler dev' });
    expect((await vault.list('secret')).data.keys).toEqual(['hello']);
  });
});
