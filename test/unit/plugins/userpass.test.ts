// The userpass plugin's Backend at engine level, over MemoryStorage through dispatch (as the
// plugin SDK will host it): users, passwords (hashed and imported), policies, login and renewal.
import { describe, expect, it } from 'vitest';
import { dispatch, type Authorizer, type MountContext } from '../../../src/pipeline/dispatch';
import type { AuthContext, LoginAuth, LogicalResponse, WireOperation } from '../../../src/framework/backend';
import { CofferError } from '../../../src/framework/errors';
import { MemoryStorage, StorageTransaction } from '../../../src/framework/storage';
import { fromUtf8 } from '../../../src/crypto/encoding';
import { userpassBackend } from '../../../plugins/userpass/src/backend';

const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
const allowAll: Authorizer = { authorize: () => ({ sudo: true }), grantsCreateAndUpdate: () => false };
const mount: MountContext = { mountPoint: 'auth/userpass/', mountType: 'userpass', mountAccessor: 'auth_userpass_1', mountConfig: { defaultLeaseTTL: 3600, maxLeaseTTL: 86400 }, mountOptions: {} };

function engine() {
  const storage = new MemoryStorage();
  const backend = userpassBackend();
  const call = (operation: WireOperation, path: string, data: Record<string, unknown> = {}, clientIP = '10.0.0.5'): Promise<LogicalResponse> => {
    // Logins come without a token, as the host sends them to unauthenticated paths.
    const auth = path.startsWith('login/') ? null : root;
    const wire = { id: 'r', operation, path: `auth/userpass/${path}`, data, auth, clientIP, headers: {}, wrapTTL: 0 };
    return dispatch(backend, wire, mount, new StorageTransaction(storage), allowAll);
  };
  const login = async (username: string, password: string, clientIP?: string): Promise<LoginAuth> => {
    const res = await call('write', `login/${username}`, { password }, clientIP);
    expect(res.login, 'a login answers with the login it made').toBeDefined();
    return res.login as LoginAuth;
  };
  /** Every stored value, as text (MemoryStorage holds what the backend wrote, without a barrier). */
  const storedText = async (): Promise<string> => {
    const values = await Promise.all((await storage.list('user/')).map((k) => storage.get(`user/${k}`)));
    return values.map((v) => fromUtf8(v as Uint8Array)).join('\n');
  };
  return { call, login, storedText, renew: (name: string, policies: string[] = ['default']) => backend.renewLogin!(storage, name, policies) };
}

/** Asserts the call fails with this status and exact message (none: Vault's empty 404). */
async function fails(p: Promise<unknown>, status: number, message?: string): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected the call to fail').toBeInstanceOf(CofferError);
  expect({ status: (err as CofferError).status, errors: (err as CofferError).errors }).toEqual({ status, errors: message === undefined ? [] : [message] });
}

const defaults = {
  token_bound_cidrs: [],
  token_explicit_max_ttl: 0,
  token_max_ttl: 0,
  token_no_default_policy: false,
  token_num_uses: 0,
  token_period: 0,
  token_policies: [],
  token_ttl: 0,
  token_type: 'default',
};

