// `npm start` as a real process, driven by the node-vault client (noCustomHTTPVerbs: GET ?list=1).
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInit, startLauncher, tempDir, type Server } from './processes';

const client = (url: string, token?: string) => nodeVault({ apiVersion: 'v1', endpoint: url, token, noCustomHTTPVerbs: true });

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('the launcher with node-vault', () => {
  const dataDir = tempDir('coffer-e2e-');
  let server: Server;
  let vault: ReturnType<typeof client>;
  const secret = `e2e-plaintext-${Date.now()}`;

  beforeAll(async () => {
    server = await startLauncher(dataDir);
    vault = client(server.url, readInit(dataDir).root_token);
    // secret/ is KV v2 (as Vault's dev server has it); the unversioned flows use their own mount.
    await vault.mount({ mount_point: 'kv', type: 'kv', options: { version: '1' } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('initialised on first start: init.json and a private seal key in the data dir', () => {
    const init = readInit(dataDir);
    expect(init.root_token).toMatch(/^hvs\./);
    expect(init.recovery_keys).toHaveLength(1);
    expect(statSync(path.join(dataDir, 'init.json')).mode & 0o077).toBe(0);
    expect(statSync(path.join(dataDir, 'seal.key')).mode & 0o077).toBe(0);
    expect(readFileSync(path.join(dataDir, 'seal.key'), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reports health, seal status and init state', async () => {
    expect(await vault.health()).toMatchObject({ initialized: true, sealed: false });
    expect(await vault.status()).toMatchObject({ sealed: false, t: 1, n: 1, type: 'static' });
    expect(await vault.initialized()).toEqual({ initialized: true });
    expect((await vault.tokenLookupSelf()).data.policies).toEqual(['root']);
  });

  it('has kv mounted at secret/ and manages mounts', async () => {
    const mounts = await vault.mounts();
    expect(mounts.data['secret/']).toMatchObject({ type: 'kv', options: { version: '2' } });
    expect(mounts.data['kv/']).toMatchObject({ type: 'kv', options: { version: '1' } });
    await vault.mount({ mount_point: 'extra', type: 'kv', description: 'from node-vault' });
    expect((await vault.mounts())['extra/'].description).toBe('from node-vault');
    await vault.remount({ from: 'extra', to: 'moved' });
    expect((await vault.mounts()).data['moved/']).toBeDefined();
    await vault.unmount({ mount_point: 'moved' });
    expect((await vault.mounts()).data['moved/']).toBeUndefined();
  });

  it('writes, reads, lists and deletes KV v1 secrets', async () => {
    await vault.write('kv/app/config', { password: secret, port: 5432 });
    await vault.write('kv/app/other', { a: 'b' });
    const read = await vault.read('kv/app/config');
    expect(read.data).toEqual({ password: secret, port: 5432 });
    expect(read.lease_duration).toBe(2764800);
    expect((await vault.list('kv/app')).data.keys).toEqual(['config', 'other']);
    await vault.delete('kv/app/other');
    expect((await vault.list('kv/app')).data.keys).toEqual(['config']);
  });

  it('surfaces Vault errors the way node-vault expects', async () => {
    await expect(vault.read('kv/missing')).rejects.toMatchObject({ response: { statusCode: 404 } });
    const stranger = client(server.url, 'hvs.not-a-token');
    await expect(stranger.read('kv/app/config')).rejects.toThrow(/permission denied/);
    await expect(vault.write('kv/empty', {})).rejects.toThrow('missing data fields');
  });

  it('accepts a GET that carries a JSON body, as hvac sends', async () => {
    const { token } = { token: readInit(dataDir).root_token };
    const url = new URL(`${server.url}/v1/kv/app/config`);
    const body = JSON.stringify({ ignored: true });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers: { 'X-Vault-Token': token, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(200);
  });

  it('seals and unseals with the recovery key from init.json', async () => {
    await vault.seal();
    expect((await vault.status()).sealed).toBe(true);
    await expect(vault.read('kv/app/config')).rejects.toThrow('Vault is sealed');
    const health = await vault.health();
    expect(health.sealed).toBe(true);
    const res = await vault.unseal({ key: readInit(dataDir).recovery_keys[0] });
    expect(res.sealed).toBe(false);
    expect((await vault.read('kv/app/config')).data.password).toBe(secret);
  });

  it('generates a new root token through generate-root', async () => {
    const attempt = await vault.generateRootInit({});
    const done = await vault.generateRootUpdate({ nonce: attempt.nonce, key: readInit(dataDir).recovery_keys[0] });
    expect(done.complete).toBe(true);
    const decoded = await vault.write('sys/decode-token', { encoded_token: done.encoded_token, otp: attempt.otp });
    expect((await client(server.url, decoded.data.token).tokenLookupSelf()).data.policies).toEqual(['root']);
  });

  it('stops cleanly on SIGTERM; a restart reuses the data; no plaintext reached the disk', async () => {
    expect(await server.stop('SIGTERM')).toBe(0);
    const files = filesUnder(path.join(dataDir, 'do'));
    expect(files.some((f) => f.endsWith('.sqlite'))).toBe(true);
    const init = readInit(dataDir);
    const needles = [secret, init.root_token, init.recovery_keys[0], init.recovery_keys_base64[0]];
    let sawControl = false;
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const n of needles) expect(bytes.includes(Buffer.from(n)), `${n} in ${f}`).toBe(false);
      if (bytes.includes(Buffer.from('logical/app/config'))) sawControl = true;
    }
    // Control: storage keys are plaintext by design, so the scan does see the stored rows.
    expect(sawControl).toBe(true);

    server = await startLauncher(dataDir);
    vault = client(server.url, init.root_token);
    expect(readInit(dataDir).root_token).toBe(init.root_token);
    expect((await vault.read('kv/app/config')).data.password).toBe(secret);
  });

  it('keeps the data directory its owner\'s: folders 0700, files 0600, and closes what was left open', async () => {
    expect(await server.stop('SIGTERM')).toBe(0);
    // As an older version left them: world-readable folders and files.
    chmodSync(path.join(dataDir, 'do'), 0o755);
    const db = filesUnder(path.join(dataDir, 'do')).find((f) => f.endsWith('.sqlite'))!;
    chmodSync(db, 0o644);
    server = await startLauncher(dataDir);
    vault = client(server.url, readInit(dataDir).root_token);
    await vault.write('kv/after-restart', { v: '1' });
    const walk = (dir: string): string[] => [dir, ...readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]))];
    for (const entry of walk(dataDir)) {
      const st = statSync(entry);
      expect(st.mode & 0o777, entry).toBe(st.isDirectory() ? 0o700 : 0o600);
    }
  });

  it('stops on SIGINT (Ctrl-C) with exit code 0', async () => {
    expect(await server.stop('SIGINT')).toBe(0);
  });
});

describe('COFFER_DEV_ROOT_TOKEN', () => {
  it('makes the first root token exactly that value', async () => {
    const dataDir = tempDir('coffer-e2e-dev-');
    const server = await startLauncher(dataDir, { COFFER_DEV_ROOT_TOKEN: 'dev-only-token' });
    try {
      expect(readInit(dataDir).root_token).toBe('dev-only-token');
      const vault = client(server.url, 'dev-only-token');
      await vault.write('secret/data/x', { data: { y: 'z' } });
      expect((await vault.read('secret/data/x')).data.data).toEqual({ y: 'z' });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
