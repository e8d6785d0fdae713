// DR operation-token generation in SealState: the generate-root protocol (attempt, update with
// key and nonce, OTP encoding, same errors) in a slot of its own, completing through the caller's
// `issue` callback instead of a root token. The two slots never disturb each other.
import { describe, expect, it } from 'vitest';
import { MemoryPhysical } from '../../../../src/core/barrier/physical';
import { StaticKeySeal } from '../../../../src/core/barrier/seal';
import { decodeToken, OPERATION_TOKEN_LENGTH, SealState } from '../../../../src/core/barrier/seal-state';
import { newRootToken } from '../../../../src/core/tokens/entry';
import { randomBytes } from '../../../../src/crypto/random';
import { CofferError } from '../../../../src/framework/errors';

type Status = Record<string, unknown>;

/** An initialised, unsealed core with `n` recovery shares of threshold `t`; `issue` records what it mints. */
async function setup(n = 3, t = 2) {
  const seal = new StaticKeySeal(randomBytes(32));
  const physical = new MemoryPhysical();
  const roots: string[] = [];
  const make = () => new SealState(physical, seal, { createRootToken: async (tok) => void roots.push(tok), keyringRotated: async () => undefined });
  const c = make();
  const init = await c.init({ recovery_shares: n, recovery_threshold: t });
  roots.length = 0; // only tokens minted by the tests below
  const issued: string[] = [];
  const issue = async () => {
    const token = newRootToken();
    issued.push(token);
    return token;
  };
  return { c, make, shares: init.recovery_keys as string[], roots, issued, issue };
}

async function failure(p: Promise<unknown>): Promise<CofferError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(CofferError);
  return e as CofferError;
}
const message = async (p: Promise<unknown>) => {
  const e = await failure(p);
  expect(e.status).toBe(400);
  return e.errors[0];
};

const OTP = 'ABCDEFGHIJKLMNOPQRSTUVWXYZab';

