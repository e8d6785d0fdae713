// Transit signatures and HMACs through the Worker, checked against an independent implementation
// of Vault's formats (test/global/transit-oracle-ops.ts) both ways: every signing key type, hash,
// RSA scheme and salt choice, asn1/jws marshaling, prehashed input, derived ed25519; HMACs for
// every algorithm; batches with references; and every refused input.
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { oracle } from '../../helpers/transit-oracle';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const b64 = (s: string) => btoa(s);
const input = b64('message to sign');

interface KeyInfo {
  public_pem?: string;
  ed25519_public?: string;
  private_pem?: string;
  ed25519_private64?: string;
}

/** The key's public form from its read, and its private form from export (keys are exportable here). */
async function keyInfo(name: string, type: string): Promise<KeyInfo> {
  const pub = (await ok('GET', `transit/keys/${name}`)).body.data.keys['1'].public_key as string;
  const priv = (await ok('GET', `transit/export/signing-key/${name}/1`)).body.data.keys['1'] as string;
  return type === 'ed25519' ? { ed25519_public: pub, ed25519_private64: priv } : { public_pem: pub, private_pem: priv };
}

async function sha(alg: string, data: string): Promise<string> {
  const sum = (await ok('POST', `transit/hash/${alg}`, { input: data, format: 'base64' })).body.data.sum as string;
  return sum;
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
});

