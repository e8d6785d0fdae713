// @ts-check
// The HTTPS server with mutual TLS: the client must present a certificate that chains to the
// configured client CA, or the handshake fails before any HTTP is read.

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
      ca: tls.clientCa,
      requestCert: true,
      rejectUnauthorized: true,
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
