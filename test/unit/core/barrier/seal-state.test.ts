// The seal state machine without Durable Objects: memory physical storage and recording ports.
import { describe, expect, it } from 'vitest';
import { MemoryPhysical } from '../../../../src/core/barrier/physical';
import { sealFromSecret, StaticKeySeal } from '../../../../src/core/barrier/seal';
import { decodeToken, SealState, validateShareConfig } from '../../../../src/core/barrier/seal-state';
import { randomBytes } from '../../../../src/crypto/random';
import { CofferError } from '../../../../src/framework/errors';

function core(seal = new StaticKeySeal(randomBytes(32)), physical = new MemoryPhysical(), options = {}) {
  const events: string[] = [];
  const roots: string[] = [];
  const c = new SealState(
    physical,
    seal,
    { createRootToken: async (t) => void roots.push(t), keyringRotated: async () => void events.push('rotated') },
    options,
  );
  return { c, events, roots, physical, seal };
}

const status = async (p: Promise<unknown>) => ((await p.catch((e) => e)) as CofferError).status;

describe('SealState', () => {
  it('refuses to initialise without a seal key, saying how to set one', async () => {
    const { c } = core(null as unknown as StaticKeySeal);
    const err = (await c.init({ recovery_shares: 1, recovery_threshold: 1 }).catch((e) => e)) as CofferError;
    expect(err.status).toBe(400);
    expect(err.errors[0]).toMatch(/no seal key is configured: set the SEAL_KEY secret/);
    expect(c.isInitialized()).toBe(false);
    expect((await c.sealStatus()).warnings).toEqual(['no seal key is configured (SEAL_KEY): the server can neither initialise nor unseal']);
  });

  it('reports a malformed SEAL_KEY', () => {
    expect(() => sealFromSecret('abc')).toThrow('SEAL_KEY must be 32 bytes');
    expect(sealFromSecret('')).toBeNull();
    expect(sealFromSecret('00'.repeat(32))).toBeInstanceOf(StaticKeySeal);
    expect(sealFromSecret(btoa('k'.repeat(32)))).toBeInstanceOf(StaticKeySeal);
  });

  it('initialises, unseals itself, and stays sealed only when told to', async () => {
    const { c, events, roots } = core();
    const out = await c.init({ recovery_shares: 3, recovery_threshold: 2 });
    expect(out.keys).toEqual([]);
    expect(out.recovery_keys).toHaveLength(3);
    expect(roots).toEqual([out.root_token]);
    expect(out.root_token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
    await c.rotate();
    expect(events).toEqual(['rotated']);
    expect(await c.isSealed()).toBe(false);
    await expect(c.init({ recovery_shares: 1, recovery_threshold: 1 })).rejects.toMatchObject({ errors: ['Vault is already initialized'] });
  });

  it('uses the dev root token id when configured', async () => {
    const { c } = core(undefined, undefined, { devRootToken: 'dev-root' });
    expect((await c.init({ recovery_shares: 1, recovery_threshold: 1 })).root_token).toBe('dev-root');
  });

  it('takes secret_shares/secret_threshold when no recovery_* are given', async () => {
    const { c } = core();
    expect((await c.init({ secret_shares: 5, secret_threshold: 3 })).recovery_keys).toHaveLength(5);
    expect((await c.sealStatus()).t).toBe(3);
  });

  it.each([
    [0, 0, 'recovery_shares must be at least 1'],
    [3, 0, 'recovery_threshold must be at least 1'],
    [2, 3, 'cannot be greater than recovery_shares'],
    [256, 3, 'cannot exceed 255'],
    [3, 1, 'must be at least 2 when recovery_shares is greater than 1'],
  ])('refuses recovery_shares=%i recovery_threshold=%i', (n, t, message) => {
    expect(() => validateShareConfig(n, t)).toThrow(message);
  });

  it('refuses PGP options', async () => {
    const { c } = core();
    expect(await status(c.init({ recovery_shares: 1, recovery_threshold: 1, pgp_keys: ['k'] }))).toBe(400);
  });

  it('stays sealed, with the reason, when restarted with a different seal key', async () => {
    const physical = new MemoryPhysical();
    await core(undefined, physical).c.init({ recovery_shares: 1, recovery_threshold: 1 });
    const other = core(new StaticKeySeal(randomBytes(32)), physical).c;
    expect(await other.isSealed()).toBe(true);
    const s = await other.sealStatus();
    expect(s.initialized).toBe(true);
    expect(s.sealed).toBe(true);
    expect((s.warnings as string[])[0]).toMatch(/cannot decrypt the stored root key/);
  });

  it('restarts unsealed with the right key, and sealed after sys/seal', async () => {
    const physical = new MemoryPhysical();
    const first = core(undefined, physical);
    await first.c.init({ recovery_shares: 1, recovery_threshold: 1 });
    expect(await core(first.seal, physical).c.isSealed()).toBe(false);
    await first.c.sealNow();
    expect(await core(first.seal, physical).c.isSealed()).toBe(true);
  });

  it('decodes OTP-encoded tokens and refuses mismatched lengths', () => {
    const token = 'hvs.abcdefghijklmnopqrstuvwx';
    const otp = 'ABCDEFGHIJKLMNOPQRSTUVWXYZab';
    const encoded = btoa(String.fromCharCode(...[...token].map((ch, i) => ch.charCodeAt(0) ^ otp.charCodeAt(i)))).replace(/=+$/, '');
    expect(decodeToken(encoded, otp)).toBe(token);
    expect(() => decodeToken(encoded, 'short')).toThrow('different lengths');
    expect(() => decodeToken('!!', otp)).toThrow('not valid base64');
  });
});
