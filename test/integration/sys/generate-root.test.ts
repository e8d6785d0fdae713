// sys/generate-root and sys/decode-token (reference §2.4), with the attempt authorised so an
// anonymous caller can neither occupy nor cancel it (CVE-2026-5807 class).
import { describe, expect, it } from 'vitest';
import { shardFor } from '../../../src/core/tokens/entry';
import { fromHex, toBase64 } from '../../../src/crypto/encoding';
import { api, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;

async function decode(encoded: string, otp: string): Promise<string> {
  const r = await api('PUT', 'sys/decode-token', { body: { encoded_token: encoded, otp } });
  expect(r.status).toBe(200);
  return r.body.data.token;
}

async function isRootToken(token: string): Promise<boolean> {
  const r = await api('GET', 'auth/token/lookup-self', { token });
  return r.status === 200 && r.body.data.policies.includes('root');
}

describe('generate-root', () => {
  it('reports no attempt, with the threshold and OTP length', async () => {
    c = await initCluster(3, 2);
    const r = await api('GET', 'sys/generate-root/attempt');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      nonce: '',
      started: false,
      progress: 0,
      required: 2,
      complete: false,
      encoded_token: '',
      encoded_root_token: '',
      pgp_fingerprint: '',
      otp: '',
      otp_length: 28,
    });
  });

  it('refuses to start an attempt for an anonymous caller, or one with a bogus key', async () => {
    const anon = await api('PUT', 'sys/generate-root/attempt', { body: {} });
    expect(anon.status).toBe(403);
    expect(anon.body.errors).toEqual([PERMISSION_DENIED]);
    const bogus = await api('PUT', 'sys/generate-root/attempt', { body: { key: '12'.repeat(33) } });
    expect(bogus.status).toBe(403);
    const badToken = await api('PUT', 'sys/generate-root/attempt', { token: 'hvs.fake0000000000000000000000', body: {} });
    expect(badToken.status).toBe(403);
    expect((await api('GET', 'sys/generate-root/attempt')).body.started).toBe(false);
  });

  it('refuses PGP keys and malformed OTPs', async () => {
    expect((await api('PUT', 'sys/generate-root/attempt', { token: c.root, body: { pgp_key: 'abc' } })).body.errors).toEqual([
      'PGP-encrypted root tokens are not supported; use an OTP',
    ]);
    expect((await api('PUT', 'sys/generate-root/attempt', { token: c.root, body: { otp: 'short' } })).body.errors).toEqual([
      'OTP string has incorrect length',
    ]);
  });

  let otp = '';
  let nonce = '';
  it('starts an attempt for a root token, generating the OTP once', async () => {
    const r = await api('PUT', 'sys/generate-root/attempt', { token: c.root, body: {} });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ started: true, progress: 0, required: 2, complete: false });
    expect(r.body.otp).toMatch(/^[A-Za-z0-9]{28}$/);
    otp = r.body.otp;
    nonce = r.body.nonce;
    const status = await api('GET', 'sys/generate-root/attempt');
    expect(status.body).toMatchObject({ started: true, nonce, otp: '' });
  });

  it('allows a single attempt at a time', async () => {
    const r = await api('PUT', 'sys/generate-root/attempt', { token: c.root, body: {} });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['root generation already in progress']);
  });

  it('refuses an anonymous cancel', async () => {
    const r = await api('DELETE', 'sys/generate-root/attempt');
    expect(r.status).toBe(403);
    expect((await api('GET', 'sys/generate-root/attempt')).body.started).toBe(true);
  });

  it.each([
    [{ nonce: 'wrong', key: 'x' }, 'incorrect nonce supplied; the attempt may have been restarted'],
    [{ key: '12'.repeat(33) }, 'incorrect nonce supplied; the attempt may have been restarted'],
  ])('refuses update %j', async (body, message) => {
    const r = await api('PUT', 'sys/generate-root/update', { body });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });

  it('refuses a key that is not a share, and a repeated share', async () => {
    const bad = await api('PUT', 'sys/generate-root/update', { body: { nonce, key: '12'.repeat(33) } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/not a share of this cluster/);
    const first = await api('PUT', 'sys/generate-root/update', { body: { nonce, key: c.recoveryKeys[0] } });
    expect(first.body).toMatchObject({ progress: 1, complete: false });
    const dup = await api('PUT', 'sys/generate-root/update', { body: { nonce, key: c.recoveryKeys[0] } });
    expect(dup.status).toBe(400);
  });

  it('completes at the threshold with an OTP-encoded root token that decodes and works', async () => {
    const b64 = toBase64(fromHex(c.recoveryKeys[2])!);
    const r = await api('PUT', 'sys/generate-root/update', { body: { nonce, key: b64 } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ complete: true, progress: 2, required: 2 });
    expect(r.body.encoded_token).toBe(r.body.encoded_root_token);
    expect(r.body.encoded_token).not.toContain('=');
    const token = await decode(r.body.encoded_token, otp);
    expect(token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
    expect(await isRootToken(token)).toBe(true);
    expect((await api('GET', 'sys/generate-root/attempt')).body.started).toBe(false);
  });

  it('lets key holders without a token start (their share counts) and finish an attempt', async () => {
    const myOtp = 'A'.repeat(14) + 'b'.repeat(14);
    const start = await api('PUT', 'sys/generate-root/attempt', { body: { key: c.recoveryKeys[1], otp: myOtp } });
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({ started: true, progress: 1, otp: '' });
    const done = await api('PUT', 'sys/generate-root/update', { body: { nonce: start.body.nonce, key: c.recoveryKeys[2] } });
    expect(done.body.complete).toBe(true);
    expect(await isRootToken(await decode(done.body.encoded_token, myOtp))).toBe(true);
  });

  it('lets a key holder cancel an attempt', async () => {
    await api('PUT', 'sys/generate-root/attempt', { token: c.root, body: {} });
    expect((await api('DELETE', `sys/generate-root/attempt?key=${c.recoveryKeys[0]}`)).status).toBe(204);
    expect((await api('GET', 'sys/generate-root/attempt')).body.started).toBe(false);
  });

  it('lets a root token cancel an attempt', async () => {
    await api('PUT', 'sys/generate-root/attempt', { body: { key: c.recoveryKeys[0] } });
    expect((await api('DELETE', 'sys/generate-root/attempt', { token: c.root })).status).toBe(204);
    expect((await api('GET', 'sys/generate-root/attempt')).body.started).toBe(false);
  });

  it('mints tokens that work on every token-store shard', async () => {
    // Three shards in the test configuration: mint roots until each shard holds one.
    const seen = new Set([shardFor(c.root, 3)]);
    for (let i = 0; i < 40 && seen.size < 3; i++) {
      const s = await api('PUT', 'sys/generate-root/attempt', { token: c.root, body: {} });
      await api('PUT', 'sys/generate-root/update', { body: { nonce: s.body.nonce, key: c.recoveryKeys[0] } });
      const d = await api('PUT', 'sys/generate-root/update', { body: { nonce: s.body.nonce, key: c.recoveryKeys[1] } });
      const token = await decode(d.body.encoded_token, s.body.otp);
      expect(await isRootToken(token)).toBe(true);
      seen.add(shardFor(token, 3));
    }
    expect(seen.size).toBe(3);
  });

  it('refuses decode-token with missing fields', async () => {
    const r = await api('PUT', 'sys/decode-token', { body: { otp: 'x' } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['missing required field "encoded_token"']);
  });
});
