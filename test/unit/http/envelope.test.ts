// Raw answers: JSON bodies as they are, and (for OIDC's pages) a string body with its own type.
import { describe, expect, it } from 'vitest';
import { logicalToHttp } from '../../../src/http/envelope';

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
});
