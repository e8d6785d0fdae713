// test/sign's logic and the allow_* guards, against a software ManagedKey (keys made here with
// crypto/transit), and the backend registry.
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeyPair, sign, verify, type AsymmetricKey, type AsymmetricType } from '../../../src/crypto/transit/asymmetric';
import { HASH_NAMES, type HashName } from '../../../src/crypto/transit/hashes';
import { publicKeyPem } from '../../../src/crypto/transit/key-encoding';
import { createBackend, registerBackend, type BackendFactory } from '../../../src/managed-keys/backends';
import { buildEntry } from '../../../src/managed-keys/entry';
import { assertMayStore, ensureKey, replaceKey } from '../../../src/managed-keys/guard';
import { testSign } from '../../../src/managed-keys/self-test';
import { ManagedKeyError, ManagedKeyMissing, type ManagedKey, type ManagedKeyEntry, type PublicKeyInfo, type SignOptions } from '../../../src/managed-keys/types';

/** A key held in memory: absent until generated (or given), counting generations. */
class SoftwareKey implements ManagedKey {
  generated = 0;
  constructor(
    private readonly type: AsymmetricType,
    public key: AsymmetricKey | null = null,
    /** Signs with this other key instead (a backend that lies). */
    private readonly signer: AsymmetricKey | null = null,
    private readonly backendVerifies = true,
  ) {}

  private info(k: AsymmetricKey): PublicKeyInfo {
    const rsa = k.type.startsWith('rsa');
    return rsa
      ? { pem: publicKeyPem(k), keyType: 'rsa', bits: Number(k.type.slice(4)) }
      : { pem: publicKeyPem(k), keyType: 'ec', curve: ({ 'ecdsa-p256': 'P-256', 'ecdsa-p384': 'P-384', 'ecdsa-p521': 'P-521' } as const)[k.type as 'ecdsa-p256'] };
  }
  private opts(o: SignOptions) {
    return { hash: o.hash, prehashed: true, signatureAlgorithm: o.pss ? ('pss' as const) : ('pkcs1v15' as const), saltLength: o.saltLength ?? ('hash' as const), marshaling: 'asn1' as const };
  }
  async publicKey() {
    if (!this.key) throw new ManagedKeyMissing();
    return this.info(this.key);
  }
  async sign(digest: Uint8Array, o: SignOptions) {
    if (!this.key) throw new ManagedKeyMissing();
    return await sign(this.signer ?? this.key, digest, this.opts(o));
  }
  async verify(digest: Uint8Array, signature: Uint8Array, o: SignOptions) {
    return this.backendVerifies && this.key !== null && (await verify(this.key, digest, signature, this.opts(o)));
  }
  async encrypt(): Promise<Uint8Array> {
    throw new ManagedKeyError(400, 'not here');
  }
  async decrypt(): Promise<Uint8Array> {
    throw new ManagedKeyError(400, 'not here');
  }
  async generate() {
    this.generated++;
    this.key = await generateKeyPair(this.type);
    return this.info(this.key);
  }
}

const entry = (extra: Record<string, unknown> = {}): ManagedKeyEntry =>
  buildEntry({
    type: 'pkcs11',
    name: 'soft',
    raw: { library: 'soft', slot: '0', pin: '1', key_label: 'k', mechanism: '0x0001', key_bits: 2048, ...extra },
    previous: null,
    newId: () => '00000000-0000-4000-8000-000000000001',
  });

async function refused(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ManagedKeyError);
    expect((e as ManagedKeyError).status).toBe(400);
    return (e as ManagedKeyError).errors[0];
  }
  throw new Error('expected a refusal');
}

const keys = new Map<AsymmetricType, AsymmetricKey>();
const pair = async (type: AsymmetricType) => {
  if (!keys.has(type)) keys.set(type, await generateKeyPair(type));
  return keys.get(type)!;
};

