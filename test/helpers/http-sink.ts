// A Node HTTP server that keeps every body POSTed to it, in order: an http audit device's
// receiver for tests that run in Node (e2e, real clients).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpSink {
  /** Where a device posts: http://127.0.0.1:<port>/log */
  url: string;
  /** Bodies exactly as delivered, in order. */
  delivered: string[];
  close(): Promise<void>;
}

export async function startHttpSink(): Promise<HttpSink> {
  const delivered: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      delivered.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/log`,
    delivered,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