describe('DR operation-token generation', () => {
  it('reports no attempt, with the generate-root status shape', async () => {
    const { c } = await setup();
    const status = await c.operationTokenGet();
    expect(status).toEqual({
      nonce: '',
      started: false,
      progress: 0,
      required: 2,
      complete: false,
      encoded_token: '',
      encoded_root_token: '',
      pgp_fingerprint: '',
      otp: '',
      otp_length: OPERATION_TOKEN_LENGTH,
    });
    expect(Object.keys(status).sort()).toEqual(Object.keys(await c.generateRootGet()).sort());
  });

  it('starts without an OTP: generates one and returns it once', async () => {
    const { c, issue } = await setup();
    const started = await c.operationTokenStart({}, true, issue);
    expect(started).toMatchObject({ started: true, progress: 0, required: 2, complete: false });
    expect(started.otp).toMatch(new RegExp(`^[A-Za-z0-9]{${OPERATION_TOKEN_LENGTH}}$`));
    expect(started.nonce).toMatch(/^[0-9a-f-]{36}$/);
    const again = await c.operationTokenGet();
    expect(again).toMatchObject({ started: true, nonce: started.nonce, otp: '' });
  });

  it('starts with a caller-chosen OTP and does not echo it', async () => {
    const { c, issue } = await setup();
    expect(await c.operationTokenStart({ otp: OTP }, true, issue)).toMatchObject({ started: true, otp: '' });
  });

  it('refuses an OTP of the wrong length and a PGP key', async () => {
    const { c, issue } = await setup();
    expect(await message(c.operationTokenStart({ otp: 'short' }, true, issue))).toBe('OTP string has incorrect length');
    expect(await message(c.operationTokenStart({ otp: `${OTP}x` }, true, issue))).toBe('OTP string has incorrect length');
    expect(await message(c.operationTokenStart({ pgp_key: 'mQENBF' }, true, issue))).toMatch(/PGP-encrypted root tokens are not supported/);
    expect((await c.operationTokenGet()).started).toBe(false);
  });

  it('allows one attempt at a time', async () => {
    const { c, issue } = await setup();
    await c.operationTokenStart({}, true, issue);
    expect(await message(c.operationTokenStart({}, true, issue))).toBe('DR operation token generation already in progress');
  });

  it('needs a token with sudo or a recovery share to start or cancel', async () => {
    const { c, shares, issue } = await setup();
    expect((await failure(c.operationTokenStart({}, false, issue))).status).toBe(403);
    expect((await failure(c.operationTokenStart({ key: randomBytes(33).reduce((s, b) => s + b.toString(16).padStart(2, '0'), '') }, false, issue))).status).toBe(403);
    const started = await c.operationTokenStart({ key: shares[0] }, false, issue);
    expect(started).toMatchObject({ started: true, progress: 1 });
    expect((await failure(c.operationTokenCancel(false, undefined))).status).toBe(403);
    await c.operationTokenCancel(false, shares[1]);
    expect((await c.operationTokenGet()).started).toBe(false);
  });

  it('refuses updates without an attempt, without a key, or with a wrong nonce', async () => {
    const { c, shares, issue } = await setup();
    expect(await message(c.operationTokenUpdate({ key: shares[0], nonce: 'x' }, issue))).toBe('no DR operation token generation in progress');
    const { nonce } = await c.operationTokenStart({}, true, issue);
    expect(await message(c.operationTokenUpdate({ nonce: nonce as string }, issue))).toBe("'key' must be specified in request body as JSON");
    expect(await message(c.operationTokenUpdate({ key: shares[0], nonce: 'not-the-nonce' }, issue))).toMatch(/^incorrect nonce supplied/);
    expect(await message(c.operationTokenUpdate({ key: 'zz', nonce: nonce as string }, issue))).toBe("'key' must be a valid hex or base64 string");
    expect((await c.operationTokenGet()).progress).toBe(0);
  });

  it('refuses a repeated share and a key that is not a share', async () => {
    const { c, shares, issue } = await setup(3, 3);
    const { nonce } = await c.operationTokenStart({}, true, issue);
    await c.operationTokenUpdate({ key: shares[0], nonce: nonce as string }, issue);
    expect(await message(c.operationTokenUpdate({ key: shares[0], nonce: nonce as string }, issue))).toBe('given key has already been provided during this operation');
    expect(await message(c.operationTokenUpdate({ key: '11'.repeat(33), nonce: nonce as string }, issue))).toMatch(/^recovery key verification failed/);
    expect((await c.operationTokenGet()).progress).toBe(1);
  });

  it('completes at the threshold: issues once, encodes with the OTP, and clears the slot', async () => {
    const { c, shares, issue, issued, roots } = await setup();
    const { nonce, otp } = await c.operationTokenStart({}, true, issue);
    expect(await c.operationTokenUpdate({ key: shares[2], nonce: nonce as string }, issue)).toMatchObject({ progress: 1, complete: false, encoded_token: '' });
    const done = await c.operationTokenUpdate({ key: shares[0], nonce: nonce as string }, issue);
    expect(done).toMatchObject({ complete: true, progress: 2, required: 2, nonce, otp: '' });
    expect(done.encoded_token).toBe(done.encoded_root_token);
    expect(done.encoded_token).not.toMatch(/=/); // unpadded base64, as Vault's RawStdEncoding
    expect(issued).toHaveLength(1);
    expect(roots).toEqual([]); // no root token is created
    expect(decodeToken(done.encoded_token as string, otp as string)).toBe(issued[0]);
    expect((await c.operationTokenGet()).started).toBe(false);
    expect(await message(c.operationTokenUpdate({ key: shares[1], nonce: nonce as string }, issue))).toBe('no DR operation token generation in progress');
  });

  it('completes on start when a single share suffices, returning the generated OTP', async () => {
    const { c, shares, issue, issued } = await setup(1, 1);
    const done = await c.operationTokenStart({ key: shares[0] }, false, issue);
    expect(done).toMatchObject({ complete: true, progress: 1, required: 1 });
    expect(decodeToken(done.encoded_token as string, done.otp as string)).toBe(issued[0]);
    const withOtp = await c.operationTokenStart({ key: shares[0], otp: OTP }, true, issue);
    expect(withOtp.otp).toBe('');
    expect(decodeToken(withOtp.encoded_token as string, OTP)).toBe(issued[1]);
  });

  it('keeps the attempt when issuing fails, so the last share can be given again', async () => {
    const { c, shares, issue, issued } = await setup();
    const { nonce, otp } = await c.operationTokenStart({}, true, issue);
    await c.operationTokenUpdate({ key: shares[0], nonce: nonce as string }, issue);
    const broken = async (): Promise<string> => {
      throw new Error('storage unavailable');
    };
    await expect(c.operationTokenUpdate({ key: shares[1], nonce: nonce as string }, broken)).rejects.toThrow('storage unavailable');
    expect(await c.operationTokenGet()).toMatchObject({ started: true, progress: 1 });
    const done = await c.operationTokenUpdate({ key: shares[1], nonce: nonce as string }, issue);
    expect(decodeToken(done.encoded_token as string, otp as string)).toBe(issued[0]);
  });

  it('refuses an issued token whose length differs from the OTP', async () => {
    const { c, shares } = await setup(1, 1);
    await expect(c.operationTokenStart({ key: shares[0] }, true, async () => 'too-short')).rejects.toThrow(/issued token has 9 bytes; the OTP has 28/);
  });

  it('cancels: the old nonce no longer works and a new attempt starts from zero', async () => {
    const { c, shares, issue } = await setup();
    const first = await c.operationTokenStart({}, true, issue);
    await c.operationTokenUpdate({ key: shares[0], nonce: first.nonce as string }, issue);
    await c.operationTokenCancel(true, undefined);
    expect(await c.operationTokenGet()).toMatchObject({ started: false, progress: 0, nonce: '' });
    const second = await c.operationTokenStart({}, true, issue);
    expect(second.nonce).not.toBe(first.nonce);
    expect(second.otp).not.toBe(first.otp);
    expect(await message(c.operationTokenUpdate({ key: shares[1], nonce: first.nonce as string }, issue))).toMatch(/^incorrect nonce supplied/);
    expect((await c.operationTokenUpdate({ key: shares[0], nonce: second.nonce as string }, issue)).progress).toBe(1);
  });

  it('persists an attempt across a restart of the object', async () => {
    const { c, make, shares, issue, issued } = await setup();
    const { nonce, otp } = await c.operationTokenStart({}, true, issue);
    await c.operationTokenUpdate({ key: shares[0], nonce: nonce as string }, issue);
    const restarted = make();
    expect(await restarted.operationTokenGet()).toMatchObject({ started: true, progress: 1, nonce });
    const done = await restarted.operationTokenUpdate({ key: shares[1], nonce: nonce as string }, issue);
    expect(decodeToken(done.encoded_token as string, otp as string)).toBe(issued[0]);
  });

  it('answers 503 while sealed', async () => {
    const { c, shares, issue } = await setup();
    await c.sealNow();
    for (const call of [
      () => c.operationTokenGet(),
      () => c.operationTokenStart({}, true, issue),
      () => c.operationTokenCancel(true, undefined),
      () => c.operationTokenUpdate({ key: shares[0], nonce: 'n' }, issue),
    ]) {
      expect((await failure(call())).status).toBe(503);
    }
  });
});

