// The file audit device: one JSON line per entry in the Worker log (console.log of the device's
// Durable Object, which shares this isolate with the test: the test captures what is written
// there, as a log collector would, instead of printing it). Lines carry the device's prefix and
// form a hash chain.
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { verifyLog } from '../../../src/core/audit/verify-chain.mjs';
import { api, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
let logSpy: MockInstance<typeof console.log>;
const root = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });
/** Worker log lines that start with `prefix`. */
const logged = (prefix: string): string[] =>
  logSpy.mock.calls.map((args) => args.map(String).join(' ')).filter((line) => line.startsWith(prefix));

beforeAll(async () => {
  logSpy = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  c = await initCluster();
  await root('POST', 'sys/mounts/secret', { type: 'kv' });
});
afterAll(() => logSpy.mockRestore());

describe('the file device', () => {
  it('writes each entry as one prefixed JSON line to the Worker log, chained', async () => {
    expect((await root('PUT', 'sys/audit/file', { type: 'file', options: { file_path: 'stdout', prefix: 'AUDIT: ' } })).status).toBe(204);
    await root('PUT', 'secret/db', { password: 'file-device-secret' });
    await root('GET', 'secret/db');
    const lines = logged('AUDIT: ');
    expect(lines.length).toBe(4);
    const entries = lines.map((l) => JSON.parse(l.slice('AUDIT: '.length)));
    expect(entries.map((e) => `${e.type} ${e.request.operation} ${e.request.path}`)).toEqual([
      'request update secret/db',
      'response update secret/db',
      'request read secret/db',
      'response read secret/db',
    ]);
    const hash = (await root('PUT', 'sys/audit-hash/file', { input: 'file-device-secret' })).body.data.hash;
    expect(entries[0].request.data.password).toBe(hash);
    expect(entries[3].response.data.password).toBe(hash);
    expect(lines.join('\n')).not.toContain('file-device-secret');

    const head = (await root('GET', 'sys/audit')).body.data['file/'].chain_head;
    const report = await verifyLog(['some other log line', ...logged('AUDIT: ')].join('\n'), { head: head.hash });
    expect(report.ok).toBe(true);
    expect(report.devices).toEqual([expect.objectContaining({ device: head.device, firstSeq: 1, count: logged('AUDIT: ').length })]);
  });

  it('writes nothing for file_path=discard, and requests still succeed', async () => {
    expect((await root('DELETE', 'sys/audit/file')).status).toBe(204);
    const before = logSpy.mock.calls.length;
    expect((await root('PUT', 'sys/audit/quiet', { type: 'file', options: { file_path: 'discard' } })).status).toBe(204);
    expect((await root('PUT', 'secret/quiet', { v: 'x' })).status).toBe(204);
    expect((await root('GET', 'secret/quiet')).body.data).toEqual({ v: 'x' });
    const entryLines = logSpy.mock.calls.slice(before).filter((args) => args.map(String).join(' ').includes('"chain":{'));
    expect(entryLines).toEqual([]);
    // The device did record them: its chain moved on.
    expect((await root('GET', 'sys/audit')).body.data['quiet/'].chain_head.seq).toBe(5);
  });
});
