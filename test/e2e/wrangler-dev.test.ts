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

describe('wrangler dev without a seal key', () => {
  let server: Server;
  beforeAll(async () => {
    // An empty value overrides any SEAL_KEY a developer keeps in .dev.vars.
    server = await startWranglerDev(tempDir('coffer-wrangler-nokey-'), { SEAL_KEY: '' });
  });
  afterAll(async () => {
    await server?.stop('SIGINT');
  });

  it('refuses to initialise, saying how to configure the key', async () => {
    const status = (await (await fetch(`${server.url}/v1/sys/seal-status`)).json()) as { warnings: string[] };
    expect(status.warnings).toEqual(['no seal key is configured (SEAL_KEY): the server can neither initialise nor unseal']);
    const res = await fetch(`${server.url}/v1/sys/init`, { method: 'PUT', body: JSON.stringify({ recovery_shares: 1, recovery_threshold: 1 }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: string[] }).errors[0]).toMatch(/^no seal key is configured: set the SEAL_KEY secret/);
    expect(await (await fetch(`${server.url}/v1/sys/init`)).json()).toEqual({ initialized: false });
  });
});
