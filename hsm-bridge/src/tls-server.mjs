// @ts-check
// The HTTPS server. With a client CA it does mutual TLS: the client must present a certificate that
// chains to it, or the handshake fails before any HTTP is read. Without one (bearer-secret mode,
// ./http.mjs checks the secret) no certificate is asked for.

import https from 'node:https';
import { log } from './log.mjs';

/**
 * @param {import('./config.mjs').Config['tls']} tls
 * @param {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void} handler
 */
export function createTlsServer(tls, handler) {
  const server = https.createServer(
    {
      cert: tls.cert,
      key: tls.key,
      ...(tls.clientCa !== null ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : { requestCert: false }),
      minVersion: 'TLSv1.2',
    },
    handler,
  );
  server.on('tlsClientError', (err, socket) => {
    const code = /** @type {NodeJS.ErrnoException} */ (err).code;
    log.warn('TLS handshake refused', { remote: socket.remoteAddress, reason: code ?? err.message });
  });
  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  return server;
}
