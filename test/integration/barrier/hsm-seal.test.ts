// The pkcs11 seal (src/managed-keys/seal.ts) against a real HSM bridge on SoftHSM2, reached from
// workerd through HSM_BRIDGE (mutual TLS; test/global/hsm-bridge-setup.ts): its configuration
// and the messages of a misconfiguration, key generation (only when allowed, never once the
// cluster is initialised), the envelope (round trip, context binding, another HSM key, tampered
// blobs, no plaintext in the blob), the bridge's refusals and its absence; then the seal state
// machine (src/core/barrier/seal-state.ts) on it: init, restart (auto-unseal), sys/seal then
// unseal with recovery shares, rotate, a bridge that is down at start and comes back, a wrong PIN.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { managedKeyDeps } from '../../../durable-objects/managed-key-deps';
import { MemoryPhysical } from '../../../src/core/barrier/physical';
import { StaticKeySeal } from '../../../src/core/barrier/seal';
import { SealState } from '../../../src/core/barrier/seal-state';
import { fromBase64, fromUtf8, toBase64, toHex, utf8 } from '../../../src/crypto/encoding';
import { randomBytes } from '../../../src/crypto/random';
import { blobJson, contains, flipByteB64, withBlob } from '../../helpers/seal-blob';
import { CofferError } from '../../../src/framework/errors';
import { Pkcs11Seal, Pkcs11SealError, pkcs11SealConfig, pkcs11SealFromEnv, type Pkcs11SealVars } from '../../../src/managed-keys/seal';
import type { BackendDeps } from '../../../src/managed-keys/types';

const LIBRARY = inject('hsmBridgeLibrary');
const TOKEN = inject('hsmBridgeTokenLabel');
const SLOT = inject('hsmBridgeSlot');
const PIN = inject('hsmBridgePin');

/** Labels unique to this run: a re-run against the same token never finds old keys. */
const run = Math.random().toString(36).slice(2, 8);
const label = (name: string) => `seal-${run}-${name}`;

const deps = (): BackendDeps => managedKeyDeps(env);
const vars = (over: Pkcs11SealVars = {}): Pkcs11SealVars => ({
  SEAL_PKCS11_LIBRARY: LIBRARY,
  SEAL_PKCS11_TOKEN_LABEL: TOKEN,
  SEAL_PKCS11_PIN: PIN,
  SEAL_PKCS11_KEY_LABEL: label('main'),
  SEAL_PKCS11_GENERATE_KEY: 'true',
  // SoftHSM2 2.6.1 does RSA-OAEP with SHA-1 only (see 'the OAEP hash' below).
  SEAL_PKCS11_RSA_OAEP_HASH: 'sha1',
  ...over,
});
const sealOf = (over: Pkcs11SealVars = {}, options: { initialized?: () => boolean } = {}, d = deps()) => new Pkcs11Seal(pkcs11SealConfig(vars(over)), d, options);

