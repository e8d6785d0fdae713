import { describe, expect, it } from 'vitest';
import { TokenLeaseCache, type LeaseReply } from '../../../../src/core/tokens/leases';
import { TokenValidator } from '../../../../src/core/tokens/validator';
import type { AuthContext } from '../../../../src/framework/backend';

const auth = (accessor: string): AuthContext => ({ accessor, policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] });
const ok = (accessor: string, until: number, expireTime: number | null = null): LeaseReply => ({
  status: 'ok',
  grant: { auth: auth(accessor), until, expireTime },
});

function counting(reply: () => LeaseReply | Promise<LeaseReply>) {
  const calls: string[] = [];
  const leases = new TokenLeaseCache();
  const cache = {
    resolve: async (token: string, now = Date.now()) =>
      (
        await leases.resolve(
          token,
          async () => {
            calls.push(token);
            return reply();
          },
          now,
        )
      )?.auth ?? null,
    forgetAccessor: (a: string) => leases.forgetAccessor(a),
    clear: () => leases.clear(),
  };
  return { cache, calls };
}

describe('TokenLeaseCache', () => {
  it('asks the shard once per lease and reuses it until it ends', async () => {
    const { cache, calls } = counting(() => ok('acc', 1_000));
    expect((await cache.resolve('t', 0))?.accessor).toBe('acc');
    expect((await cache.resolve('t', 999))?.accessor).toBe('acc');
    expect(calls).toHaveLength(1);
    await cache.resolve('t', 1_000);
    expect(calls).toHaveLength(2);
  });

  it('stops trusting a lease when the token itself expires', async () => {
    const { cache, calls } = counting(() => ok('acc', 10_000, 500));
    await cache.resolve('t', 0);
    await cache.resolve('t', 500);
    expect(calls).toHaveLength(2);
  });

  it('does not cache unknown tokens, and reports a sealed shard as 503', async () => {
    const invalid = counting(() => ({ status: 'invalid' }));
    expect(await invalid.cache.resolve('t')).toBeNull();
    expect(await invalid.cache.resolve('t')).toBeNull();
    expect(invalid.calls).toHaveLength(2);
    const sealed = counting(() => ({ status: 'sealed' }));
    await expect(sealed.cache.resolve('t')).rejects.toMatchObject({ status: 503 });
  });

  it('shares one question among concurrent requests for the same token', async () => {
    let release!: (r: LeaseReply) => void;
    const { cache, calls } = counting(() => new Promise<LeaseReply>((r) => (release = r)));
    const all = Promise.all([cache.resolve('t', 0), cache.resolve('t', 0), cache.resolve('t', 0)]);
    await Promise.resolve();
    release(ok('acc', 1_000));
    expect((await all).map((a) => a?.accessor)).toEqual(['acc', 'acc', 'acc']);
    expect(calls).toHaveLength(1);
  });

  it('forgets a revoked token at once', async () => {
    const { cache, calls } = counting(() => ok('acc', 1_000_000));
    await cache.resolve('t', 0);
    cache.forgetAccessor('acc');
    await cache.resolve('t', 1);
    expect(calls).toHaveLength(2);
  });

  it('does not keep a lease whose revocation arrived before the reply', async () => {
    let release!: (r: LeaseReply) => void;
    const { cache } = counting(() => new Promise<LeaseReply>((r) => (release = r)));
    const pending = cache.resolve('t', 0);
    await Promise.resolve();
    cache.forgetAccessor('acc'); // the shard revoked the token while the lease was on its way
    release(ok('acc', 1_000_000));
    expect(await pending).toBeNull();
  });

  it('does not keep a grant that is valid only now (use-limited tokens)', async () => {
    const { cache, calls } = counting(() => ok('acc', 5));
    expect((await cache.resolve('t', 5))?.accessor).toBe('acc');
    await cache.resolve('t', 5);
    expect(calls).toHaveLength(2);
  });

  it('clear() drops every lease', async () => {
    const { cache, calls } = counting(() => ok('acc', 1_000_000));
    await cache.resolve('t', 0);
    cache.clear();
    await cache.resolve('t', 1);
    expect(calls).toHaveLength(2);
  });
});

describe('TokenValidator', () => {
  const validator = (reply: LeaseReply) => {
    const asked: string[] = [];
    const v = new TokenValidator({
      keys: { keyring: async () => null } as never,
      leaseToken: async (token) => (asked.push(token), reply),
      leaseAccessor: async () => ({ status: 'invalid' }),
    });
    return { v, asked };
  };
  const bound = (until: number): LeaseReply => ({ status: 'ok', grant: { auth: { ...auth('b'), root: false, boundCidrs: ['10.0.0.0/8'] }, until, expireTime: null } });

  it('answers without awaiting while the lease is held, and asks the shard otherwise', async () => {
    const { v, asked } = validator(ok('acc', 1_000));
    const first = v.validate('t', '127.0.0.1', 0);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toMatchObject({ status: 'ok', auth: { accessor: 'acc' } });
    const again = v.validate('t', '127.0.0.1', 999);
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toMatchObject({ status: 'ok', auth: { accessor: 'acc' } });
    // Past the lease: asked again.
    expect(v.validate('t', '127.0.0.1', 1_000)).toBeInstanceOf(Promise);
    expect(asked).toEqual(['t', 't']);
  });

  it('checks CIDR bindings on both paths', async () => {
    const { v } = validator(bound(1_000));
    expect(await v.validate('t', '192.168.1.1', 0)).toEqual({ status: 'cidr' });
    expect(v.validate('t', '192.168.1.1', 1)).toEqual({ status: 'cidr' });
    expect(v.validate('t', '10.1.2.3', 2)).toMatchObject({ status: 'ok' });
  });
});