describe('the root and DR operation-token slots are independent', () => {
  it('runs both attempts at once, each with its own nonce, OTP and progress', async () => {
    const { c, shares, issue } = await setup(3, 3);
    const root = await c.generateRootStart({}, true);
    const op = await c.operationTokenStart({}, true, issue);
    expect(op.nonce).not.toBe(root.nonce);
    // The same share counts once in each attempt.
    await c.generateRootUpdate({ key: shares[0], nonce: root.nonce as string });
    await c.operationTokenUpdate({ key: shares[0], nonce: op.nonce as string }, issue);
    await c.operationTokenUpdate({ key: shares[1], nonce: op.nonce as string }, issue);
    expect((await c.generateRootGet()).progress).toBe(1);
    expect((await c.operationTokenGet()).progress).toBe(2);
    // A nonce of one kind is wrong for the other.
    expect(await message(c.operationTokenUpdate({ key: shares[2], nonce: root.nonce as string }, issue))).toMatch(/^incorrect nonce supplied/);
    expect(await message(c.generateRootUpdate({ key: shares[2], nonce: op.nonce as string }))).toMatch(/^incorrect nonce supplied/);
  });

  it('starting, cancelling or completing one kind leaves the other as it was', async () => {
    const { c, shares, issue, issued, roots } = await setup();
    const root = await c.generateRootStart({}, true);
    expect((await c.operationTokenStart({}, true, issue)).started).toBe(true); // not "already in progress"
    await c.operationTokenCancel(true, undefined);
    expect(await c.generateRootGet()).toMatchObject({ started: true, nonce: root.nonce });

    const op = await c.operationTokenStart({}, true, issue);
    await c.generateRootCancel(true, undefined);
    expect(await c.operationTokenGet()).toMatchObject({ started: true, nonce: op.nonce });

    const root2 = await c.generateRootStart({}, true);
    await c.operationTokenUpdate({ key: shares[0], nonce: op.nonce as string }, issue);
    const opDone = await c.operationTokenUpdate({ key: shares[1], nonce: op.nonce as string }, issue);
    expect(decodeToken(opDone.encoded_token as string, op.otp as string)).toBe(issued[0]);
    expect(roots).toEqual([]);
    expect(await c.generateRootGet()).toMatchObject({ started: true, nonce: root2.nonce, progress: 0 });

    await c.generateRootUpdate({ key: shares[0], nonce: root2.nonce as string });
    const rootDone = await c.generateRootUpdate({ key: shares[2], nonce: root2.nonce as string });
    expect(decodeToken(rootDone.encoded_root_token as string, root2.otp as string)).toBe(roots[0]);
    expect(issued).toHaveLength(1); // root completion never calls the DR callback
  });
});
