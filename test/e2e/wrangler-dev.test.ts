// `npx wrangler dev` still serves Coffer (the launcher is the faster default); node-vault drives it.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import path from 'node:path';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInit, ROOT, startWranglerDev, tempDir, type Server } from './processes';

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

describe('wrangler dev initialised with npm run init', () => {
  let server: Server;
  beforeAll(async () => {
    server = await startWranglerDev(tempDir('coffer-wrangler-init-'), { SEAL_KEY: randomBytes(32).toString('hex') });
  });
  afterAll(async () => {
    await server?.stop('SIGINT');
  });

  it('gets what npm start gives: a root token in init.json and kv version 2 at secret/', async () => {
    const dataDir = tempDir('coffer-wrangler-init-data-');
    const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/init.mjs'), server.url, dataDir], { encoding: 'utf8' });
    expect(out).toContain('kv version 2 is mounted at secret/');
    const init = readInit(dataDir);
    expect(statSync(path.join(dataDir, 'init.json')).mode & 0o777).toBe(0o600);
    const vault = nodeVault({ endpoint: server.url, token: init.root_token, noCustomHTTPVerbs: true });
    await vault.write('secret/data/app', { data: { from: 'npm run init' } });
    expect((await vault.read('secret/data/app')).data.data).toEqual({ from: 'npm run init' });
    // A second run finds the cluster initialised and leaves it alone.
    expect(execFileSync(process.execPath, [path.join(ROOT, 'scripts/init.mjs'), server.url, dataDir], { encoding: 'utf8' })).toContain('already initialised');
  });
});
