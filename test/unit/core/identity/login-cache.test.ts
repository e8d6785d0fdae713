// Repeated logins that would change nothing skip the identity mount; anything different, a clear
// (an identity or policy change) or age asks it again; a login that raced a clear is not kept.
import { describe, expect, it } from 'vitest';
import type { IdentityLoginInput, IdentityLoginResult } from '../../../../src/core/identity/types';
import { LoginIdentityCache } from '../../../../src/core/identity/login-cache';

const input = (over: Partial<IdentityLoginInput> = {}): IdentityLoginInput => ({
  mountAccessor: 'auth_jwt_1',
  mountPath: 'auth/jwt/',
  mountType: 'jwt',
  aliasName: 'alice',
  aliasMetadata: { role: 'dev' },
  groupAliasNames: ['a'],
  ...over,
});

function counting() {
  const calls: IdentityLoginInput[] = [];
  let n = 0;
  const cache = new LoginIdentityCache(async (i) => {
    calls.push(i);
    return { entityId: `e${++n}`, disabled: false, policies: [] } satisfies IdentityLoginResult;
  });
  return { cache, calls };
}

describe('LoginIdentityCache', () => {
  it('answers the same login from memory, and asks again for any difference', async () => {
    const { cache, calls } = counting();
    const first = await cache.resolve(input());
    expect(await cache.resolve(input())).toBe(first);
    expect(calls.length).toBe(1);
    await cache.resolve(input({ aliasMetadata: { role: 'ops' } }));
    await cache.resolve(input({ groupAliasNames: ['a', 'b'] }));
    await cache.resolve(input({ aliasName: 'bob' }));
    await cache.resolve(input({ mountAccessor: 'auth_jwt_2' }));
    expect(calls.length).toBe(5);
  });

  it('forgets everything on clear and after a minute', async () => {
    const { cache, calls } = counting();
    const t = Date.now();
    await cache.resolve(input(), t);
    cache.clear();
    await cache.resolve(input(), t);
    expect(calls.length).toBe(2);
    await cache.resolve(input(), t + 59_000);
    expect(calls.length).toBe(2);
    await cache.resolve(input(), t + 61_000);
    expect(calls.length).toBe(3);
  });

  it('does not keep an answer that was in flight when the cache was cleared', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let n = 0;
    const cache = new LoginIdentityCache(async () => {
      n++;
      if (n === 1) await gate;
      return { entityId: `e${n}`, disabled: n === 1, policies: [] };
    });
    const pending = cache.resolve(input());
    cache.clear();
    release();
    expect((await pending).entityId).toBe('e1');
    expect((await cache.resolve(input())).entityId).toBe('e2');
  });
});
