// Raw answers: JSON bodies as they are, and (OIDC's pages, PKI's certificates) a string or bytes
// with their own type, 204 when empty, and only the response headers the mount allows.
import { describe, expect, it } from 'vitest';
import { logicalToHttp } from '../../../src/worker/envelope';

const ctx = { requestId: 'r', mountType: 'jwt', path: 'auth/jwt/oidc/callback', head: false };

describe('logicalToHttp raw answers', () => {
  it('sends a string body with its content type, unwrapped', async () => {
    const res = logicalToHttp({ raw: { status: 400, body: '<p>no</p>', contentType: 'text/html; charset=utf-8' } }, ctx);
    expect(res.status).toBe(400);
    expect(res.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    expect(await res.text()).toBe('<p>no</p>');
  });

  it('sends other raw bodies as JSON, and HEAD without a body', async () => {
    const res = logicalToHttp({ raw: { status: 200, body: { a: 1 } } }, ctx);
    expect(res.headers.get('Content-Type')).toBe('application/json');
    expect(await res.json()).toEqual({ a: 1 });
    const head = logicalToHttp({ raw: { status: 200, body: '<p/>', contentType: 'text/html' } }, { ...ctx, head: true });
    expect(await head.text()).toBe('');
  });

  it('sends bytes as they are, and an empty body as 204 (no CA yet)', async () => {
    const res = logicalToHttp({ raw: { status: 200, body: new Uint8Array([0x30, 0x03, 1, 2, 3]), contentType: 'application/pkix-cert' } }, ctx);
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('application/pkix-cert');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array([0x30, 0x03, 1, 2, 3]));
    const empty = logicalToHttp({ raw: { status: 200, body: new Uint8Array(0), contentType: 'application/pkix-cert' } }, ctx);
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe('');
  });

  it('lets a backend header out only when allowed_response_headers lists it', async () => {
    const resp = { raw: { status: 304, contentType: 'application/pkix-crl', headers: { 'Last-Modified': 'Sun, 22 Nov 2026 10:00:00 GMT' } } };
    const closed = logicalToHttp(resp, ctx);
    expect(closed.status).toBe(304);
    expect(closed.headers.get('Last-Modified')).toBeNull();
    const open = logicalToHttp(resp, { ...ctx, allowedResponseHeaders: ['last-modified'] });
    expect(open.headers.get('Last-Modified')).toBe('Sun, 22 Nov 2026 10:00:00 GMT');
  });
});