/** The key the bridge holds under a label, or its refusal. */
async function bridgeKey(keyLabel: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await env.HSM_BRIDGE!.fetch(`${env.HSM_BRIDGE_URL}/v1/key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ library: LIBRARY, token_label: TOKEN, pin: PIN, key_label: keyLabel }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function failure(p: Promise<unknown>): Promise<Pkcs11SealError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!(e instanceof Pkcs11SealError)) throw new Error(`expected a Pkcs11SealError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  return e;
}


describe('configuration', () => {
  it('names every missing variable, and never the PIN', () => {
    let message = '';
    try {
      pkcs11SealConfig({});
    } catch (e) {
      expect(e).toBeInstanceOf(Pkcs11SealError);
      message = (e as Error).message;
    }
    expect(message).toBe(
      'the pkcs11 seal is misconfigured: SEAL_TYPE=pkcs11 needs SEAL_PKCS11_LIBRARY (the name of a kms_library of the HSM bridge), SEAL_PKCS11_SLOT or SEAL_PKCS11_TOKEN_LABEL, SEAL_PKCS11_PIN (a Worker secret), SEAL_PKCS11_KEY_LABEL or SEAL_PKCS11_KEY_ID',
    );
    expect(() => pkcs11SealConfig(vars({ SEAL_PKCS11_PIN: '' }))).toThrow(/needs SEAL_PKCS11_PIN \(a Worker secret\)$/);
    expect(() => pkcs11SealConfig(vars({ SEAL_PKCS11_LIBRARY: ' ' }))).toThrow(/needs SEAL_PKCS11_LIBRARY/);
    expect(() => pkcs11SealConfig(vars({ SEAL_PKCS11_KEY_LABEL: '' }))).toThrow(/needs SEAL_PKCS11_KEY_LABEL or SEAL_PKCS11_KEY_ID$/);
  });

  it('refuses malformed values, one message for all', () => {
    const bad = vars({
      SEAL_PKCS11_SLOT: 'one',
      SEAL_PKCS11_KEY_BITS: '1024',
      SEAL_PKCS11_GENERATE_KEY: 'maybe',
      SEAL_PKCS11_RSA_OAEP_HASH: 'md5',
      SEAL_PKCS11_KEY_ID: 'xyz',
    });
    let message = '';
    try {
      pkcs11SealConfig(bad);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.split('; ')).toEqual([
      'the pkcs11 seal is misconfigured: set SEAL_PKCS11_SLOT or SEAL_PKCS11_TOKEN_LABEL, not both',
      'SEAL_PKCS11_SLOT=one is not a slot number (decimal)',
      'SEAL_PKCS11_KEY_ID=xyz is not a hexadecimal CKA_ID (an even number of hex digits, "0x" optional)',
      'SEAL_PKCS11_KEY_BITS=1024: the RSA key sizes are 2048, 3072, 4096',
      'SEAL_PKCS11_GENERATE_KEY=maybe: give "true" or "false"',
      'SEAL_PKCS11_RSA_OAEP_HASH=md5: the hashes are sha1, sha224, sha256, sha384 and sha512',
    ]);
    expect(message).not.toContain(PIN);
    expect(() => pkcs11SealConfig(vars({ SEAL_PKCS11_KEY_LABEL: '', SEAL_PKCS11_KEY_ID: '0a0b' }))).toThrow(/SEAL_PKCS11_GENERATE_KEY=true needs SEAL_PKCS11_KEY_LABEL/);
  });

  it('has defaults: 2048-bit keys, no generation, OAEP with SHA-256 (Vault\'s rsa_oaep_hash default)', () => {
    expect(
      pkcs11SealConfig({ SEAL_PKCS11_LIBRARY: 'softhsm', SEAL_PKCS11_SLOT: '0', SEAL_PKCS11_PIN: ' 1234 ', SEAL_PKCS11_KEY_ID: '0xA1B2' }),
    ).toEqual({ library: 'softhsm', slot: '0', tokenLabel: '', pin: ' 1234 ', keyLabel: '', keyId: 'a1b2', keyBits: 2048, generateKey: false, oaepHash: 'sha2-256' });
    expect(pkcs11SealConfig(vars({ SEAL_PKCS11_RSA_OAEP_HASH: 'SHA256', SEAL_PKCS11_KEY_BITS: '3072', SEAL_PKCS11_GENERATE_KEY: 'TRUE' }))).toMatchObject({ oaepHash: 'sha2-256', keyBits: 3072, generateKey: true });
  });

  it('without the HSM_BRIDGE binding: a seal of type pkcs11 that fails saying so', async () => {
    for (const d of [{ fetch }, { fetch, hsmBridge: env.HSM_BRIDGE }, { fetch, hsmBridgeUrl: env.HSM_BRIDGE_URL }] as BackendDeps[]) {
      const { seal, error } = pkcs11SealFromEnv(vars(), d);
      expect(seal.type).toBe('pkcs11');
      expect(error).toBe('pkcs11 seal: no HSM bridge is bound to this deployment: bind HSM_BRIDGE (an mTLS certificate binding) and set HSM_BRIDGE_URL');
      expect((await failure(seal.encrypt(utf8('x'), 'root-key'))).message).toBe(error);
      expect((await failure(seal.decrypt(utf8('x'), 'root-key'))).message).toBe(error);
    }
    const { seal, error } = pkcs11SealFromEnv({ SEAL_PKCS11_LIBRARY: LIBRARY }, deps());
    expect(seal.type).toBe('pkcs11');
    expect(error).toMatch(/^the pkcs11 seal is misconfigured: SEAL_TYPE=pkcs11 needs SEAL_PKCS11_SLOT or SEAL_PKCS11_TOKEN_LABEL, SEAL_PKCS11_PIN/);
    expect(pkcs11SealFromEnv(vars(), deps())).toEqual({ seal: expect.any(Pkcs11Seal) });
  });
});

describe('the HSM key', () => {
  it('is not generated unless SEAL_PKCS11_GENERATE_KEY is true', async () => {
    const keyLabel = label('not-generated');
    const e = await failure(sealOf({ SEAL_PKCS11_KEY_LABEL: keyLabel, SEAL_PKCS11_GENERATE_KEY: '' }).encrypt(randomBytes(32), 'root-key'));
    expect(e.status).toBe(400);
    expect(e.message).toBe(
      `pkcs11 seal: the HSM holds no key with label "${keyLabel}" on token "${TOKEN}" of library "${LIBRARY}": create an RSA key pair with that label in the HSM, or set SEAL_PKCS11_GENERATE_KEY=true to have sys/init create it`,
    );
    expect((await bridgeKey(keyLabel)).status).toBe(404);
  });

  it('is not generated once the cluster is initialised, nor to decrypt', async () => {
    const keyLabel = label('initialised');
    const e = await failure(sealOf({ SEAL_PKCS11_KEY_LABEL: keyLabel }, { initialized: () => true }).encrypt(randomBytes(32), 'unseal-progress'));
    expect(e.message).toMatch(/^pkcs11 seal: the HSM holds no key with label ".*": the key this cluster was sealed with is missing, or SEAL_PKCS11_\* name another token or key$/);
    const blob = await sealOf().encrypt(randomBytes(32), 'root-key');
    const d = await failure(sealOf({ SEAL_PKCS11_KEY_LABEL: keyLabel }).decrypt(blob, 'root-key'));
    expect(d.message).toMatch(/the key this cluster was sealed with is missing/);
    expect((await bridgeKey(keyLabel)).status).toBe(404);
  });

  it('is generated at the first encrypt when allowed (RSA, SEAL_PKCS11_KEY_BITS), then found again', async () => {
    const keyLabel = label('generated');
    const blob = await sealOf({ SEAL_PKCS11_KEY_LABEL: keyLabel, SEAL_PKCS11_KEY_BITS: '3072' }, { initialized: () => false }).encrypt(utf8('hello'), 'root-key');
    const key = await bridgeKey(keyLabel);
    expect(key.status).toBe(200);
    expect(key.body).toMatchObject({ key_type: 'rsa', key_bits: 3072, key_label: keyLabel });
    // A new instance (a restart) without generation finds it and opens the blob.
    expect(fromUtf8(await sealOf({ SEAL_PKCS11_KEY_LABEL: keyLabel, SEAL_PKCS11_GENERATE_KEY: 'false' }).decrypt(blob, 'root-key'))).toBe('hello');
  });

  it('is found by CKA_ID alone, and by slot instead of token label', async () => {
    const blob = await sealOf().encrypt(utf8('by id'), 'root-key');
    const id = String((await bridgeKey(label('main'))).body.key_id);
    expect(id).toMatch(/^0x[0-9a-f]+$/);
    const byId = sealOf({ SEAL_PKCS11_KEY_LABEL: '', SEAL_PKCS11_KEY_ID: id, SEAL_PKCS11_GENERATE_KEY: '', SEAL_PKCS11_TOKEN_LABEL: '', SEAL_PKCS11_SLOT: SLOT });
    expect(fromUtf8(await byId.decrypt(blob, 'root-key'))).toBe('by id');
  });

  it('is never generated over another key with the same id (nothing on the token is replaced)', async () => {
    const blob = await sealOf().encrypt(utf8('kept'), 'root-key');
    const mainId = String((await bridgeKey(label('main'))).body.key_id);
    // Label and id together name no key (the id is the main key's): generating would clash.
    const e = await failure(sealOf({ SEAL_PKCS11_KEY_LABEL: label('clash'), SEAL_PKCS11_KEY_ID: mainId }).encrypt(randomBytes(32), 'root-key'));
    expect(e.status).toBe(400);
    expect(e.message).toBe(
      `pkcs11 seal: cannot generate the key (the key with label "${label('clash')}", id ${mainId} on token "${TOKEN}" of library "${LIBRARY}"): another key on the token already has that label or id, and a seal key is never generated over an existing one: name that key exactly with SEAL_PKCS11_KEY_LABEL and SEAL_PKCS11_KEY_ID, or choose another label (key_exists)`,
    );
    expect((await bridgeKey(label('clash'))).status).toBe(404);
    expect(fromUtf8(await sealOf({ SEAL_PKCS11_GENERATE_KEY: '' }).decrypt(blob, 'root-key'))).toBe('kept');
  });

  it('must be an RSA key', async () => {
    const keyLabel = label('ec');
    const res = await env.HSM_BRIDGE!.fetch(`${env.HSM_BRIDGE_URL}/v1/key/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ library: LIBRARY, token_label: TOKEN, pin: PIN, key_label: keyLabel, key_type: 'ec', curve: 'P-256' }),
    });
    expect(res.status).toBe(200);
    const e = await failure(sealOf({ SEAL_PKCS11_KEY_LABEL: keyLabel }).encrypt(randomBytes(32), 'root-key'));
    expect(e.message).toMatch(/is an EC key: the seal wraps with RSA-OAEP and needs an RSA key$/);
  });
});

describe('the envelope', () => {
  let seal: Pkcs11Seal;
  const secret = randomBytes(32);
  let blob: Uint8Array;
  beforeAll(async () => {
    seal = sealOf();
    blob = await seal.encrypt(secret, 'root-key');
  });

  it('round-trips, also through another instance (a restart)', async () => {
    expect(toHex(await seal.decrypt(blob, 'root-key'))).toBe(toHex(secret));
    expect(toHex(await sealOf({ SEAL_PKCS11_GENERATE_KEY: 'false' }).decrypt(blob, 'root-key'))).toBe(toHex(secret));
    const big = randomBytes(5000);
    expect(toHex(await seal.decrypt(await seal.encrypt(big, 'recovery'), 'recovery'))).toBe(toHex(big));
    expect((await seal.decrypt(await seal.encrypt(new Uint8Array(0), 'empty'), 'empty')).length).toBe(0);
  });

  it('stores a versioned JSON blob naming the HSM key, without the plaintext', async () => {
    const b = blobJson(blob);
    const key = await bridgeKey(label('main'));
    const spki = fromBase64(String(key.body.public_key).replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''))!;
    const fingerprint = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', spki)));
    expect(Object.keys(b)).toEqual(['seal', 'v', 'key_label', 'key_id', 'key_sha256', 'oaep_hash', 'wrapped_key', 'ciphertext']);
    expect(b).toMatchObject({ seal: 'pkcs11', v: 1, key_label: label('main'), key_id: '', key_sha256: fingerprint, oaep_hash: 'sha1' });
    expect(fromBase64(b.wrapped_key as string)!.length).toBe(256);
    // nonce (12) || AES-GCM ciphertext (32) || tag (16)
    expect(fromBase64(b.ciphertext as string)!.length).toBe(12 + 32 + 16);
    for (const form of [secret, utf8(toHex(secret)), utf8(toBase64(secret)), secret.subarray(0, 8)]) expect(contains(blob, form)).toBe(false);
    // Every encryption has its own data key and nonce.
    const again = blobJson(await seal.encrypt(secret, 'root-key'));
    expect(again.wrapped_key).not.toBe(b.wrapped_key);
    expect(again.ciphertext).not.toBe(b.ciphertext);
  });

  it('refuses another context', async () => {
    const e = await failure(seal.decrypt(blob, 'recovery'));
    expect(e.status).toBe(400);
    expect(e.message).toBe('pkcs11 seal: the stored recovery fails authentication: it was damaged or tampered with, or sealed for another purpose');
  });

  it('refuses a blob of another HSM key, naming both keys', async () => {
    const other = sealOf({ SEAL_PKCS11_KEY_LABEL: label('other') });
    const otherBlob = await other.encrypt(secret, 'root-key');
    const e = await failure(seal.decrypt(otherBlob, 'root-key'));
    expect(e.message).toMatch(
      new RegExp(
        `^pkcs11 seal: the stored root-key was sealed by another HSM key \\(label "${label('other')}", public key SHA-256 [0-9a-f]{16}…\\), but the key with label "${label('main')}" on token "${TOKEN}" of library "${LIBRARY}" has public key SHA-256 [0-9a-f]{16}…: set SEAL_PKCS11_\\* to the key this cluster was initialised with$`,
      ),
    );
    expect((await failure(other.decrypt(blob, 'root-key'))).message).toMatch(/sealed by another HSM key/);
    // Relabelled to claim this key: the HSM cannot unwrap another key's data key.
    const forged = withBlob(otherBlob, (b) => {
      b.key_sha256 = blobJson(blob).key_sha256;
      b.key_label = label('main');
    });
    expect((await failure(seal.decrypt(forged, 'root-key'))).message).toBe(
      `pkcs11 seal: the key with label "${label('main')}" on token "${TOKEN}" of library "${LIBRARY}" cannot unwrap the data key of the stored root-key: the value was damaged or tampered with`,
    );
  });

  it('refuses tampered blobs', async () => {
    const wrappedFlip = withBlob(blob, (b) => (b.wrapped_key = flipByteB64(b.wrapped_key as string, 100)));
    expect((await failure(seal.decrypt(wrappedFlip, 'root-key'))).message).toMatch(/cannot unwrap the data key of the stored root-key: the value was damaged or tampered with$/);
    for (const at of [0, 20, 59]) {
      const ctFlip = withBlob(blob, (b) => (b.ciphertext = flipByteB64(b.ciphertext as string, at)));
      expect((await failure(seal.decrypt(ctFlip, 'root-key'))).message).toMatch(/fails authentication/);
    }
    const truncated = withBlob(blob, (b) => (b.ciphertext = toBase64(fromBase64(b.ciphertext as string)!.subarray(0, 20))));
    expect((await failure(seal.decrypt(truncated, 'root-key'))).message).toMatch(/fails authentication/);
    expect((await failure(seal.decrypt(withBlob(blob, (b) => (b.ciphertext = '!!')), 'root-key'))).message).toMatch(/is damaged \(its wrapped key or ciphertext is not base64\)/);
    expect((await failure(seal.decrypt(withBlob(blob, (b) => delete b.wrapped_key), 'root-key'))).message).toMatch(/a member of its pkcs11 seal blob is missing or malformed/);
    expect((await failure(seal.decrypt(withBlob(blob, (b) => (b.oaep_hash = 'md5')), 'root-key'))).message).toMatch(/missing or malformed/);
    expect((await failure(seal.decrypt(withBlob(blob, (b) => (b.v = 2)), 'root-key'))).message).toBe('pkcs11 seal: the stored value is in pkcs11 seal format version 2; this version reads 1');
    expect((await failure(seal.decrypt(blob.subarray(0, blob.length - 3), 'root-key'))).message).toMatch(/was not sealed by the pkcs11 seal/);
  });

  it("refuses the static seal's blobs, and the static seal names the pkcs11 seal's", async () => {
    const staticSeal = new StaticKeySeal(randomBytes(32));
    const e = await failure(seal.decrypt(await staticSeal.encrypt(secret, 'root-key'), 'root-key'));
    expect(e.message).toBe(
      'pkcs11 seal: the stored value was not sealed by the pkcs11 seal: this cluster was initialised with another seal type (static, SEAL_KEY?); migrating between seal types is not supported',
    );
    await expect(staticSeal.decrypt(blob, 'root-key')).rejects.toThrow(
      'the stored root key was sealed by the pkcs11 seal, not the static one: set SEAL_TYPE=pkcs11 (migrating between seal types is not supported)',
    );
  });
});

describe("the bridge's refusals and absence", () => {
  let blob: Uint8Array;
  beforeAll(async () => {
    blob = await sealOf().encrypt(utf8('x'), 'root-key');
  });

  it('a wrong PIN: 400 naming CKR_PIN_INCORRECT, without the PIN', async () => {
    const e = await failure(sealOf({ SEAL_PKCS11_PIN: 'wrong-pin-5e2a' }).decrypt(blob, 'root-key'));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^pkcs11 seal: cannot read the key \(the key with label ".*" on token ".*" of library ".*"\): HSM bridge: .*CKR_PIN_INCORRECT/);
    expect(e.message).not.toContain('wrong-pin-5e2a');
    expect(e.message).not.toContain(PIN);
  });

  it('an unknown token or library: 400', async () => {
    expect((await failure(sealOf({ SEAL_PKCS11_TOKEN_LABEL: 'no-such-token' }).decrypt(blob, 'root-key'))).message).toMatch(/token_not_found/);
    expect((await failure(sealOf({ SEAL_PKCS11_LIBRARY: 'no-such-library' }).decrypt(blob, 'root-key'))).message).toMatch(/unknown_library/);
  });

  it('an unreachable bridge: 502 saying so', async () => {
    const closed: BackendDeps = { ...deps(), hsmBridgeUrl: 'https://127.0.0.1:1' };
    const e = await failure(sealOf({}, {}, closed).decrypt(blob, 'root-key'));
    expect(e.status).toBe(502);
    expect(e.message).toMatch(/^pkcs11 seal: cannot read the key \(.*\): the HSM bridge cannot be reached: /);
  });

  it("the OAEP hash: SoftHSM2 2.6.1 refuses anything but SHA-1, and the message says what to set", async () => {
    const e = await failure(sealOf({ SEAL_PKCS11_RSA_OAEP_HASH: 'sha256' }).encrypt(utf8('x'), 'root-key'));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/C_EncryptInit.*; the HSM may not support RSA-OAEP with sha2-256 \(SoftHSM2 supports only sha1\): set SEAL_PKCS11_RSA_OAEP_HASH=sha1$/);
  });
});

describe('the seal state machine on the pkcs11 seal', () => {
  /** A SealState on `physical` with a seal reaching the bridge through `d` (a restart, each call). */
  function node(physical: MemoryPhysical, d: BackendDeps = deps(), over: Pkcs11SealVars = {}) {
    let core: SealState | null = null;
    const roots: string[] = [];
    const seal = sealOf({ SEAL_PKCS11_KEY_LABEL: label('cluster'), ...over }, { initialized: () => core!.isInitialized() }, d);
    core = new SealState(physical, seal, { createRootToken: async (t) => void roots.push(t), keyringRotated: async () => undefined });
    return { core, roots };
  }
  const physical = new MemoryPhysical();
  let recovery: string[] = [];

  it('initialises (generating the key), reports type pkcs11 and the recovery seal, and stores only pkcs11 blobs', async () => {
    expect((await bridgeKey(label('cluster'))).status).toBe(404);
    const { core } = node(physical);
    expect(await core.sealStatus()).toMatchObject({ type: 'pkcs11', initialized: false, sealed: true, recovery_seal: true, recovery_seal_type: 'shamir' });
    const out = await core.init({ recovery_shares: 3, recovery_threshold: 2 });
    recovery = out.recovery_keys as string[];
    expect(recovery).toHaveLength(3);
    expect((await bridgeKey(label('cluster'))).body).toMatchObject({ key_type: 'rsa', key_bits: 2048 });
    expect(await core.isSealed()).toBe(false);
    expect(await core.sealStatus()).toMatchObject({ type: 'pkcs11', initialized: true, sealed: false, t: 2, n: 3, recovery_seal: true, recovery_seal_type: 'shamir' });
    for (const k of ['core/root-key', 'core/recovery']) expect(blobJson(physical.get(k)!)).toMatchObject({ seal: 'pkcs11', v: 1, key_label: label('cluster') });
    expect(JSON.parse(fromUtf8(physical.get('core/seal-config')!))).toEqual({ type: 'pkcs11', recovery_shares: 3, recovery_threshold: 2 });
  });

  it('unseals by itself after a restart, and rotates', async () => {
    const { core } = node(physical, deps(), { SEAL_PKCS11_GENERATE_KEY: 'false' });
    expect(await core.isSealed()).toBe(false);
    expect((await core.keyStatus()).term).toBe(1);
    await core.rotate();
    expect((await core.keyStatus()).term).toBe(2);
    expect((await node(physical).core.keyStatus()).term).toBe(2);
  });

  it('after sys/seal: stays sealed across a restart, unseals with recovery shares through the HSM', async () => {
    await node(physical).core.sealNow();
    const { core } = node(physical);
    expect(await core.isSealed()).toBe(true);
    expect((await core.sealStatus()).warnings).toBeUndefined();
    expect(await core.unseal({ key: recovery[0] })).toMatchObject({ type: 'pkcs11', sealed: true, progress: 1 });
    // The progress is sealed by the HSM too, and survives a restart.
    expect(blobJson(physical.get('core/unseal-progress')!).seal).toBe('pkcs11');
    const again = node(physical).core;
    expect(await again.unseal({ key: recovery[2] })).toMatchObject({ type: 'pkcs11', sealed: false });
    expect((await again.keyStatus()).term).toBe(2);
  });

  it('a bridge down at start: sealed with the reason, then unsealed on a later request once it is back', async () => {
    let down = true;
    const bridge = env.HSM_BRIDGE!;
    const flaky: BackendDeps = {
      ...deps(),
      hsmBridge: { fetch: (input, init) => (down ? Promise.reject(new Error('connect ECONNREFUSED')) : bridge.fetch(input, init)) },
    };
    const { core } = node(physical, flaky);
    expect(await core.isSealed()).toBe(true);
    const status = await core.sealStatus();
    expect(status).toMatchObject({ type: 'pkcs11', initialized: true, sealed: true });
    expect(status.warnings).toEqual([expect.stringMatching(/^pkcs11 seal: cannot read the key \(.*\): the HSM bridge cannot be reached: connect ECONNREFUSED$/)]);
    const unseal = (await core.unseal({ key: recovery[0] }).catch((e) => e)) as CofferError;
    expect(unseal.status).toBe(502);
    expect(unseal.errors[0]).toMatch(/the HSM bridge cannot be reached/);
    expect(await core.isSealed()).toBe(true);
    down = false;
    expect(await core.isSealed()).toBe(false);
    expect((await core.sealStatus()).warnings).toBeUndefined();
    expect((await core.keyStatus()).term).toBe(2);
  });

  it('a wrong PIN: sealed, seal-status and sys/unseal say why', async () => {
    const { core } = node(physical, deps(), { SEAL_PKCS11_PIN: 'not-the-pin-77' });
    expect(await core.isSealed()).toBe(true);
    expect((await core.sealStatus()).warnings).toEqual([expect.stringMatching(/CKR_PIN_INCORRECT/)]);
    const e = (await core.unseal({ key: recovery[0] }).catch((err) => err)) as CofferError;
    expect(e.status).toBe(400);
    expect(e.errors[0]).toMatch(/^pkcs11 seal: .*CKR_PIN_INCORRECT/);
    expect(JSON.stringify(await core.sealStatus())).not.toContain('not-the-pin-77');
  });

  it('another HSM key: sealed, naming the key the root key was sealed with', async () => {
    const { core } = node(physical, deps(), { SEAL_PKCS11_KEY_LABEL: label('main') });
    expect(await core.isSealed()).toBe(true);
    expect((await core.sealStatus()).warnings).toEqual([expect.stringContaining(`sealed by another HSM key (label "${label('cluster')}"`)]);
  });

  it('a misconfiguration: type pkcs11, sealed, the missing variable in seal-status and in the refusal of init', async () => {
    const { seal, error } = pkcs11SealFromEnv({ ...vars(), SEAL_PKCS11_PIN: undefined }, deps());
    const core = new SealState(new MemoryPhysical(), seal, { createRootToken: async () => undefined, keyringRotated: async () => undefined }, { sealConfigError: error });
    const status = await core.sealStatus();
    expect(status).toMatchObject({ type: 'pkcs11', initialized: false, sealed: true, recovery_seal: true });
    expect(status.warnings).toEqual(['the pkcs11 seal is misconfigured: SEAL_TYPE=pkcs11 needs SEAL_PKCS11_PIN (a Worker secret)']);
    const e = (await core.init({ recovery_shares: 1, recovery_threshold: 1 }).catch((err) => err)) as CofferError;
    expect(e.status).toBe(400);
    expect(e.errors).toEqual(['the pkcs11 seal is misconfigured: SEAL_TYPE=pkcs11 needs SEAL_PKCS11_PIN (a Worker secret)']);
    // On an initialised cluster: sealed with the same reason.
    const onData = new SealState(physical, seal, { createRootToken: async () => undefined, keyringRotated: async () => undefined }, { sealConfigError: error });
    expect(await onData.isSealed()).toBe(true);
    expect((await onData.sealStatus()).warnings).toEqual([error]);
  });
});
