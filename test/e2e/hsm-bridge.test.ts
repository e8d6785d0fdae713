// The HSM bridge (hsm-bridge/) run as a real process against SoftHSM2: a token initialised for
// this run, a private CA with server and client certificates made by openssl, and the whole JSON
// API over mutual TLS. Signatures are checked by `openssl dgst -verify` and by WebCrypto,
// OAEP against openssl's and Node's encryption; the TLS layer must refuse foreign and missing
// client certificates; the PIN must never reach the bridge's output.
import { spawnSync } from 'node:child_process';
import { createHash, createPublicKey, publicEncrypt, constants as cryptoConstants, webcrypto } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { AsnConvert } from '@peculiar/asn1-schema';
import { ECDSASigValue } from '@peculiar/asn1-ecc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHsmBridge, type HsmBridge } from '../global/hsm-bridge';

// Distinctive values, so that looking for them in the bridge's output means something.
const PIN = 'pin-7f3a91c4e2';
const WRONG_PIN = 'pin-wrong-58d0b6';
const SO_PIN = 'so-pin-2c7e19aa';
const TOKEN = 'coffer-e2e-token';

type Json = Record<string, any>;
interface Reply {
  status: number;
  json: Json;
}
interface Tls {
  cert?: string;
  key?: string;
}

const subtle = webcrypto.subtle;
const opensslHash: Record<string, string> = { 'sha2-256': 'sha256', 'sha2-384': 'sha384', 'sha2-512': 'sha512', sha1: 'sha1', 'sha3-256': 'sha3-256' };
const webHash: Record<string, string> = { 'sha2-256': 'SHA-256', 'sha2-384': 'SHA-384', 'sha2-512': 'SHA-512' };
const digestOf = (hash: string, data: Buffer) => createHash(opensslHash[hash]).update(data).digest();
const u8 = (b: Buffer) => new Uint8Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);

