// The HTTP plumbing the emulators share: a server on a free loopback port that hands each
// request, its body read and its URL parsed, to a handler that answers in JSON. Runs in Node (a
// server inside workerd is unreachable), started from a vitest global setup.
import http from 'node:http';
import type net from 'node:net';

/** Sends the answer; true, so that `if (check()) return;` reads as "answered". */
export type JsonReply = (status: number, body: unknown, headers?: Record<string, string>) => true;

export interface JsonRequest {
  req: http.IncomingMessage;
  /** The body as text. */
  raw: string;
  /** The request URL, absolute against this server. */
  url: URL;
  /** This server's origin, http://127.0.0.1:<port>. */
  base: string;
  json: JsonReply;
}

export interface JsonServerOptions {
  /** The Content-Type of every answer (default application/json). */
  contentType?: string;
  /** The body of the 500 answered when the handler throws, in the emulated service's error shape. */
  errorBody?: (e: unknown) => unknown;
}

export interface JsonServer {
  port: number;
  base: string;
  /** For the global setup's teardown. */
  close: () => Promise<void>;
}

export async function serveJson(handle: (r: JsonRequest) => unknown, opts: JsonServerOptions = {}): Promise<JsonServer> {
  let base = '';
  const srv = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', async () => {
      const json: JsonReply = (status, body, headers = {}) => {
        res.writeHead(status, { 'content-type': opts.contentType ?? 'application/json', ...headers }).end(JSON.stringify(body));
        return true;
      };
      try {
        await handle({ req, raw, url: new URL(req.url ?? '/', base), base, json });
      } catch (e) {
        if (res.headersSent) res.destroy(e instanceof Error ? e : new Error(String(e)));
        else json(500, opts.errorBody ? opts.errorBody(e) : { error: String(e) });
      }
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return { port, base, close: () => new Promise<void>((resolve) => srv.close(() => resolve())) };
}
