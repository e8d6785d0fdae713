// node-vault's system methods (status, mounts, auth methods, policies, audit devices, leases,
// wrapping, key rotation) and its generic read/write/list/delete/update/help.
import { describe, expect, it } from 'vitest';
import { verifyLog } from '../../../src/core/audit/verify-chain.mjs';
import { failure, unique, vault } from './client';
import { startHttpSink } from '../../helpers/http-sink';

const root = vault();

describe('status', () => {
  it('status, initialized, health and leader', async () => {
    expect(await root.status()).toMatchObject({ initialized: true, sealed: false, t: 1, n: 1 });
    expect(await root.initialized()).toEqual({ initialized: true });
    expect(await root.health()).toMatchObject({ initialized: true, sealed: false, standby: false });
    // node-vault passes health's query parameters through; an active node answers activecode.
    expect(await root.health({ activecode: 200, standbyok: true })).toMatchObject({ sealed: false });
    expect(await root.leader()).toMatchObject({ ha_enabled: false });
  });
});

describe('mounts', () => {
  it('mount, mounts, remount and unmount', async () => {
    const path = unique('kv');
    await root.mount({ mount_point: path, type: 'kv', description: 'from node-vault', options: { version: '2' } });
    const mounts = await root.mounts();
    expect(mounts.data[`${path}/`]).toMatchObject({ type: 'kv', description: 'from node-vault', options: { version: '2' } });
    expect(mounts[`${path}/`].type).toBe('kv');
    const moved = unique('moved');
    const remounted = await root.remount({ from: path, to: moved });
    expect(remounted.data.migration_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys((await root.mounts()).data)).toContain(`${moved}/`);
    await root.unmount({ mount_point: moved });
    expect(Object.keys((await root.mounts()).data)).not.toContain(`${moved}/`);
  });

  it('refuses a mount on a path in use with Vault\'s message', async () => {
    const path = unique('dup');
    await root.mount({ mount_point: path, type: 'kv' });
    const e = await failure(root.mount({ mount_point: path, type: 'kv' }));
    expect(e.status).toBe(400);
    expect(e.errors[0]).toContain('path is already in use');
  });
});

describe('auth methods', () => {
  it('enableAuth, auths and disableAuth', async () => {
    const path = unique('jwt');
    await root.enableAuth({ mount_point: path, type: 'jwt', description: 'ci' });
    const auths = await root.auths();
    expect(auths.data[`${path}/`]).toMatchObject({ type: 'jwt', description: 'ci' });
    expect(auths.data['token/'].type).toBe('token');
    await root.disableAuth({ mount_point: path });
    expect(Object.keys((await root.auths()).data)).not.toContain(`${path}/`);
  });
});

describe('policies', () => {
  it('addPolicy, getPolicy, policies and removePolicy', async () => {
    const name = unique('pol');
    const rules = 'path "secret/data/app/*" {\n  capabilities = ["read"]\n}\n';
    await root.addPolicy({ name, rules });
    expect((await root.getPolicy({ name })).rules).toBe(rules);
    expect((await root.policies()).policies).toContain(name);
    await root.removePolicy({ name });
    expect((await root.policies()).policies).not.toContain(name);
    expect((await failure(root.getPolicy({ name }))).status).toBe(404);
  });

  it('a policy added with addPolicy governs a token', async () => {
    const name = unique('reader');
    const mount = unique('kvp');
    await root.mount({ mount_point: mount, type: 'kv' });
    await root.write(`${mount}/x`, { v: '1' });
    await root.addPolicy({ name, rules: `path "${mount}/*" { capabilities = ["read"] }` });
    const token = (await vault().tokenCreate({ policies: [name], ttl: '10m' })).auth.client_token;
    expect((await vault(token).read(`${mount}/x`)).data).toEqual({ v: '1' });
    expect((await failure(vault(token).write(`${mount}/x`, { v: '2' }))).status).toBe(403);
  });
});

describe('audit devices', () => {
  it.each([
    ['an http device', {}],
    ['a batch http device (one POST per group, one entry per line)', { batch: 'true' }],
  ])('%s records concurrent requests once each, in one chain that verifies up to its head', async (_, options) => {
    const sink = await startHttpSink();
    const { delivered } = sink;
    const name = unique('audit-http');
    const mount = unique('kv');
    let head: { hash: string } | undefined;
    let reads: { request_id: string; data: { v: string } }[] = [];
    await root.mount({ mount_point: mount, type: 'kv' });
    try {
      await root.enableAudit({ name, type: 'http', options: { ...options, url: sink.url } });
      // Many at once: the mount's object sends them to the device in batches, the device records them in groups.
      await Promise.all(Array.from({ length: 40 }, (_, i) => root.write(`${mount}/k${i}`, { v: String(i) })));
      reads = await Promise.all(Array.from({ length: 40 }, (_, i) => root.read(`${mount}/k${i}`)));
      head = (await root.audits()).data[`${name}/`].chain_head;
    } finally {
      // Disabled before the sink goes: a device that cannot deliver refuses every request.
      await root.disableAudit({ name });
      await sink.close();
    }
    expect(reads.map((r) => r.data.v)).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
    // A batch device's body holds one entry per line.
    const texts = delivered.flatMap((body) => body.split('\n').filter(Boolean));
    const entries = texts.map((text) => JSON.parse(text) as { type: string; request: { id: string; path: string; operation: string } });
    for (const [i, r] of reads.entries()) {
      expect(entries.filter((e) => e.request.id === r.request_id).map((e) => e.type), `read ${i}`).toEqual(['request', 'response']);
      const writes = entries.filter((e) => e.request.path === `${mount}/k${i}` && e.request.operation === 'update');
      expect(writes.map((e) => e.type), `write ${i}`).toEqual(['request', 'response']);
    }
    const report = await verifyLog(texts.join('\n'), { head: head?.hash });
    expect(report.broken).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.devices).toHaveLength(1);
    expect(report.devices[0]).toMatchObject({ firstSeq: 1, redelivered: 0 });
  });

  it('enableAudit, audits and disableAudit', async () => {
    const name = unique('audit');
    await root.enableAudit({ name, type: 'file', description: 'discarded', options: { file_path: 'discard' } });
    const audits = await root.audits();
    expect(audits.data[`${name}/`]).toMatchObject({ type: 'file', description: 'discarded', options: { file_path: 'discard' } });
    await root.disableAudit({ name });
    expect(Object.keys((await root.audits()).data)).not.toContain(`${name}/`);
  });
});

