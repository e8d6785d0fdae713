// What arrives at the launcher's socket that no client library would send: a malformed chunked
// body, bytes that are not UTF-8 in the path, and clients that send one byte a second.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInit, startLauncher, tempDir, type Server } from './processes';

let server: Server;
let token: string;
let port: number;

/** Sends raw bytes and returns what came back before the server closed (or `waitMs` passed). */
function raw(bytes: Buffer, waitMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let out = Buffer.alloc(0);
    const done = () => {
      socket.destroy();
      resolve(out.toString('latin1'));
    };
    socket.on('data', (d) => (out = Buffer.concat([out, d])));
    socket.on('end', done);
    socket.on('error', done);
    setTimeout(done, waitMs);
  });
}

const status = (response: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);

beforeAll(async () => {
  const dir = tempDir('coffer-e2e-hostile-');
  server = await startLauncher(dir);
  token = readInit(dir).root_token;
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.stop('SIGTERM');
});

describe('hostile HTTP at the launcher', () => {
  it('answers a malformed chunked body 400, and writes nothing', async () => {
    const request = `POST /v1/secret/data/chunked HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{"data":{"a":1}}\r\n0\r\n\r\n`;
    const response = await raw(Buffer.from(request, 'latin1'));
    expect(status(response)).toBe(400);
    expect(response).toContain('error reading data');
    const read = await fetch(`${server.url}/v1/secret/data/chunked`, { headers: { 'X-Vault-Token': token } });
    expect(read.status).toBe(404);
  });

  it('refuses bytes that are not UTF-8 in the path, so they cannot alias U+FFFD', async () => {
    const line = (path: Buffer) => Buffer.concat([Buffer.from('PUT /v1/secret/data/utf/'), path, Buffer.from(` HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${token}\r\nContent-Type: application/json\r\nContent-Length: 17\r\nConnection: close\r\n\r\n{"data":{"a":1}}\n`)]);
    for (const bytes of [Buffer.from([0xff]), Buffer.from([0xfe]), Buffer.from('%EF%BF%BD'), Buffer.from('%FF')]) {
      const response = await raw(line(bytes));
      expect(status(response), bytes.toString('latin1')).toBe(400);
      expect(response).toContain('not valid UTF-8');
    }
  });
});

describe('slow clients', () => {
  // Headers: workerd itself closes a connection whose request line and headers take over 15 s
  // (measured). Bodies: the Worker gives up after REQUEST_READ_TIMEOUT_MS (30 s by default, Vault's
  // http_read_timeout; 2 s in this launcher).
  let quick: Server;
  let quickPort: number;
  let quickToken: string;
  beforeAll(async () => {
    const dir = tempDir('coffer-e2e-slow-');
    quick = await startLauncher(dir, { REQUEST_READ_TIMEOUT_MS: '2000' });
    quickPort = Number(new URL(quick.url).port);
    quickToken = readInit(dir).root_token;
  });
  afterAll(async () => {
    await quick?.stop('SIGTERM');
  });

  it('a body sent one byte a second is cut off with 408 after the read timeout, and nothing is written', async () => {
    const body = '{"data":{"a":"' + 'x'.repeat(40) + '"}}';
    const started = Date.now();
    const response = await new Promise<string>((resolve) => {
      const socket = net.connect(quickPort, '127.0.0.1', () =>
        socket.write(`POST /v1/secret/data/slow HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${quickToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`),
      );
      let out = '';
      let sent = 0;
      const drip = setInterval(() => sent < body.length && socket.write(body[sent++]), 1000);
      const finish = () => {
        clearInterval(drip);
        socket.destroy();
        resolve(out);
      };
      socket.on('data', (d) => {
        out += d.toString('latin1');
        if (out.includes('\r\n\r\n')) finish();
      });
      socket.on('close', finish);
      setTimeout(finish, 15_000);
    });
    expect(status(response)).toBe(408);
    expect(Date.now() - started).toBeLessThan(6000);
    const read = await fetch(`${quick.url}/v1/secret/data/slow`, { headers: { 'X-Vault-Token': quickToken } });
    expect(read.status).toBe(404);
  });

  it('a request whose headers trickle in is closed by the runtime', async () => {
    const started = Date.now();
    const closedAfter = await new Promise<number>((resolve) => {
      const socket = net.connect(quickPort, '127.0.0.1');
      const header = `GET /v1/sys/health HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(400)}\r\n\r\n`;
      let sent = 0;
      const drip = setInterval(() => sent < header.length && socket.write(header[sent++]), 100);
      socket.on('close', () => {
        clearInterval(drip);
        resolve(Date.now() - started);
      });
    });
    expect(closedAfter).toBeLessThan(20_000);
  }, 30_000);
});