describe('testSign', () => {
  it.each(HASH_NAMES.map((h) => [h]))('RSA PKCS#1 v1.5 and PSS with %s', async (hash: HashName) => {
    const key = new SoftwareKey('rsa-2048', await pair('rsa-2048'));
    await testSign(entry(), key, { hash, pss: false });
    await testSign(entry(), key, { hash, pss: true });
  });

  it.each([
    ['ecdsa-p256', 'sha2-256'],
    ['ecdsa-p384', 'sha3-384'],
    ['ecdsa-p521', 'sha1'],
    ['ecdsa-p256', 'sha2-224'],
  ] as const)('ECDSA %s with %s (DER signatures)', async (type, hash) => {
    await testSign(entry(), new SoftwareKey(type, await pair(type)), { hash, pss: false });
  });

  it('refuses use_pss for an EC key', async () => {
    expect(await refused(testSign(entry(), new SoftwareKey('ecdsa-p256', await pair('ecdsa-p256')), { hash: 'sha2-256', pss: true }))).toBe('use_pss applies only to RSA keys');
  });

  it('generates a missing key when allow_generate_key says so, once', async () => {
    const key = new SoftwareKey('ecdsa-p256');
    expect(await refused(testSign(entry(), key, { hash: 'sha2-256', pss: false }))).toBe(
      'managed key "soft": no key was found in the pkcs11 backend, and allow_generate_key is false',
    );
    expect(key.generated).toBe(0);
    const generating = entry({ allow_generate_key: 'true' });
    await testSign(generating, key, { hash: 'sha2-256', pss: false });
    await testSign(generating, key, { hash: 'sha2-512', pss: false });
    expect(key.generated).toBe(1);
  });

  it('needs the sign usage', async () => {
    const key = new SoftwareKey('rsa-2048', await pair('rsa-2048'));
    expect(await refused(testSign(entry({ usages: 'encrypt,decrypt' }), key, { hash: 'sha2-256', pss: false }))).toBe(
      'managed key "soft" may not be used to sign: its usages are encrypt, decrypt',
    );
  });

  it('fails when the signature does not verify with the public key, or the backend rejects it', async () => {
    const liar = new SoftwareKey('ecdsa-p256', await pair('ecdsa-p256'), await generateKeyPair('ecdsa-p256'), false);
    // Without the verify usage the backend is not asked; the local check catches it.
    expect(await refused(testSign(entry({ usages: 'sign' }), liar, { hash: 'sha2-256', pss: false }))).toBe(
      'managed key "soft": the signature the backend made does not verify with its public key',
    );
    expect(await refused(testSign(entry(), liar, { hash: 'sha2-256', pss: false }))).toBe('managed key "soft": the backend did not verify its own signature');
  });

  it('refuses a public key crypto cannot use', async () => {
    const key = new SoftwareKey('rsa-2048', await pair('rsa-2048'));
    key.publicKey = async () => ({ pem: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n', keyType: 'rsa', bits: 2048 });
    expect(await refused(testSign(entry(), key, { hash: 'sha2-256', pss: false }))).toMatch(/^the backend's public key cannot be used: /);
  });
});

describe('guards', () => {
  it('ensureKey returns an existing key without generating', async () => {
    const key = new SoftwareKey('ecdsa-p256', await pair('ecdsa-p256'));
    expect((await ensureKey(entry(), key)).keyType).toBe('ec');
    expect(key.generated).toBe(0);
  });

  it('replaceKey needs allow_replace_key over an existing key, allow_generate_key for a missing one', async () => {
    const present = new SoftwareKey('ecdsa-p256', await pair('ecdsa-p256'));
    expect(await refused(replaceKey(entry({ allow_generate_key: true }), present))).toBe(
      'managed key "soft": a key already exists in the backend, and allow_replace_key is false',
    );
    await replaceKey(entry({ allow_replace_key: 'true' }), present);
    expect(present.generated).toBe(1);
    const absent = new SoftwareKey('ecdsa-p256');
    expect(await refused(replaceKey(entry({ allow_replace_key: true }), absent))).toBe('managed key "soft": no key was found in the backend, and allow_generate_key is false');
    await replaceKey(entry({ allow_generate_key: true }), absent);
    expect(absent.generated).toBe(1);
  });

  it('assertMayStore needs allow_store_key, and allow_replace_key over an existing key', async () => {
    const absent = new SoftwareKey('ecdsa-p256');
    expect(await refused(assertMayStore(entry(), absent))).toBe('managed key "soft": storing a key in the backend is not allowed (allow_store_key is false)');
    await assertMayStore(entry({ allow_store_key: true }), absent);
    const present = new SoftwareKey('ecdsa-p256', await pair('ecdsa-p256'));
    expect(await refused(assertMayStore(entry({ allow_store_key: true }), present))).toBe('managed key "soft": a key already exists in the backend, and allow_replace_key is false');
    await assertMayStore(entry({ allow_store_key: true, allow_replace_key: true }), present);
  });

  it('passes other backend errors through (502: unreachable)', async () => {
    const down = new SoftwareKey('ecdsa-p256');
    down.publicKey = async () => {
      throw new ManagedKeyError(502, 'the HSM bridge did not answer');
    };
    await expect(ensureKey(entry({ allow_generate_key: true }), down)).rejects.toMatchObject({ status: 502, errors: ['the HSM bridge did not answer'] });
    expect(down.generated).toBe(0);
  });
});

describe('backend registry', () => {
  let restore: (() => void) | null = null;
  afterEach(() => {
    restore?.();
    restore = null;
  });

  it('uses a registered factory, with the entry and the deps', async () => {
    const soft = new SoftwareKey('ecdsa-p256', await pair('ecdsa-p256'));
    const seen: unknown[] = [];
    const factory: BackendFactory = (e, deps) => {
      seen.push(e.name, typeof deps.fetch);
      return soft;
    };
    const previous = registerBackend('pkcs11', factory);
    restore = () => registerBackend('pkcs11', previous);
    expect(createBackend(entry(), { fetch: globalThis.fetch })).toBe(soft);
    expect(seen).toEqual(['soft', 'function']);
  });
});
