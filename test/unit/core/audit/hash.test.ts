// The HMAC rules of audit entries: which values a device hides, and with what.
import { describe, expect, it } from 'vitest';
import { toHex, utf8 } from '../../../../src/crypto/encoding';
import { hashData, hashValue, rawHasher, rememberingHasher, saltedHasher } from '../../../../src/core/audit/hash';

const salt = utf8('a fixed salt for these tests, 32b');

/** HMAC-SHA256 computed independently of the code under test. */
async function reference(value: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', salt, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return `hmac-sha256:${toHex(new Uint8Array(await crypto.subtle.sign('HMAC', key, utf8(value))))}`;
}

describe('the salted hash', () => {
  it('is HMAC-SHA256 of the value under the salt, prefixed like Vault', async () => {
    const hash = saltedHasher(salt);
    expect(await hash('my-secret-vault')).toBe(await reference('my-secret-vault'));
    expect(await hash('my-secret-vault')).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(await hash('other')).not.toBe(await hash('my-secret-vault'));
  });

  it('differs with another salt', async () => {
    expect(await saltedHasher(utf8('another salt'))('x')).not.toBe(await saltedHasher(salt)('x'));
  });
});

describe('hashing data', () => {
  const hash = saltedHasher(salt);

  it('hashes every string, at any depth and inside arrays; numbers, booleans and null stay', async () => {
    const data = { password: 'p4ss', port: 5432, tls: true, none: null, nested: { user: 'bob', n: 1.5, list: ['a', 2, { deep: 'z' }] } };
    expect(await hashData(data, hash, [])).toEqual({
      password: await reference('p4ss'),
      port: 5432,
      tls: true,
      none: null,
      nested: { user: await reference('bob'), n: 1.5, list: [await reference('a'), 2, { deep: await reference('z') }] },
    });
  });

  it('leaves the whole value of a non-HMAC key alone, wherever the key appears', async () => {
    const data = { username: 'alice', password: 'p4ss', nested: { username: 'carol', other: 'x' }, username_list: ['u'] };
    const out = await hashData(data, hash, ['username']);
    expect(out.username).toBe('alice');
    expect(out.password).toBe(await reference('p4ss'));
    expect(out.nested).toEqual({ username: 'carol', other: await reference('x') });
    expect(out.username_list).toEqual([await reference('u')]);
  });

  it('keeps a listed key holding a structure as it is', async () => {
    const out = await hashData({ meta: { a: 'b' }, x: 'y' }, hash, ['meta']);
    expect(out).toEqual({ meta: { a: 'b' }, x: await reference('y') });
  });

  it('does not modify its input', async () => {
    const data = { a: 'b', n: { c: 'd' } };
    await hashData(data, hash, []);
    expect(data).toEqual({ a: 'b', n: { c: 'd' } });
  });

  it('raw hashing (log_raw) is the identity', async () => {
    expect(await hashValue({ a: 'b', l: ['c'] }, rawHasher)).toEqual({ a: 'b', l: ['c'] });
  });

  it('remembering: the same hashes, each recent value hashed once, and only the last ones kept', async () => {
    const hashed: string[] = [];
    const counting = async (v: string) => {
      hashed.push(v);
      return saltedHasher(salt)(v);
    };
    const remembering = rememberingHasher(counting, 2);
    expect(await remembering('hvs.token')).toBe(await reference('hvs.token'));
    expect(await remembering('hvs.token')).toBe(await reference('hvs.token'));
    expect(hashed).toEqual(['hvs.token']);
    await remembering('b');
    await remembering('c');
    // Two kept: 'hvs.token' went first and is hashed again.
    expect(await remembering('hvs.token')).toBe(await reference('hvs.token'));
    expect(hashed).toEqual(['hvs.token', 'b', 'c', 'hvs.token']);
  });
});
