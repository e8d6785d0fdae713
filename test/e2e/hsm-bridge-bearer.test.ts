// The bridge's bearer-secret mode, for a route that cannot present client certificates (a Workers
// VPC service through cloudflared): without tls.client_ca_file no certificate is asked for, and
// every request needs `Authorization: Bearer <secret>`; with both, both are required. Also the
// configuration refusals. The Worker side (HSM_BRIDGE_TOKEN sent by the pkcs11 backend) is in
// test/unit/managed-keys/pkcs11.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startHsmBridge, type HsmBridge } from '../global/hsm-bridge';

const SECRET = 'bearer-secret-4c1f0e9b7a2d6e8f3b5a1c7d9e0f2a4b';
const ROOT = path.resolve(__dirname, '../..');

interface Reply {
  status: number;
  json: Record<string, unknown>;
}

function request(bridge: HsmBridge, route: string, opts: { bearer?: string; cert?: boolean; body?: unknown } = {}): Promise<Reply> {
  const data = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${bridge.url}${route}`,
      {
        method: data ? 'POST' : 'GET',
        ca: bridge.caPem,
        agent: false,
        ...(opts.cert ? { cert: bridge.clientCertPem, key: bridge.clientKeyPem } : {}),
        headers: { ...(data ? { 'content-type': 'application/json' } : {}), ...(opts.bearer ? { authorization: `Bearer ${opts.bearer}` } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const bridges: HsmBridge[] = [];
afterAll(async () => {
  await Promise.all(bridges.map((b) => b.stop()));
});

describe('hsm-bridge with a bearer secret', () => {
  it('without a client CA: no certificate needed, the secret is', async () => {
    const b = await startHsmBridge({ tokenLabel: 'bearer-only', bearerToken: SECRET, mutualTls: false });
    bridges.push(b);
    expect(await request(b, '/v1/health')).toMatchObject({ status: 401, json: { code: 'bearer_token_required' } });
    expect(await request(b, '/v1/health', { bearer: `${SECRET}x` })).toMatchObject({ status: 401, json: { code: 'bearer_token_required' } });
    expect(await request(b, '/v1/health', { bearer: SECRET })).toMatchObject({ status: 200 });
    // A real operation on the token with the secret alone.
    const generated = await request(b, '/v1/key/generate', { bearer: SECRET, body: { library: b.library, token_label: b.tokenLabel, pin: b.pin, key_label: 'vpc', key_type: 'ec', curve: 'P-256' } });
    expect(generated).toMatchObject({ status: 200, json: { key_type: 'ec' } });
    expect(b.output()).not.toContain(SECRET);
  });

  it('with a client CA too: both the certificate and the secret are required', async () => {
    const b = await startHsmBridge({ tokenLabel: 'bearer-and-mtls', bearerToken: SECRET });
    bridges.push(b);
    await expect(request(b, '/v1/health', { bearer: SECRET })).rejects.toThrow(/alert|socket hang up|ECONNRESET|certificate/i);
    expect(await request(b, '/v1/health', { cert: true })).toMatchObject({ status: 401, json: { code: 'bearer_token_required' } });
    expect(await request(b, '/v1/health', { cert: true, bearer: SECRET })).toMatchObject({ status: 200 });
  });

  it('refuses a configuration without any client credential, or with a short secret', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'coffer-hsm-config-'));
    try {
      const run = (config: Record<string, unknown>) => {
        writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ kms_library: [{ name: 'x', library: 'libx.so' }], ...config }));
        const r = spawnSync(process.execPath, [path.join(ROOT, 'hsm-bridge/src/main.mjs'), '--config', path.join(dir, 'config.json')], { encoding: 'utf8', timeout: 20_000 });
        return { status: r.status, output: r.stdout + r.stderr };
      };
      writeFileSync(path.join(dir, 'c.pem'), 'not read before the check');
      const none = run({ tls: { cert_file: 'c.pem', key_file: 'c.pem' } });
      expect(none.status).not.toBe(0);
      expect(none.output).toContain('configure a client credential');
      writeFileSync(path.join(dir, 'short'), 'too-short');
      const short = run({ tls: { cert_file: 'c.pem', key_file: 'c.pem' }, auth: { bearer_token_file: 'short' } });
      expect(short.status).not.toBe(0);
      expect(short.output).toContain('at least 32 characters');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
