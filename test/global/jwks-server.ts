// JWKS and OIDC discovery documents for the JWT auth method's tests, served from Node (a server
// started inside workerd is not reachable). Tests register documents over HTTP:
//   PUT /jwks/<name>            body = the JWKS (stored verbatim, so malformed ones can be served)
//   GET /jwks/<name>            serves it (404 when none)
//   PUT /discovery/<name>       body = the discovery document
//   GET /discovery/<name>/.well-known/openid-configuration
//   GET /hits?path=<path>       how many GETs <path> has had (proves caching and refetching)
//   DELETE /jwks/<name>, DELETE /discovery/<name>
import http from 'node:http';
import type net from 'node:net';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    jwksServerPort: number;
  }
}

const WELL_KNOWN = '/.well-known/openid-configuration';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const docs = new Map<string, string>();
  const hits = new Map<string, number>();
  const srv = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const path = url.pathname;
      // Documents live under their registration path; discovery is read at its well-known suffix.
      const key = path.endsWith(WELL_KNOWN) ? path.slice(0, -WELL_KNOWN.length) : path;
      if (req.method === 'GET' && path === '/hits') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hits: hits.get(url.searchParams.get('path') ?? '') ?? 0 }));
      } else if (req.method === 'PUT' && /^\/(jwks|discovery)\/[\w.-]+$/.test(path)) {
        docs.set(path, body);
        res.writeHead(204).end();
      } else if (req.method === 'DELETE') {
        docs.delete(path);
        res.writeHead(204).end();
      } else if (req.method === 'GET' && (key.startsWith('/jwks/') || (key.startsWith('/discovery/') && path.endsWith(WELL_KNOWN)))) {
        hits.set(path, (hits.get(path) ?? 0) + 1);
        const doc = docs.get(key);
        if (doc === undefined) res.writeHead(404).end('not found');
        else res.writeHead(200, { 'content-type': 'application/json' }).end(doc);
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  project.provide('jwksServerPort', (srv.address() as net.AddressInfo).port);
  return () => new Promise<void>((resolve) => srv.close(() => resolve()));
}
