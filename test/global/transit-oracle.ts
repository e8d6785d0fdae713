// The transit oracle: an HTTP server in Node (outside workerd) that answers transit operations
// computed independently with node:crypto (see transit-oracle-ops.ts), so workerd tests can
// check Coffer's output byte for byte. POST /<op> with a JSON body; 200 with JSON, or 400
// `{error}` for bad input, 404 for an unknown op.
import http from 'node:http';
import type net from 'node:net';
import type { TestProject } from 'vitest/node';
import { OPS, OracleError } from './transit-oracle-ops';

declare module 'vitest' {
  export interface ProvidedContext {
    transitOraclePort: number;
  }
}

async function answer(method: string | undefined, url: string, text: string): Promise<[number, unknown]> {
  const name = url.slice(1);
  if (method !== 'POST' || !Object.hasOwn(OPS, name)) return [404, { error: `no oracle operation ${method} ${url}` }];
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OracleError('body must be a JSON object');
    return [200, await OPS[name](body as Record<string, unknown>)];
  } catch (e) {
    // Node's own crypto errors (bad PEM, OpenSSL failures) are bad input too.
    return [400, { error: e instanceof Error ? e.message : String(e) }];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void answer(req.method, req.url ?? '', Buffer.concat(chunks).toString('utf8')).then(([status, body]) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      );
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  project.provide('transitOraclePort', (srv.address() as net.AddressInfo).port);
  return () => new Promise<void>((resolve) => srv.close(() => resolve()));
}
