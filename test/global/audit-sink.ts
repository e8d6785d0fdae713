// A real HTTP server for the http audit device, started in Node before the workerd tests (a
// server started inside workerd is not reachable). Entries POSTed to /log/<name> are kept per
// name, unless the sink's mode (PUT /mode/<name>: ok, fail, fail-responses) says to refuse them
// with a 500 (fail-responses refuses only response entries); refusals are counted. Tests read
// both back with GET /entries/<name>. `auditDeadPort` is a port nothing listens on.
import http from 'node:http';
import net from 'node:net';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    auditSinkPort: number;
    auditDeadPort: number;
  }
}

async function deadPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

type Mode = 'ok' | 'fail' | 'fail-responses';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const received = new Map<string, string[]>();
  const failures = new Map<string, number>();
  const modes = new Map<string, Mode>();
  const srv = http.createServer((req, res) => {
    const [, action, name = ''] = (req.url ?? '').split('/');
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method === 'POST' && action === 'log') {
        const mode = modes.get(name) ?? 'ok';
        const refuse = mode === 'fail' || (mode === 'fail-responses' && body.includes('"type":"response"'));
        if (refuse) {
          failures.set(name, (failures.get(name) ?? 0) + 1);
          res.writeHead(500).end('sink refuses');
          return;
        }
        received.set(name, [...(received.get(name) ?? []), body]);
        res.writeHead(204).end();
      } else if (req.method === 'PUT' && action === 'mode' && ['ok', 'fail', 'fail-responses'].includes(body)) {
        modes.set(name, body as Mode);
        res.writeHead(204).end();
      } else if (req.method === 'GET' && action === 'entries') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ entries: received.get(name) ?? [], failures: failures.get(name) ?? 0 }));
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  project.provide('auditSinkPort', (srv.address() as net.AddressInfo).port);
  project.provide('auditDeadPort', await deadPort());
  return () => new Promise<void>((resolve) => srv.close(() => resolve()));
}
