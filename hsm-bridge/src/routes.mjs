// @ts-check
// The JSON API. Every operation names its token and key the way a Coffer pkcs11 managed key does
// (library, slot | token_label, pin, key_label | key_id, force_rw_session, max_parallel) and
// runs under that key's max_parallel limit, in a logged-in session from the token's pool.

import { BridgeError } from './errors.mjs';
import * as keys from './keys.mjs';
import { mechanismHex, parseCurve, parseHash, parseMechanism, RSA_KEY_BITS } from './mechanisms.mjs';
import { optBase64, optBool, optInt, optString, parseKeyRef, parseTarget, reqBase64 } from './request.mjs';

/** @typedef {import('./request.mjs').Body} Body */
/** @typedef {import('./pkcs11/libraries.mjs').Libraries} Libraries */
/** @typedef {import('./limiter.mjs').Limiters} Limiters */
/** @typedef {(body: Body) => Promise<Record<string, unknown>>} Handler */

export const VERSION = '0.1.0';

/**
 * @param {{ libraries: Libraries, limiters: Limiters }} deps
 * @returns {Map<string, Handler>} "METHOD /path" → handler
 */
export function createRoutes({ libraries, limiters }) {
  /**
   * Runs fn in a logged-in session of the request's token, under its max_parallel limit.
   * @template T
   * @param {Body} body
   * @param {boolean} needsRw the operation creates or destroys objects
   * @param {(p11: import('pkcs11js').PKCS11, session: Buffer, where: { slot: string, token_label: string }) => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async function onToken(body, needsRw, fn) {
    const target = parseTarget(body);
    const library = libraries.get(target.library);
    const token = library.token({ slot: target.slot, tokenLabel: target.tokenLabel });
    const limiter = limiters.get(library.stanza.name, token.stats.slot, target.maxParallel);
    const where = { slot: token.stats.slot, token_label: token.label };
    return limiter.run(() => token.run({ pin: target.pin, rw: needsRw || target.forceRw }, (session) => fn(library.p11, session, where)));
  }

  /**
   * @param {Body} body
   * @param {(p11: import('pkcs11js').PKCS11, session: Buffer, key: import('./keys.mjs').KeyPair) => Promise<Record<string, unknown>>} fn
   */
  function onKey(body, fn) {
    const ref = parseKeyRef(body);
    return onToken(body, false, async (p11, session) => fn(p11, session, keys.locate(p11, session, ref)));
  }

  /** @param {Body} body */
  function signParams(body) {
    const mech = parseMechanism(body.mechanism);
    if (!['rsa-pkcs', 'rsa-pss', 'ecdsa'].includes(mech.family)) {
      throw new BridgeError(400, 'unsupported_mechanism', `mechanism ${mechanismHex(mech.value)} ${mech.name} does not sign; use 0x0001, 0x000D or 0x1041`);
    }
    const named = optString(body, 'hash') ?? mech.hash;
    if (named === undefined) throw new BridgeError(400, 'bad_request', 'hash is required: the algorithm that made digest');
    const hash = parseHash(named);
    if (mech.hash !== undefined && mech.hash !== hash.name) {
      throw new BridgeError(400, 'bad_request', `mechanism ${mech.name} hashes with ${mech.hash}, but hash is ${hash.name}`);
    }
    const digest = reqBase64(body, 'digest', { maxBytes: 64 });
    const saltLength = body.salt_length === undefined ? undefined : optInt(body, 'salt_length', { min: 0, max: 512 });
    if (saltLength !== undefined && mech.family !== 'rsa-pss') throw new BridgeError(400, 'bad_request', 'salt_length is only for RSA-PSS (0x000D)');
    return { mech, hash, digest, saltLength };
  }

  /** @param {Body} body */
  function oaepParams(body) {
    const mech = parseMechanism(body.mechanism ?? '0x0009');
    if (mech.family !== 'rsa-oaep') throw new BridgeError(400, 'unsupported_mechanism', `encryption uses RSA-OAEP (0x0009); ${mechanismHex(mech.value)} ${mech.name} is not supported for it`);
    return { mech, hash: parseHash(optString(body, 'hash') ?? 'sha2-256'), label: optBase64(body, 'label', { maxBytes: 1024 }) };
  }

  /** @type {Map<string, Handler>} */
  const routes = new Map();

  const health = async () => ({ status: 'ok', version: VERSION, libraries: libraries.status() });
  routes.set('GET /v1/health', health);
  routes.set('POST /v1/health', health);

  const stats = async () => ({ tokens: libraries.tokenStats(), limiters: limiters.stats() });
  routes.set('GET /v1/stats', stats);
  routes.set('POST /v1/stats', stats);

  routes.set('POST /v1/key', async (body) => {
    const ref = parseKeyRef(body);
    return onToken(body, false, async (p11, session, where) => ({ ...keys.describe(p11, session, keys.locate(p11, session, ref)), ...where }));
  });

  routes.set('POST /v1/key/generate', async (body) => {
    const ref = parseKeyRef(body);
    const rawType = optString(body, 'key_type');
    /** @type {'rsa' | 'ec'} */
    let keyType;
    if (rawType !== undefined) {
      const t = rawType.toLowerCase();
      if (t === 'rsa') keyType = 'rsa';
      else if (t === 'ec' || t === 'ecdsa') keyType = 'ec';
      else throw new BridgeError(400, 'bad_request', 'key_type must be rsa or ec');
    } else if (body.mechanism !== undefined && body.mechanism !== '') {
      keyType = parseMechanism(body.mechanism).keyType;
    } else {
      throw new BridgeError(400, 'bad_request', 'key_type (rsa or ec) or mechanism is required');
    }
    /** @type {{ keyType: 'rsa' | 'ec', bits?: number, curve?: import('./mechanisms.mjs').Curve, replace: boolean }} */
    const spec = { keyType, replace: optBool(body, 'replace', false) };
    if (keyType === 'rsa') {
      spec.bits = optInt(body, 'key_bits', { min: 0, max: 16384, dflt: 0 });
      if (!RSA_KEY_BITS.includes(spec.bits)) throw new BridgeError(400, 'bad_request', `key_bits must be one of ${RSA_KEY_BITS.join(', ')} for an RSA key`);
    } else {
      if (optString(body, 'curve') === undefined) throw new BridgeError(400, 'bad_request', 'curve is required for an EC key');
      spec.curve = parseCurve(body.curve);
    }
    return onToken(body, true, async (p11, session, where) => {
      const made = await keys.generate(p11, session, ref, spec);
      const key = keys.locate(p11, session, { label: made.label, id: made.id });
      return { ...keys.describe(p11, session, key), ...where, replaced: made.replaced };
    });
  });

  routes.set('POST /v1/sign', async (body) => {
    const params = signParams(body);
    return onKey(body, async (p11, session, key) => {
      const signature = await keys.sign(p11, session, key, params);
      return {
        signature: signature.toString('base64'),
        ...(key.keyType === 'ec' ? { signature_format: 'der' } : {}),
        mechanism: mechanismHex(params.mech.value),
        hash: params.hash.name,
      };
    });
  });

  routes.set('POST /v1/verify', async (body) => {
    const params = { ...signParams(body), signature: reqBase64(body, 'signature', { maxBytes: 1024 }) };
    return onKey(body, async (p11, session, key) => ({ valid: await keys.verify(p11, session, key, params) }));
  });

  routes.set('POST /v1/encrypt', async (body) => {
    const params = { ...oaepParams(body), plaintext: reqBase64(body, 'plaintext', { maxBytes: 1024 }) };
    return onKey(body, async (p11, session, key) => ({ ciphertext: (await keys.encrypt(p11, session, key, params)).toString('base64') }));
  });

  routes.set('POST /v1/decrypt', async (body) => {
    const params = { ...oaepParams(body), ciphertext: reqBase64(body, 'ciphertext', { maxBytes: 1024 }) };
    return onKey(body, async (p11, session, key) => ({ plaintext: (await keys.decrypt(p11, session, key, params)).toString('base64') }));
  });

  routes.set('POST /v1/random', async (body) => {
    const bytes = optInt(body, 'bytes', { min: 1, max: 65536, dflt: 32 });
    return onToken(body, false, async (p11, session) => ({ random: keys.random(p11, session, bytes).toString('base64') }));
  });

  return routes;
}
