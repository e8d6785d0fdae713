// Audit is fail-closed through kill -9: during a burst of KV writes (each audited by an http
// device to a sink in this process) the server is killed; after the restart every acknowledged
// write is stored and was recorded by the device (request and response), and the device's hash
// chain still verifies across the crash (`npm run audit:verify`'s checker).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLog } from '../../src/core/audit/verify-chain.mjs';
import { burst, client, restart, type Client } from './crash';
import { startLauncher, tempDir, type Server } from './processes';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';

const ROOT_TOKEN = 'hvs.e2eRootTokenForCrashAuditTs0';

let dir: string;
let server: Server;
let vault: Client;
let sink: HttpSink;
/** Entries exactly as the device delivered them, in order. */
let delivered: string[];

beforeAll(async () => {
  sink = await startHttpSink();
  delivered = sink.delivered;
  dir = tempDir('coffer-e2e-crash-audit-');
  server = await startLauncher(dir, { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
  vault = client(server, ROOT_TOKEN);
  await vault.enableAudit({ name: 'sink', type: 'http', options: { url: sink.url } });
});
afterAll(async () => {
  await server?.stop('SIGTERM');
  await sink?.close();
});

describe('audit under kill -9', () => {
  it('every acknowledged request was recorded; nothing acknowledged is lost; the chain verifies across the crash', async () => {
    type Ack = { key: string; value: string; version: number; requestId: string };
    const result = await burst<Ack>(server, 6, 1_000, async (n) => {
      const value = `value-${n}`;
      const r = await vault.write(`secret/data/burst-${n}`, { data: { value } });
      return { key: `burst-${n}`, value, version: r.data.version as number, requestId: r.request_id as string };
    });
    server = await restart(dir);
    vault = client(server, ROOT_TOKEN);
    expect(result.refused).toEqual([]);
    expect(result.acked.length).toBeGreaterThan(10);

    // A group cut off by the crash is sent again whole after the restart: exact copies, counted once.
    const recorded = [...new Set(delivered)].map((text) => JSON.parse(text) as { type: string; request: { id: string } });
    for (const a of result.acked) {
      const types = recorded.filter((e) => e.request.id === a.requestId).map((e) => e.type);
      expect(types, `audit entries of ${a.key}`).toEqual(['request', 'response']);
      const read = await vault.read(`secret/data/${a.key}`);
      expect(read.data.data.value).toBe(a.value);
      expect(read.data.metadata.version).toBe(a.version);
    }

    // The chain continues after the restart: the next entries link to the last one delivered.
    await vault.write('secret/data/after-restart', { data: { value: 'x' } });
    const verdict = await verifyLog(delivered.join('\n'));
    expect(verdict.broken ?? null).toBeNull();
    expect(verdict.ok).toBe(true);
  });
});