describe('hsm-bridge against SoftHSM2', () => {
  let hsm: HsmBridge;
  let dir = '';
  let env: NodeJS.ProcessEnv = {};
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => hsm.openssl(...args);
  let fileNo = 0;
  const file = (content: string | Buffer) => {
    const name = at(`f${++fileNo}`);
    writeFileSync(name, content);
    return name;
  };

  const output = () => hsm.output();
  let url = '';
  let slot = '';
  const pem: Record<string, string> = {};
  const agent = new https.Agent({ keepAlive: true });

  function request(method: string, route: string, body: unknown, tls: Tls | null, useAgent = true): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const req = https.request(
        `${url}${route}`,
        {
          method,
          ca: pem.ca,
          ...(tls ? { cert: tls.cert, key: tls.key } : {}),
          agent: useAgent ? agent : false,
          headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(data);
    });
  }
  const client = () => ({ cert: pem.client, key: pem.clientKey });
  const post = (route: string, body: Json) => request('POST', route, body, client());
  const base = { library: 'softhsm', token_label: TOKEN, pin: PIN };

  beforeAll(async () => {
    // A SoftHSM2 token, a CA with the bridge's server certificate and Coffer's client certificate,
    // and the bridge itself (test/global/hsm-bridge.ts); here also a second CA with a client
    // certificate of the same name, and a client of the right CA whose name is not allowed.
    hsm = await startHsmBridge({ pin: PIN, soPin: SO_PIN, tokenLabel: TOKEN, logLevel: 'debug' });
    ({ dir, env, url, slot } = hsm);
    expect(slot).toMatch(/^\d+$/);
    hsm.makeCa('rogue-ca');
    const made = { client: { cert: hsm.clientCertPem, key: hsm.clientKeyPem }, intruder: hsm.makeClient('intruder', 'intruder'), rogue: hsm.makeClient('rogue', 'coffer', 'rogue-ca') };
    pem.ca = hsm.caPem;
    for (const [name, pair] of Object.entries(made)) {
      pem[name] = pair.cert;
      pem[`${name}Key`] = pair.key;
    }
  });

  afterAll(async () => {
    agent.destroy();
    await hsm?.stop();
  });

  // ---------------------------------------------------------------------------------------------
  // Verification helpers

  function opensslVerify(publicPem: string, data: Buffer, signature: Buffer, hash: string, pssSalt?: string): string {
    const args = ['dgst', `-${opensslHash[hash]}`, '-verify', file(publicPem), '-signature', file(signature)];
    if (pssSalt !== undefined) args.push('-sigopt', 'rsa_padding_mode:pss', '-sigopt', `rsa_pss_saltlen:${pssSalt}`);
    args.push(file(data));
    const r = spawnSync('openssl', args, { cwd: dir, env, encoding: 'utf8' });
    return `${r.stdout}${r.stderr}`.trim();
  }

  async function webVerify(publicPem: string, alg: 'pkcs1' | 'pss' | 'ecdsa', hash: string, data: Buffer, signature: Buffer, extra: { saltLength?: number; curve?: string; size?: number } = {}) {
    const spki = u8(createPublicKey(publicPem).export({ type: 'spki', format: 'der' }));
    if (alg === 'ecdsa') {
      const key = await subtle.importKey('spki', spki, { name: 'ECDSA', namedCurve: extra.curve! }, false, ['verify']);
      // WebCrypto wants r‖s; the bridge answers DER.
      const parsed = AsnConvert.parse(signature, ECDSASigValue);
      const fix = (v: ArrayBuffer) => {
        let b = Buffer.from(v);
        while (b.length > extra.size! && b[0] === 0) b = b.subarray(1);
        return Buffer.concat([Buffer.alloc(extra.size! - b.length), b]);
      };
      const raw = Buffer.concat([fix(parsed.r), fix(parsed.s)]);
      return subtle.verify({ name: 'ECDSA', hash: webHash[hash] }, key, u8(raw), u8(data));
    }
    const name = alg === 'pss' ? 'RSA-PSS' : 'RSASSA-PKCS1-v1_5';
    const key = await subtle.importKey('spki', spki, { name, hash: webHash[hash] }, false, ['verify']);
    const params = alg === 'pss' ? { name, saltLength: extra.saltLength! } : { name };
    return subtle.verify(params, key, u8(signature), u8(data));
  }

  const keys: Record<string, Json> = {};

  // ---------------------------------------------------------------------------------------------

  it('answers health with the configured libraries', async () => {
    const r = await request('GET', '/v1/health', undefined, client());
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('ok');
    expect(r.json.libraries).toEqual([
      { name: 'softhsm', loaded: true },
      { name: 'missing', loaded: false },
    ]);
  });

  it('generates RSA 2048 and 3072 and EC P-256 and P-384 keys by label and by id', async () => {
    const rsa2048 = await post('/v1/key/generate', { ...base, key_label: 'rsa-2048', key_type: 'rsa', key_bits: 2048 });
    expect(rsa2048.status, JSON.stringify(rsa2048.json)).toBe(200);
    expect(rsa2048.json).toMatchObject({ key_type: 'rsa', key_bits: 2048, curve: null, key_label: 'rsa-2048', slot, token_label: TOKEN, replaced: false });
    expect(rsa2048.json.key_id).toMatch(/^0x[0-9a-f]{32}$/);
    expect(rsa2048.json.public_key).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(rsa2048.json.usages).toEqual(['sign', 'verify', 'encrypt', 'decrypt']);
    keys.rsa2048 = rsa2048.json;

    // By slot number (decimal string, as a managed key stores it), with an explicit CKA_ID and a
    // Vault-style mechanism instead of key_type.
    const rsa3072 = await post('/v1/key/generate', { library: 'softhsm', slot, pin: PIN, key_label: 'rsa-3072', key_id: '0xA1B2C3D4', mechanism: '0x0001', key_bits: '3072' });
    expect(rsa3072.status, JSON.stringify(rsa3072.json)).toBe(200);
    expect(rsa3072.json).toMatchObject({ key_type: 'rsa', key_bits: 3072, key_id: '0xa1b2c3d4', key_label: 'rsa-3072' });
    keys.rsa3072 = rsa3072.json;

    const p256 = await post('/v1/key/generate', { ...base, key_label: 'ec-p256', key_id: '0102', key_type: 'ec', curve: 'P-256' });
    expect(p256.status, JSON.stringify(p256.json)).toBe(200);
    expect(p256.json).toMatchObject({ key_type: 'ec', key_bits: 256, curve: 'P-256', key_id: '0x0102', usages: ['sign', 'verify'] });
    keys.p256 = p256.json;

    const p384 = await post('/v1/key/generate', { ...base, key_label: 'ec-p384', mechanism: '0x1041', curve: 'P384' });
    expect(p384.status, JSON.stringify(p384.json)).toBe(200);
    expect(p384.json).toMatchObject({ key_type: 'ec', key_bits: 384, curve: 'P-384' });
    keys.p384 = p384.json;

    // The PEMs are real SPKI keys of the right kind.
    expect(createPublicKey(keys.rsa3072.public_key).asymmetricKeyDetails).toMatchObject({ modulusLength: 3072, publicExponent: 65537n });
    expect(createPublicKey(keys.p384.public_key).asymmetricKeyDetails).toMatchObject({ namedCurve: 'secp384r1' });
    expect(openssl('pkey', '-pubin', '-in', file(keys.p256.public_key), '-noout', '-text')).toContain('NIST CURVE: P-256');
  });

  it('refuses to generate over an existing label or id unless told to replace', async () => {
    const again = await post('/v1/key/generate', { ...base, key_label: 'ec-p256', key_type: 'ec', curve: 'P-256' });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('key_exists');
    const sameId = await post('/v1/key/generate', { ...base, key_label: 'other-label', key_id: '0xa1b2c3d4', key_type: 'ec', curve: 'P-256' });
    expect(sameId.status).toBe(409);

    const first = await post('/v1/key/generate', { ...base, key_label: 'replace-me', key_type: 'ec', curve: 'P-256' });
    const second = await post('/v1/key/generate', { ...base, key_label: 'replace-me', key_type: 'ec', curve: 'P-256', replace: 'true' });
    expect(second.status).toBe(200);
    expect(second.json.replaced).toBe(true);
    expect(second.json.public_key).not.toBe(first.json.public_key);
    const found = await post('/v1/key', { ...base, key_label: 'replace-me' });
    expect(found.json.public_key).toBe(second.json.public_key);

    const badBits = await post('/v1/key/generate', { ...base, key_label: 'x', key_type: 'rsa', key_bits: 1024 });
    expect(badBits.status).toBe(400);
    const badCurve = await post('/v1/key/generate', { ...base, key_label: 'x', key_type: 'ec', curve: 'P-192' });
    expect(badCurve.status).toBe(400);
  });

  it('finds keys by label, by id, by both, and by slot; the public key matches generation', async () => {
    for (const k of Object.values(keys)) {
      const byLabel = await post('/v1/key', { ...base, key_label: k.key_label });
      expect(byLabel.status).toBe(200);
      expect(byLabel.json).toMatchObject({ key_label: k.key_label, key_id: k.key_id, public_key: k.public_key, key_type: k.key_type, key_bits: k.key_bits });
      const byId = await post('/v1/key', { ...base, key_id: k.key_id });
      expect(byId.json).toMatchObject({ key_label: k.key_label, public_key: k.public_key });
    }
    const both = await post('/v1/key', { library: 'softhsm', slot, pin: PIN, key_label: 'rsa-3072', key_id: 'a1b2c3d4' });
    expect(both.json.public_key).toBe(keys.rsa3072.public_key);
    const mismatch = await post('/v1/key', { ...base, key_label: 'rsa-2048', key_id: 'a1b2c3d4' });
    expect(mismatch.status).toBe(404);
  });

  const message = Buffer.from('Coffer signs this through the HSM bridge');

  it('signs RSA PKCS#1 v1.5 over a digest (sha2-256/384/512, sha1, sha3-256); openssl and WebCrypto verify', async () => {
    for (const k of [keys.rsa2048, keys.rsa3072]) {
      for (const hash of ['sha2-256', 'sha2-384', 'sha2-512', 'sha1', 'sha3-256']) {
        const r = await post('/v1/sign', { ...base, key_label: k.key_label, mechanism: '0x0001', hash, digest: digestOf(hash, message).toString('base64') });
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        const sig = Buffer.from(r.json.signature, 'base64');
        expect(sig.length).toBe(k.key_bits / 8);
        expect(opensslVerify(k.public_key, message, sig, hash)).toBe('Verified OK');
        if (webHash[hash]) expect(await webVerify(k.public_key, 'pkcs1', hash, message, sig)).toBe(true);
      }
    }
    // PKCS#1 v1.5 is deterministic: the same input gives the same signature, another does not verify.
    const d = digestOf('sha2-256', message).toString('base64');
    const a = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: '0x0001', hash: 'sha2-256', digest: d });
    const b = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: '0x0040', digest: d }); // CKM_SHA256_RSA_PKCS implies the hash
    expect(b.status).toBe(200);
    expect(b.json.signature).toBe(a.json.signature);
    expect(opensslVerify(keys.rsa2048.public_key, Buffer.from('another message'), Buffer.from(a.json.signature, 'base64'), 'sha2-256')).toContain('Verification failure');
  });

  it('signs RSA-PSS with the salt as long as the hash, or as asked; openssl and WebCrypto verify', async () => {
    for (const hash of ['sha2-256', 'sha2-384', 'sha2-512']) {
      const len = digestOf(hash, Buffer.alloc(0)).length;
      const r = await post('/v1/sign', { ...base, key_id: keys.rsa3072.key_id, mechanism: '0x000D', hash, digest: digestOf(hash, message).toString('base64') });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      const sig = Buffer.from(r.json.signature, 'base64');
      expect(opensslVerify(keys.rsa3072.public_key, message, sig, hash, 'digest')).toBe('Verified OK');
      expect(await webVerify(keys.rsa3072.public_key, 'pss', hash, message, sig, { saltLength: len })).toBe(true);
    }
    const salted = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: '0x000d', hash: 'sha2-256', salt_length: 20, digest: digestOf('sha2-256', message).toString('base64') });
    expect(salted.status).toBe(200);
    const sig = Buffer.from(salted.json.signature, 'base64');
    expect(opensslVerify(keys.rsa2048.public_key, message, sig, 'sha2-256', '20')).toBe('Verified OK');
    expect(await webVerify(keys.rsa2048.public_key, 'pss', 'sha2-256', message, sig, { saltLength: 20 })).toBe(true);
  });

  it('signs ECDSA P-256 and P-384, answering DER; openssl and WebCrypto verify', async () => {
    const cases = [
      { k: keys.p256, hash: 'sha2-256', curve: 'P-256', size: 32 },
      { k: keys.p256, hash: 'sha2-512', curve: 'P-256', size: 32 },
      { k: keys.p384, hash: 'sha2-384', curve: 'P-384', size: 48 },
      { k: keys.p384, hash: 'sha2-256', curve: 'P-384', size: 48 },
    ];
    for (const { k, hash, curve, size } of cases) {
      const r = await post('/v1/sign', { ...base, key_label: k.key_label, mechanism: '0x1041', hash, digest: digestOf(hash, message).toString('base64') });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.signature_format).toBe('der');
      const sig = Buffer.from(r.json.signature, 'base64');
      expect(sig[0]).toBe(0x30); // a DER SEQUENCE
      expect(opensslVerify(k.public_key, message, sig, hash)).toBe('Verified OK');
      expect(await webVerify(k.public_key, 'ecdsa', hash, message, sig, { curve, size })).toBe(true);
    }
  });

  it('verifies on the HSM: a good signature is valid, a changed digest is not', async () => {
    const digest = digestOf('sha2-256', message);
    for (const [label, mechanism] of [['ec-p256', '0x1041'], ['rsa-2048', '0x000D'], ['rsa-3072', '0x0001']]) {
      const s = await post('/v1/sign', { ...base, key_label: label, mechanism, hash: 'sha2-256', digest: digest.toString('base64') });
      const good = await post('/v1/verify', { ...base, key_label: label, mechanism, hash: 'sha2-256', digest: digest.toString('base64'), signature: s.json.signature });
      expect(good.json, label).toEqual({ valid: true });
      const other = digestOf('sha2-256', Buffer.from('tampered'));
      const bad = await post('/v1/verify', { ...base, key_label: label, mechanism, hash: 'sha2-256', digest: other.toString('base64'), signature: s.json.signature });
      expect(bad.json, label).toEqual({ valid: false });
    }
  });

  it('refuses signing requests that do not fit: wrong key type, digest length, hash, mechanism', async () => {
    const d = digestOf('sha2-256', message).toString('base64');
    const wrongType = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: '0x1041', hash: 'sha2-256', digest: d });
    expect(wrongType).toMatchObject({ status: 400, json: { code: 'key_type_mismatch' } });
    const wrongLen = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: '0x0001', hash: 'sha2-384', digest: d });
    expect(wrongLen.status).toBe(400);
    expect(wrongLen.json.error).toMatch(/48-byte sha2-384 digest/);
    const clash = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: '0x0041', hash: 'sha2-256', digest: d });
    expect(clash.status).toBe(400);
    const unknown = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: '0x0250', hash: 'sha2-256', digest: d });
    expect(unknown).toMatchObject({ status: 400, json: { code: 'unsupported_mechanism' } });
    const notHex = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: 'PKCS1', hash: 'sha2-256', digest: d });
    expect(notHex.status).toBe(400);
    const noHash = await post('/v1/sign', { ...base, key_label: 'rsa-2048', mechanism: '0x0001', digest: d });
    expect(noHash.status).toBe(400);
  });

  it('encrypts and decrypts RSA-OAEP, and decrypts what openssl and Node encrypted', async () => {
    // SoftHSM2 2.6 implements OAEP with SHA-1 only; other HSMs take the SHA-2 hashes too.
    const plaintext = Buffer.from('a data key for transit');
    for (const k of [keys.rsa2048, keys.rsa3072]) {
      const enc = await post('/v1/encrypt', { ...base, key_label: k.key_label, hash: 'sha1', plaintext: plaintext.toString('base64') });
      expect(enc.status, JSON.stringify(enc.json)).toBe(200);
      expect(Buffer.from(enc.json.ciphertext, 'base64').length).toBe(k.key_bits / 8);
      const dec = await post('/v1/decrypt', { ...base, key_label: k.key_label, mechanism: '0x0009', hash: 'sha1', ciphertext: enc.json.ciphertext });
      expect(dec.status, JSON.stringify(dec.json)).toBe(200);
      expect(Buffer.from(dec.json.plaintext, 'base64')).toEqual(plaintext);

      const ct = at(`ct-${k.key_bits}`);
      openssl('pkeyutl', '-encrypt', '-pubin', '-inkey', file(k.public_key), '-in', file(plaintext), '-out', ct, '-pkeyopt', 'rsa_padding_mode:oaep', '-pkeyopt', 'rsa_oaep_md:sha1', '-pkeyopt', 'rsa_mgf1_md:sha1');
      const fromOpenssl = await post('/v1/decrypt', { ...base, key_id: k.key_id, hash: 'sha1', ciphertext: readFileSync(ct).toString('base64') });
      expect(Buffer.from(fromOpenssl.json.plaintext, 'base64')).toEqual(plaintext);

      const fromNode = publicEncrypt({ key: k.public_key, padding: cryptoConstants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, plaintext);
      const nodeDec = await post('/v1/decrypt', { ...base, key_label: k.key_label, hash: 'sha1', ciphertext: fromNode.toString('base64') });
      expect(Buffer.from(nodeDec.json.plaintext, 'base64')).toEqual(plaintext);
      // SoftHSM2 does not implement OAEP labels: a labelled ciphertext is refused, never "decrypted"
      // under the wrong label. (The bridge passes `label` to the HSM as the OAEP source data.)
      const label = Buffer.from('context label');
      const labelled = publicEncrypt({ key: k.public_key, padding: cryptoConstants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1', oaepLabel: label }, plaintext);
      const withLabel = await post('/v1/decrypt', { ...base, key_label: k.key_label, hash: 'sha1', label: label.toString('base64'), ciphertext: labelled.toString('base64') });
      expect(withLabel.status, JSON.stringify(withLabel.json)).toBe(400);
    }
    const tampered = Buffer.from((await post('/v1/encrypt', { ...base, key_label: 'rsa-2048', hash: 'sha1', plaintext: 'aGk=' })).json.ciphertext, 'base64');
    tampered[10] ^= 1;
    const bad = await post('/v1/decrypt', { ...base, key_label: 'rsa-2048', hash: 'sha1', ciphertext: tampered.toString('base64') });
    expect(bad).toMatchObject({ status: 400, json: { code: 'decryption_failed' } });
    const short = await post('/v1/decrypt', { ...base, key_label: 'rsa-2048', hash: 'sha1', ciphertext: 'aGVsbG8=' });
    expect(short).toMatchObject({ status: 400, json: { code: 'decryption_failed' } });
    // A hash the token does not implement for OAEP is a clean 4xx naming the HSM's answer.
    const sha256 = await post('/v1/encrypt', { ...base, key_label: 'rsa-2048', hash: 'sha2-256', plaintext: 'aGk=' });
    expect(sha256.status).toBe(400);
    expect(sha256.json.code).toMatch(/^CKR_/);
    const onEc = await post('/v1/encrypt', { ...base, key_label: 'ec-p256', hash: 'sha1', plaintext: 'aGk=' });
    expect(onEc).toMatchObject({ status: 400, json: { code: 'key_type_mismatch' } });
  });

  it('returns random bytes from the token', async () => {
    const a = await post('/v1/random', { ...base, bytes: 48 });
    const b = await post('/v1/random', { ...base, bytes: '48' });
    expect(a.status).toBe(200);
    expect(Buffer.from(a.json.random, 'base64').length).toBe(48);
    expect(b.json.random).not.toBe(a.json.random);
    expect((await post('/v1/random', { ...base, bytes: 0 })).status).toBe(400);
    expect((await post('/v1/random', { ...base, bytes: 1 << 20 })).status).toBe(400);
  });

  it('answers a wrong PIN with 401 CKR_PIN_INCORRECT, and the right PIN still works after it', async () => {
    const d = digestOf('sha2-256', message).toString('base64');
    const wrong = await post('/v1/sign', { ...base, pin: WRONG_PIN, key_label: 'ec-p256', mechanism: '0x1041', hash: 'sha2-256', digest: d });
    expect(wrong.status).toBe(401);
    expect(wrong.json.code).toBe('CKR_PIN_INCORRECT');
    expect(wrong.json.error).toContain('CKR_PIN_INCORRECT');
    const again = await post('/v1/key', { ...base, pin: WRONG_PIN, key_label: 'ec-p256' });
    expect(again.json.code).toBe('CKR_PIN_INCORRECT');
    const right = await post('/v1/sign', { ...base, key_label: 'ec-p256', mechanism: '0x1041', hash: 'sha2-256', digest: d });
    expect(right.status).toBe(200);
  });

  it('answers unknown keys, tokens and libraries, and malformed requests, with clear codes', async () => {
    expect(await post('/v1/key', { ...base, key_label: 'no-such-key' })).toMatchObject({ status: 404, json: { code: 'key_not_found' } });
    expect(await post('/v1/key', { ...base, key_id: '0xdeadbeef' })).toMatchObject({ status: 404, json: { code: 'key_not_found' } });
    expect(await post('/v1/sign', { ...base, key_label: 'no-such-key', mechanism: '0x0001', hash: 'sha2-256', digest: digestOf('sha2-256', message).toString('base64') })).toMatchObject({ status: 404 });
    expect(await post('/v1/key', { ...base, token_label: 'no-such-token', key_label: 'rsa-2048' })).toMatchObject({ status: 404, json: { code: 'token_not_found' } });
    expect(await post('/v1/key', { ...base, token_label: undefined, slot: '12345', key_label: 'rsa-2048' })).toMatchObject({ status: 404, json: { code: 'token_not_found' } });

    const unknownLib = await post('/v1/key', { ...base, library: 'thales', key_label: 'rsa-2048' });
    expect(unknownLib).toMatchObject({ status: 400, json: { code: 'unknown_library' } });
    expect(unknownLib.json.error).toContain('softhsm');
    expect(await post('/v1/key', { ...base, library: 'missing', key_label: 'rsa-2048' })).toMatchObject({ status: 503, json: { code: 'library_unavailable' } });

    expect(await post('/v1/key', { ...base, pin: undefined, key_label: 'rsa-2048' })).toMatchObject({ status: 400, json: { code: 'bad_request' } });
    expect(await post('/v1/key', { library: 'softhsm', pin: PIN, key_label: 'rsa-2048' })).toMatchObject({ status: 400 });
    expect(await post('/v1/key', { ...base })).toMatchObject({ status: 400 });
    expect(await post('/v1/key', { ...base, key_id: 'xyz' })).toMatchObject({ status: 400 });
    expect(await post('/v1/key', { ...base, key_label: 'rsa-2048', max_parallel: 0 })).toMatchObject({ status: 400 });
    expect(await post('/v1/key', { ...base, key_label: 'rsa-2048', force_rw_session: 'maybe' })).toMatchObject({ status: 400 });
    expect(await post('/v1/nothing', {})).toMatchObject({ status: 404, json: { code: 'not_found' } });
    expect(await request('POST', '/v1/key', '{"library": ', client())).toMatchObject({ status: 400, json: { code: 'bad_request' } });
    expect(await request('POST', '/v1/key', '[1, 2]', client())).toMatchObject({ status: 400, json: { code: 'bad_request' } });
    const huge = JSON.stringify({ ...base, key_label: 'rsa-2048', padding: 'x'.repeat(300_000) });
    expect(await request('POST', '/v1/key', huge, client(), false)).toMatchObject({ status: 413, json: { code: 'request_too_large' } });
    expect(await request('GET', '/v1/sign', undefined, client())).toMatchObject({ status: 405 });
  });

  it('refuses client certificates from another CA, and connections without one, at the TLS layer', async () => {
    await expect(request('GET', '/v1/health', undefined, { cert: pem.rogue, key: pem.rogueKey }, false)).rejects.toThrow(/alert|socket hang up|ECONNRESET|certificate/i);
    await expect(request('GET', '/v1/health', undefined, null, false)).rejects.toThrow(/alert|socket hang up|ECONNRESET|certificate/i);
    // The right CA but a name outside allowed_client_names: refused by the bridge.
    const intruder = await request('GET', '/v1/health', undefined, { cert: pem.intruder, key: pem.intruderKey }, false);
    expect(intruder).toMatchObject({ status: 403, json: { code: 'client_not_allowed' } });
    expect(output()).toContain('TLS handshake refused');
  });

  it('keeps at most max_parallel operations in flight for a key', async () => {
    const d = digestOf('sha2-256', message).toString('base64');
    const stats = async () => (await request('GET', '/v1/stats', undefined, client())).json;
    const token = (s: Json) => s.tokens.find((t: Json) => t.token_label === TOKEN);
    // Everything so far ran one request at a time.
    expect(token(await stats()).peak_in_use).toBe(1);

    // Open the connections first, so that each burst reaches the bridge at once.
    await Promise.all(Array.from({ length: 16 }, () => request('GET', '/v1/health', undefined, client())));
    const burst = (max: number) =>
      Promise.all(
        Array.from({ length: 16 }, () => post('/v1/sign', { ...base, key_label: 'rsa-3072', mechanism: '0x000D', hash: 'sha2-256', digest: d, max_parallel: String(max) })),
      );
    const two = await burst(2);
    expect(two.map((r) => r.status)).toEqual(Array(16).fill(200));
    let s = await stats();
    const lim2 = s.limiters.find((l: Json) => l.max_parallel === 2);
    expect(lim2).toMatchObject({ slot, in_flight: 0, waiting: 0, completed: 16 });
    expect(lim2.peak_in_flight).toBe(2);
    expect(lim2.peak_waiting).toBeGreaterThan(0);
    // Counted where sessions are handed out: never more than two at once on the token.
    expect(token(s).peak_in_use).toBe(2);

    const four = await burst(4);
    expect(four.every((r) => r.status === 200)).toBe(true);
    s = await stats();
    const lim4 = s.limiters.find((l: Json) => l.max_parallel === 4);
    expect(lim4.peak_in_flight).toBeLessThanOrEqual(4);
    expect(lim4.peak_in_flight).toBeGreaterThan(1);
    expect(token(s).peak_in_use).toBeLessThanOrEqual(4);
    expect(token(s).sessions_open).toBeLessThanOrEqual(16);
  });

  it('uses read-write sessions when force_rw_session is set, read-only ones otherwise', async () => {
    const d = digestOf('sha2-256', message).toString('base64');
    const token = async () => (await request('GET', '/v1/stats', undefined, client())).json.tokens.find((t: Json) => t.token_label === TOKEN);
    const sign = (force: unknown) => post('/v1/sign', { ...base, key_label: 'ec-p256', mechanism: '0x1041', hash: 'sha2-256', digest: d, force_rw_session: force });
    const t0 = await token();
    expect((await sign('true')).status).toBe(200);
    const t1 = await token();
    expect(t1.ops_rw).toBe(t0.ops_rw + 1);
    expect(t1.ops_ro).toBe(t0.ops_ro);
    expect(t1.sessions_rw).toBeGreaterThan(0);
    expect((await sign('false')).status).toBe(200);
    expect((await sign(undefined)).status).toBe(200);
    const t2 = await token();
    expect(t2.ops_ro).toBe(t1.ops_ro + 2);
    expect(t2.ops_rw).toBe(t1.ops_rw);
  });

  it('never writes the PIN to its output, and stops cleanly', async () => {
    expect(output()).toContain('"msg":"request"');
    expect(output()).toContain('CKR_PIN_INCORRECT');
    for (const secret of [PIN, WRONG_PIN, SO_PIN]) expect(output()).not.toContain(secret);
    expect(await hsm.stop()).toBe(0);
    expect(output()).toContain('"msg":"stopped"');
    for (const secret of [PIN, WRONG_PIN, SO_PIN]) expect(output()).not.toContain(secret);
  });
});