describe('leases', () => {
  it('renew, revoke and revokePrefix a certificate\'s lease', async () => {
    const mount = unique('pki');
    await root.mount({ mount_point: mount, type: 'pki', config: { max_lease_ttl: '24h' } });
    await root.write(`${mount}/root/generate/internal`, { common_name: 'Lease Root', ttl: '24h', key_type: 'ec' });
    await root.write(`${mount}/roles/leased`, { allowed_domains: 'example.com', allow_subdomains: true, generate_lease: true, ttl: '1h', key_type: 'ec' });
    const issue = () => root.write(`${mount}/issue/leased`, { common_name: 'a.example.com' });
    const first = await issue();
    expect(first.lease_id).toMatch(new RegExp(`^${mount}/issue/leased/`));
    // The certificate's remaining validity, in whole seconds.
    expect(first.lease_duration).toBeGreaterThan(3590);
    expect(first.lease_duration).toBeLessThanOrEqual(3600);
    // A certificate's lease is not renewable (its dates are fixed), as in Vault.
    const renew = await failure(root.renew({ lease_id: first.lease_id, increment: 60 }));
    expect(renew.errors).toEqual(['lease is not renewable']);
    await root.revoke({ lease_id: first.lease_id });
    expect((await failure(root.write('sys/leases/lookup', { lease_id: first.lease_id }))).status).toBe(400);
    const second = await issue();
    await root.revokePrefix({ path_prefix: `${mount}/issue/` });
    expect((await failure(root.write('sys/leases/lookup', { lease_id: second.lease_id }))).status).toBe(400);
  });
});

describe('wrapping and keys', () => {
  it('unwrap, with its own token or with the wrapping token', async () => {
    const mount = unique('kvw');
    await root.mount({ mount_point: mount, type: 'kv' });
    await root.write(`${mount}/s`, { secret: 'wrapped' });
    const wrapped = await root.read(`${mount}/s`, { headers: { 'X-Vault-Wrap-TTL': '60' } });
    expect(wrapped.wrap_info.ttl).toBe(60);
    expect((await root.unwrap({ token: wrapped.wrap_info.token })).data).toEqual({ secret: 'wrapped' });
    const again = await root.read(`${mount}/s`, { headers: { 'X-Vault-Wrap-TTL': '1m' } });
    expect((await vault(again.wrap_info.token).unwrap()).data).toEqual({ secret: 'wrapped' });
    expect((await failure(root.unwrap({ token: again.wrap_info.token }))).status).toBe(400);
  });

  it('rotate adds a keyring term', async () => {
    const before = (await root.read('sys/key-status')).data.term;
    await root.rotate();
    expect((await root.read('sys/key-status')).data.term).toBe(before + 1);
  });
});

describe('generic methods', () => {
  it('write, read, list, update (merge-patch), delete and help', async () => {
    const mount = unique('kv2g');
    await root.mount({ mount_point: mount, type: 'kv', options: { version: '2' } });
    await root.write(`${mount}/data/app/db`, { data: { user: 'app', password: 'one' } });
    await root.update(`${mount}/data/app/db`, { data: { password: 'two' } });
    const read = await root.read(`${mount}/data/app/db`);
    expect(read.data.data).toEqual({ user: 'app', password: 'two' });
    expect(read.data.metadata.version).toBe(2);
    expect((await root.list(`${mount}/metadata/app`)).data.keys).toEqual(['db']);
    await root.delete(`${mount}/metadata/app/db`);
    expect((await failure(root.read(`${mount}/data/app/db`))).status).toBe(404);
    const help = await root.help(`${mount}/data/app/db`);
    expect(help.help).toContain('data');
  });
});

describe('operational endpoints', () => {
  it('sys/metrics in both formats, sys/host-info and sys/internal/counters through read and write', async () => {
    const json = await root.read('sys/metrics');
    expect(json.Gauges.find((g: { Name: string }) => g.Name === 'vault.core.unsealed').Value).toBe(1);
    const text = await root.request({ path: '/sys/metrics?format=prometheus', method: 'GET' });
    expect(text).toContain('# TYPE vault_core_handle_request summary');
    expect((await root.read('sys/host-info')).data.host.platform).toBe('cloudflare-workers');
    expect((await root.read('sys/internal/counters/tokens')).data.counters.service_tokens.total).toBeGreaterThan(0);
    expect((await root.read('sys/internal/counters/activity/monthly')).data.clients).toBeGreaterThan(0);
    await root.write('sys/internal/counters/config', { default_report_months: 12 });
    expect((await root.read('sys/internal/counters/config')).data.default_report_months).toBe(12);
  });
});