const SIGNERS = ['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'rsa-2048'] as const;

describe.each(SIGNERS)('%s signatures', (type) => {
  let info: KeyInfo;
  beforeAll(async () => {
    await ok('POST', `transit/keys/s-${type}`, { type, exportable: true });
    info = await keyInfo(`s-${type}`, type);
  });

  it('signs what the independent side verifies, and verifies what it signs', async () => {
    const mine = await ok('POST', `transit/sign/s-${type}`, { input });
    expect(mine.body.data).toEqual({ signature: expect.stringMatching(/^vault:v1:[A-Za-z0-9+/]+=*$/), key_version: 1 });
    expect((await oracle('verify', { type, ...info, input, signature: mine.body.data.signature })).valid).toBe(true);
    expect((await ok('POST', `transit/verify/s-${type}`, { input, signature: mine.body.data.signature })).body.data).toEqual({ valid: true });
    const theirs = await oracle<{ signature: string }>('sign', { type, ...info, input });
    expect((await ok('POST', `transit/verify/s-${type}`, { input, signature: theirs.signature })).body.data.valid).toBe(true);
    expect((await ok('POST', `transit/verify/s-${type}`, { input: b64('other'), signature: theirs.signature })).body.data.valid).toBe(false);
  });

  if (type !== 'ed25519') {
    it.each(['sha2-224', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-256', 'sha3-512', 'sha1'])('hash %s, in the body and in the path', async (hash) => {
      const viaBody = (await ok('POST', `transit/sign/s-${type}`, { input, hash_algorithm: hash })).body.data.signature;
      expect((await oracle('verify', { type, ...info, input, signature: viaBody, hash_algorithm: hash })).valid).toBe(true);
      const viaPath = (await ok('POST', `transit/sign/s-${type}/${hash}`, { input, hash_algorithm: 'sha2-256' })).body.data.signature;
      expect((await oracle('verify', { type, ...info, input, signature: viaPath, hash_algorithm: hash })).valid).toBe(true);
      const theirs = await oracle<{ signature: string }>('sign', { type, ...info, input, hash_algorithm: hash });
      expect((await ok('POST', `transit/verify/s-${type}/${hash}`, { input, signature: theirs.signature })).body.data.valid).toBe(true);
    });
  }

  if (type.startsWith('ecdsa')) {
    it('jws marshaling: r‖s in unpadded base64url', async () => {
      const sig = (await ok('POST', `transit/sign/s-${type}`, { input, marshaling_algorithm: 'jws' })).body.data.signature as string;
      const payload = sig.slice('vault:v1:'.length);
      expect(payload).toMatch(/^[A-Za-z0-9_-]+$/);
      const size = ({ 'ecdsa-p256': 64, 'ecdsa-p384': 96, 'ecdsa-p521': 132 } as Record<string, number>)[type];
      expect(Math.floor((payload.length * 3) / 4)).toBe(size);
      expect((await oracle('verify', { type, ...info, input, signature: sig, marshaling_algorithm: 'jws' })).valid).toBe(true);
      const theirs = await oracle<{ signature: string }>('sign', { type, ...info, input, marshaling_algorithm: 'jws' });
      expect((await ok('POST', `transit/verify/s-${type}`, { input, signature: theirs.signature, marshaling_algorithm: 'jws' })).body.data.valid).toBe(true);
    });

    it('signs a digest given as prehashed input', async () => {
      const digest = await sha('sha2-256', input);
      const sig = (await ok('POST', `transit/sign/s-${type}`, { input: digest, prehashed: true })).body.data.signature;
      // The signature over the digest verifies as a signature over the message.
      expect((await oracle('verify', { type, ...info, input, signature: sig })).valid).toBe(true);
      expect((await ok('POST', `transit/verify/s-${type}`, { input, signature: sig })).body.data.valid).toBe(true);
    });
  }

  if (type === 'rsa-2048') {
    it.each([
      ['pss', 'auto'],
      ['pss', 'hash'],
      ['pss', '20'],
      ['pkcs1v15', 'auto'],
    ])('%s with salt %s', async (signature_algorithm, salt_length) => {
      const opts = { signature_algorithm, salt_length };
      const sig = (await ok('POST', 'transit/sign/s-rsa-2048', { input, ...opts })).body.data.signature;
      expect((await oracle('verify', { type, ...info, input, signature: sig, ...opts })).valid).toBe(true);
      const theirs = await oracle<{ signature: string }>('sign', { type, ...info, input, ...opts });
      expect((await ok('POST', 'transit/verify/s-rsa-2048', { input, signature: theirs.signature, ...opts })).body.data.valid).toBe(true);
    });

    it('verifies PSS with any salt when the salt length is auto', async () => {
      const theirs = await oracle<{ signature: string }>('sign', { type, ...info, input, salt_length: 32 });
      expect((await ok('POST', 'transit/verify/s-rsa-2048', { input, signature: theirs.signature })).body.data.valid).toBe(true);
      expect((await ok('POST', 'transit/verify/s-rsa-2048', { input, signature: theirs.signature, salt_length: '20' })).body.data.valid).toBe(false);
    });

    it('prehashed input with PSS, PKCS#1 v1.5, and hash none', async () => {
      const digest = await sha('sha2-384', input);
      for (const signature_algorithm of ['pss', 'pkcs1v15']) {
        const opts = { signature_algorithm, hash_algorithm: 'sha2-384' };
        const sig = (await ok('POST', 'transit/sign/s-rsa-2048', { input: digest, prehashed: true, ...opts })).body.data.signature;
        expect((await oracle('verify', { type, ...info, input, signature: sig, ...opts })).valid).toBe(true);
      }
      const none = { hash_algorithm: 'none', prehashed: true, signature_algorithm: 'pkcs1v15' };
      const raw = b64('raw bytes, no DigestInfo');
      const sig = (await ok('POST', 'transit/sign/s-rsa-2048', { input: raw, ...none })).body.data.signature;
      expect((await oracle('verify', { type, ...info, input: raw, signature: sig, ...none })).valid).toBe(true);
      expect((await ok('POST', 'transit/verify/s-rsa-2048', { input: raw, signature: sig, ...none })).body.data.valid).toBe(true);
    });
  }
});

describe('derived ed25519', () => {
  it('derives one key per context and returns its public key', async () => {
    await ok('POST', 'transit/keys/ed-d', { type: 'ed25519', derived: true, exportable: true });
    const priv = (await ok('GET', 'transit/export/signing-key/ed-d/1')).body.data.keys['1'];
    const context = b64('tenant-9');
    const mine = (await ok('POST', 'transit/sign/ed-d', { input, context })).body.data;
    const theirs = await oracle<{ signature: string; public_key: string }>('sign', { type: 'ed25519', ed25519_private64: priv, derived: true, context, input });
    // Ed25519 is deterministic: the same derived key gives the same signature.
    expect(mine).toEqual({ signature: theirs.signature, key_version: 1, public_key: theirs.public_key });
    const shown = (await ok('GET', `transit/keys/ed-d?context=${encodeURIComponent(context)}`)).body.data.keys['1'].public_key;
    expect(shown).toBe(theirs.public_key);
    expect((await ok('POST', 'transit/verify/ed-d', { input, context, signature: mine.signature })).body.data.valid).toBe(true);
    expect((await ok('POST', 'transit/verify/ed-d', { input, context: b64('other'), signature: mine.signature })).body.data.valid).toBe(false);
    const batch = await ok('POST', 'transit/sign/ed-d', { batch_input: [{ input, context, reference: 'a' }, { input }] });
    expect(batch.body.data.batch_results[0]).toEqual({ signature: theirs.signature, key_version: 1, publickey: theirs.public_key, reference: 'a' });
    expect(batch.body.data.batch_results[1]).toEqual({ error: expect.stringMatching(/^missing 'context'/), reference: '' });
  });
});

describe('HMAC', () => {
  beforeAll(async () => {
    await ok('POST', 'transit/keys/mac', { exportable: true });
    await ok('POST', 'transit/keys/mac-only', { type: 'hmac', key_size: 48, exportable: true });
  });

  it.each(['sha2-224', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'])('%s matches the independent side', async (algorithm) => {
    for (const name of ['mac', 'mac-only']) {
      const key = (await ok('GET', `transit/export/hmac-key/${name}/1`)).body.data.keys['1'];
      const mine = (await ok('POST', `transit/hmac/${name}/${algorithm}`, { input })).body.data.hmac;
      expect(mine).toBe((await oracle<{ hmac: string }>('hmac', { key, input, algorithm, version: 1 })).hmac);
      expect((await ok('POST', `transit/verify/${name}/${algorithm}`, { input, hmac: mine })).body.data.valid).toBe(true);
      expect((await ok('POST', `transit/verify/${name}`, { input, hmac: mine, algorithm })).body.data.valid).toBe(true);
      expect((await ok('POST', `transit/verify/${name}/${algorithm}`, { input: b64('x'), hmac: mine })).body.data.valid).toBe(false);
    }
  });

  it('uses each version\'s own key, honours min versions, and batches', async () => {
    const v1 = (await ok('POST', 'transit/hmac/mac', { input })).body.data.hmac as string;
    await ok('POST', 'transit/keys/mac/rotate');
    const v2 = (await ok('POST', 'transit/hmac/mac', { input })).body.data.hmac as string;
    expect(v2.startsWith('vault:v2:')).toBe(true);
    expect(v2.slice(9)).not.toBe(v1.slice(9));
    expect((await ok('POST', 'transit/hmac/mac', { input, key_version: 1 })).body.data.hmac).toBe(v1);
    const batch = await ok('POST', 'transit/hmac/mac', { batch_input: [{ input, reference: 'x' }, { input: '%%' }] });
    expect(batch.body.data.batch_results).toEqual([{ hmac: v2, reference: 'x' }, { error: 'failed to base64-decode input', reference: '' }]);
    const vbatch = await ok('POST', 'transit/verify/mac', { batch_input: [{ input, hmac: v1 }, { input: b64('no'), hmac: v2, reference: 'n' }] });
    expect(vbatch.body.data.batch_results).toEqual([{ valid: true, reference: '' }, { valid: false, reference: 'n' }]);
    await ok('POST', 'transit/keys/mac/config', { min_decryption_version: 2 });
    const old = await call('POST', 'transit/verify/mac', { input, hmac: v1 });
    expect(old.status).toBe(400);
    expect(old.body.errors).toEqual(['cannot verify HMAC: version is too old (disallowed by policy)']);
  });
});

describe('refused inputs', () => {
  beforeAll(async () => {
    await ok('POST', 'transit/keys/aes');
    await ok('POST', 'transit/keys/ec', { type: 'ecdsa-p256' });
    await ok('POST', 'transit/keys/rsa-r', { type: 'rsa-2048' });
  });

  it.each([
    ['sign/aes', { input }, 'key type aes256-gcm96 does not support signing'],
    ['sign/ec', { input, hash_algorithm: 'md5' }, 'invalid hash algorithm "md5"'],
    ['sign/ec/sha2-999', { input }, 'invalid hash algorithm "sha2-999"'],
    ['sign/ec', { input, marshaling_algorithm: 'pem' }, 'invalid marshaling type "pem"'],
    ['sign/ec', { input: '*' }, 'failed to base64-decode input'],
    ['sign/ec', { input, hash_algorithm: 'none' }, 'hash_algorithm=none is only supported for RSA keys'],
    ['sign/rsa-r', { input, hash_algorithm: 'none', prehashed: true }, 'hash_algorithm=none requires both prehashed=true and signature_algorithm=pkcs1v15'],
    ['sign/rsa-r', { input, salt_length: 'lots' }, "salt length neither 'auto', 'hash', nor an int: lots"],
    ['sign/rsa-r', { input, salt_length: '-5' }, 'salt length is invalid: -5'],
    ['sign/rsa-r', { input, salt_length: '300' }, 'requested salt length 300 is invalid'],
    ['sign/ec', { input, key_version: 2 }, 'requested version for encryption is higher than the latest key version'],
    ['sign/missing', { input }, 'signing key not found'],
    ['verify/ec', { input }, "neither a 'signature' nor an 'hmac' were given to verify"],
    ['verify/ec', { input, signature: 'vault:v1:AA', hmac: 'vault:v1:AA' }, "provide one of 'signature' or 'hmac'"],
    ['verify/ec', { input, signature: 'v1:AA' }, 'invalid signature: no prefix'],
    ['verify/ec', { input, signature: 'vault:v7:AA' }, 'invalid signature: version is too new'],
    ['verify/ec', { input, signature: 'vault:v1:***' }, 'invalid base64 signature value'],
    ['verify/aes', { input, hmac: 'nope' }, 'invalid HMAC to verify: no prefix'],
    ['hmac/aes', {}, 'missing input for HMAC'],
    ['hmac/aes/sha1', { input }, 'unsupported algorithm sha1'],
    ['hmac/nothing', { input }, 'encryption key not found'],
  ])('%s %j', async (path, body, message) => {
    const r = await call('POST', `transit/${path}`, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });

  it('refuses mixed signature and hmac batch items', async () => {
    const r = await call('POST', 'transit/verify/ec', { batch_input: [{ input, signature: 'vault:v1:AA' }, { input, hmac: 'vault:v1:AA' }] });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(["batch items must all use 'signature' or all use 'hmac', not both"]);
  });

  it('a malformed signature is simply not valid', async () => {
    const r = await ok('POST', 'transit/verify/ec', { input, signature: 'vault:v1:AAAA' });
    expect(r.body.data.valid).toBe(false);
  });
});

describe('hash and random', () => {
  it('hashes like the reference digests', async () => {
    const abc = b64('abc');
    expect((await ok('POST', 'transit/hash', { input: abc })).body.data.sum).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect((await ok('POST', 'transit/hash/sha3-256', { input: abc })).body.data.sum).toBe('3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532');
    expect((await ok('POST', 'transit/hash/sha1', { input: abc })).body.data.sum).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect((await ok('POST', 'transit/hash', { input: abc, algorithm: 'sha2-224', format: 'base64' })).body.data.sum).toBe('Iwl9IjQF2CKGQqR3vaJVsyqtvOS9oLP342ydpw==');
    for (const [body, message] of [
      [{ input: abc, algorithm: 'md5' }, 'unsupported algorithm md5'],
      [{ input: abc, format: 'binary' }, 'unsupported encoding format binary; must be "hex" or "base64"'],
      [{ input: '%' }, 'unable to decode input as base64'],
    ] as const) {
      const r = await call('POST', 'transit/hash', body);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
  });

  it('returns the requested number of random bytes', async () => {
    expect(atob((await ok('POST', 'transit/random')).body.data.random_bytes).length).toBe(32);
    expect(atob((await ok('POST', 'transit/random/64')).body.data.random_bytes).length).toBe(64);
    expect((await ok('POST', 'transit/random/all/16', { format: 'hex' })).body.data.random_bytes).toMatch(/^[0-9a-f]{32}$/);
    expect(atob((await ok('POST', 'transit/random', { bytes: 8 })).body.data.random_bytes).length).toBe(8);
    const a = (await ok('POST', 'transit/random')).body.data.random_bytes;
    expect((await ok('POST', 'transit/random')).body.data.random_bytes).not.toBe(a);
    for (const [path, body] of [
      ['random/0', {}],
      ['random', { bytes: 200_000 }],
      ['random/entropy-pool', {}],
      ['random', { format: 'bin' }],
    ] as const) {
      expect((await call('POST', `transit/${path}`, body)).status).toBe(400);
    }
  });
});