/** A published bcrypt test vector (OpenBSD / jBCrypt): this hash is of the 26 lower-case letters. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';
const ALPHABET_HASH = '$2a$06$.rCVZVOThsIa97pEDOxvGuRRgzG64bvtJ0938xuqzv18d3ZpQhstC';

describe('users', () => {
  it('creates a user with every token field and reads it back without the password', async () => {
    const { call, storedText } = engine();
    expect(
      await call('write', 'users/alice', {
        password: 'correct horse',
        token_policies: 'dev, ops',
        token_ttl: '1h',
        token_max_ttl: '2h',
        token_explicit_max_ttl: 10800,
        token_num_uses: 5,
        token_bound_cidrs: ['10.0.0.0/8', '192.168.1.7'],
        token_no_default_policy: true,
        token_type: 'service',
      }),
    ).toEqual({});
    const read = await call('read', 'users/alice');
    expect(read.data).toEqual({
      token_bound_cidrs: ['10.0.0.0/8', '192.168.1.7'],
      token_explicit_max_ttl: 10800,
      token_max_ttl: 7200,
      token_no_default_policy: true,
      token_num_uses: 5,
      token_period: 0,
      token_policies: ['dev', 'ops'],
      token_ttl: 3600,
      token_type: 'service',
    });
    // Stored as a cost-10 bcrypt hash, never as the password itself.
    const stored = await storedText();
    expect(stored).toMatch(/"\$2a\$10\$[./A-Za-z0-9]{53}"/);
    expect(stored).not.toContain('correct horse');
    expect(JSON.stringify(read)).not.toContain('$2a$');
  });

  it('lower-cases usernames, lists them and deletes them', async () => {
    const { call, login } = engine();
    await fails(call('list', 'users/'), 404);
    await call('write', 'users/Bob', { password: 'pw-bob' });
    await call('write', 'users/alice', { password: 'pw-alice' });
    expect((await call('list', 'users')).data).toEqual({ keys: ['alice', 'bob'] });
    expect((await call('read', 'users/BOB')).data).toEqual(defaults);
    expect((await login('BoB', 'pw-bob')).aliasName).toBe('bob');
    // A second create of the same name in other case is an update: the password stays.
    await call('write', 'users/BOB', { token_ttl: 60 });
    expect((await login('bob', 'pw-bob')).ttl).toBe(60);

    expect(await call('delete', 'users/BOB')).toEqual({});
    await fails(call('read', 'users/bob'), 404);
    expect((await call('list', 'users/')).data).toEqual({ keys: ['alice'] });
    await fails(call('write', 'login/bob', { password: 'pw-bob' }), 400, 'invalid username or password');
  });

  it('keeps the password and unspecified fields on an update, and clears a field sent as null', async () => {
    const { call, login } = engine();
    await call('write', 'users/carol', { password: 'pw', token_policies: ['a'], token_ttl: 30 });
    await call('write', 'users/carol', { token_max_ttl: 90 });
    expect((await call('read', 'users/carol')).data).toMatchObject({ token_policies: ['a'], token_ttl: 30, token_max_ttl: 90 });
    await call('write', 'users/carol', { token_policies: null });
    expect((await call('read', 'users/carol')).data).toMatchObject({ token_policies: [] });
    expect((await login('carol', 'pw')).policies).toEqual([]);
  });

  it('accepts the deprecated aliases Vault userpass has, and only those', async () => {
    const { call } = engine();
    const res = await call('write', 'users/dan', { password: 'pw', policies: 'B,a, a', ttl: '5m', max_ttl: '10m', bound_cidrs: '10.1.0.0/16', period: 60, num_uses: 3 });
    expect(res.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [period num_uses]']);
    expect((await call('read', 'users/dan')).data).toEqual({
      ...defaults,
      token_policies: ['a', 'b'],
      policies: ['a', 'b'],
      token_ttl: 300,
      ttl: 300,
      token_max_ttl: 600,
      max_ttl: 600,
      token_bound_cidrs: ['10.1.0.0/16'],
      bound_cidrs: ['10.1.0.0/16'],
    });
    // Written through the token_* keys only, the deprecated ones are no longer shown.
    await call('write', 'users/dan', { token_policies: 'x', token_ttl: 0, token_max_ttl: 0, token_bound_cidrs: [] });
    expect((await call('read', 'users/dan')).data).toEqual({ ...defaults, token_policies: ['x'] });
  });
});

describe('bad input', () => {
  const bad: [string, Record<string, unknown>, string][] = [
    ['no password on create', { token_ttl: 60 }, 'missing password'],
    ['an empty password on create', { password: '' }, 'missing password'],
    ['both password and password_hash', { password: 'pw', password_hash: ALPHABET_HASH }, 'password and password_hash are mutually exclusive'],
    ['a password_hash that is not bcrypt', { password_hash: 'plain-text' }, 'password_hash is not a bcrypt hash: expected "$2a$", "$2b$" or "$2y$", a cost of 04 to 31 and 53 characters of salt and hash'],
    ['a password_hash of cost 03', { password_hash: ALPHABET_HASH.replace('$06$', '$03$') }, 'password_hash is not a bcrypt hash: expected "$2a$", "$2b$" or "$2y$", a cost of 04 to 31 and 53 characters of salt and hash'],
    ['a password bcrypt would truncate', { password: 'é'.repeat(37) }, 'bcrypt: password length exceeds 72 bytes'],
    ['a ttl that is no duration', { password: 'pw', token_ttl: 'soon' }, 'error converting input "soon" for field "token_ttl": time: invalid duration "soon"'],
    ['a negative ttl', { password: 'pw', token_max_ttl: -5 }, 'error converting input -5 for field "token_max_ttl": cannot provide negative value'],
    ['a ttl over the max ttl', { password: 'pw', token_ttl: '2h', token_max_ttl: '1h' }, "'token_ttl' cannot be greater than 'token_max_ttl'"],
    ['a bad CIDR', { password: 'pw', token_bound_cidrs: '10.0.0.0/33' }, 'error parsing address "10.0.0.0/33": invalid CIDR block or IP address'],
    ['a bad token type', { password: 'pw', token_type: 'admin' }, `invalid 'token_type' value "admin"`],
    ['periodic batch tokens', { password: 'pw', token_type: 'batch', token_period: 60 }, "'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens"],
    ['negative uses', { password: 'pw', token_num_uses: -1 }, "'token_num_uses' cannot be negative"],
    ['a non-boolean no_default_policy', { password: 'pw', token_no_default_policy: 'maybe' }, 'error converting input "maybe" for field "token_no_default_policy": cannot parse "maybe" as a boolean'],
  ];
  for (const [what, data, message] of bad) {
    it(`refuses ${what} and stores nothing`, async () => {
      const { call } = engine();
      await fails(call('write', 'users/eve', data), 400, message);
      await fails(call('read', 'users/eve'), 404);
    });
  }

  it('refuses an empty password on update and leaves the user as it was', async () => {
    const { call, login } = engine();
    await call('write', 'users/eve', { password: 'pw', token_ttl: 30 });
    await fails(call('write', 'users/eve', { password: '', token_ttl: 60 }), 400, 'missing password');
    await fails(call('write', 'users/eve', { password: null }), 400, 'missing password');
    expect((await login('eve', 'pw')).ttl).toBe(30);
  });

  it('refuses names Vault does not accept', async () => {
    const { call } = engine();
    for (const name of ['-eve', 'eve.', 'e ve']) await fails(call('write', `users/${name}`, { password: 'pw' }), 404, '1 error occurred:\n\t* unsupported path\n\n');
  });
});

describe('login', () => {
  it('answers with the login the host turns into a token', async () => {
    const { call, login } = engine();
    await call('write', 'users/frank', {
      password: 's3cret!',
      token_policies: 'dev,ops',
      token_ttl: '20m',
      token_max_ttl: '1h',
      token_explicit_max_ttl: '2h',
      token_period: 0,
      token_num_uses: 4,
      token_bound_cidrs: '10.0.0.0/24',
      token_no_default_policy: true,
      token_type: 'service',
    });
    expect(await login('Frank', 's3cret!')).toEqual({
      aliasName: 'frank',
      aliasMetadata: {},
      metadata: { username: 'frank' },
      displayName: 'frank',
      role: 'frank',
      policies: ['dev', 'ops'],
      noDefaultPolicy: true,
      ttl: 1200,
      maxTtl: 3600,
      explicitMaxTtl: 7200,
      period: 0,
      numUses: 4,
      boundCidrs: ['10.0.0.0/24'],
      tokenType: 'service',
    });
  });

  it('fails a wrong password and an unknown user identically', async () => {
    const { call } = engine();
    await call('write', 'users/gina', { password: 'right' });
    const timed = async (username: string, password: string): Promise<number> => {
      const start = Date.now();
      await fails(call('write', `login/${username}`, { password }), 400, 'invalid username or password');
      return Date.now() - start;
    };
    const wrongPassword = await timed('gina', 'wrong');
    const unknownUser = await timed('nobody', 'right');
    // An unknown user costs a full bcrypt comparison too (about 100 ms at cost 10; a skipped one takes ~0).
    expect(wrongPassword).toBeGreaterThan(20);
    expect(unknownUser).toBeGreaterThan(wrongPassword * 0.3);
    // Case matters in passwords, unlike names.
    await fails(call('write', 'login/gina', { password: 'Right' }), 400, 'invalid username or password');
    await fails(call('write', 'login/gina', {}), 400, 'missing password');
  });

  it('refuses a login from outside the bound CIDRs, with a correct password only', async () => {
    const { call, login } = engine();
    await call('write', 'users/hal', { password: 'pw', token_bound_cidrs: ['192.168.0.0/16', '2001:db8::/32'] });
    await fails(call('write', 'login/hal', { password: 'pw' }, '10.0.0.5'), 403, '1 error occurred:\n\t* permission denied\n\n');
    await fails(call('write', 'login/hal', { password: 'nope' }, '10.0.0.5'), 400, 'invalid username or password');
    expect((await login('hal', 'pw', '192.168.4.2')).boundCidrs).toEqual(['192.168.0.0/16', '2001:db8::/32']);
    expect((await login('hal', 'pw', '2001:db8::1')).aliasName).toBe('hal');
  });

  it('needs no token and writes nothing', () => {
    const backend = userpassBackend();
    expect(backend.unauthenticatedPaths).toEqual(['login/*']);
    expect(backend.storageFreeWritePaths).toEqual(['login/*']);
  });
});

describe('passwords', () => {
  it('changes the password on users/:username/password and on users/:username', async () => {
    const { call, login } = engine();
    await call('write', 'users/ivy', { password: 'first', token_ttl: 45 });
    expect(await call('write', 'users/IVY/password', { password: 'second' })).toEqual({});
    await fails(call('write', 'login/ivy', { password: 'first' }), 400, 'invalid username or password');
    expect((await login('ivy', 'second')).ttl).toBe(45);
    await call('write', 'users/ivy', { password: 'third' });
    await fails(call('write', 'login/ivy', { password: 'second' }), 400, 'invalid username or password');
    expect((await login('ivy', 'third')).aliasName).toBe('ivy');
  });

  it('imports a bcrypt hash made elsewhere, on create and on the password path', async () => {
    const { call, login, storedText } = engine();
    await call('write', 'users/jack', { password_hash: ALPHABET_HASH, token_policies: 'dev' });
    expect(await storedText()).toContain(ALPHABET_HASH);
    expect((await call('read', 'users/jack')).data).toEqual({ ...defaults, token_policies: ['dev'] });
    expect((await login('jack', ALPHABET)).policies).toEqual(['dev']);

    await call('write', 'users/jack/password', { password: 'typed' });
    await fails(call('write', 'login/jack', { password: ALPHABET }), 400, 'invalid username or password');
    await call('write', 'users/jack/password', { password_hash: ALPHABET_HASH.replace('$2a$', '$2y$') });
    expect((await login('jack', ALPHABET)).aliasName).toBe('jack');
  });

  it('refuses bad password changes', async () => {
    const { call, login } = engine();
    await fails(call('write', 'users/kim/password', { password: 'pw' }), 400, 'username does not exist');
    await call('write', 'users/kim', { password: 'pw' });
    await fails(call('write', 'users/kim/password', {}), 400, 'missing password');
    await fails(call('write', 'users/kim/password', { password: '' }), 400, 'missing password');
    await fails(call('write', 'users/kim/password', { password: 'a', password_hash: ALPHABET_HASH }), 400, 'password and password_hash are mutually exclusive');
    await fails(call('write', 'users/kim/password', { password_hash: ALPHABET_HASH.slice(0, -1) }), 400, 'password_hash is not a bcrypt hash: expected "$2a$", "$2b$" or "$2y$", a cost of 04 to 31 and 53 characters of salt and hash');
    expect((await login('kim', 'pw')).aliasName).toBe('kim');
  });
});

describe('policies', () => {
  it('updates the policies on users/:username/policies, which logins then get', async () => {
    const { call, login } = engine();
    await call('write', 'users/lee', { password: 'pw', token_policies: 'old', token_ttl: 60 });
    expect(await call('write', 'users/lee/policies', { token_policies: ' Ops,dev,ops, ' })).toEqual({});
    expect((await call('read', 'users/lee')).data).toEqual({ ...defaults, token_policies: ['dev', 'ops'], token_ttl: 60 });
    expect((await login('lee', 'pw')).policies).toEqual(['dev', 'ops']);

    // The deprecated key sets both, and is shown while it was the one written.
    await call('write', 'users/lee/policies', { policies: 'admin' });
    expect((await call('read', 'users/lee')).data).toMatchObject({ token_policies: ['admin'], policies: ['admin'] });
    await call('write', 'users/lee/policies', { token_policies: 'audit' });
    expect((await call('read', 'users/lee')).data).not.toHaveProperty('policies');
    expect((await login('lee', 'pw')).policies).toEqual(['audit']);
  });

  it('refuses a policies update for an unknown user', async () => {
    const { call } = engine();
    await fails(call('write', 'users/nobody/policies', { token_policies: 'a' }), 400, 'username does not exist');
  });
});

describe('renewal', () => {
  it("renews within the user's current limits", async () => {
    const { call, renew } = engine();
    await call('write', 'users/mia', { password: 'pw', token_ttl: '10m', token_max_ttl: '1h' });
    expect(await renew('mia')).toEqual({ ttl: 600, maxTtl: 3600, period: 0 });
    await call('write', 'users/mia', { token_ttl: 0, token_max_ttl: 0, token_period: '30m' });
    expect(await renew('mia')).toEqual({ ttl: 0, maxTtl: 0, period: 1800 });
  });

  it('refuses to renew a token of a deleted user', async () => {
    const { call, renew } = engine();
    await call('write', 'users/ned', { password: 'pw' });
    await call('delete', 'users/ned');
    await fails(renew('ned'), 400, 'user no longer exists');
  });

  it("refuses to renew a token whose user now has other policies (order and default do not count)", async () => {
    const { call, renew } = engine();
    await call('write', 'users/oz', { password: 'pw', token_policies: ['b', 'a'] });
    expect(await renew('oz', ['a', 'b', 'default'])).toMatchObject({ period: 0 });
    await call('write', 'users/oz/policies', { token_policies: ['a'] });
    await fails(renew('oz', ['a', 'b', 'default']), 400, 'policies have changed, not renewing');
    expect(await renew('oz', ['default', 'a'])).toMatchObject({ period: 0 });
  });
});
