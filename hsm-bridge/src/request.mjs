// @ts-check
// Reading request fields. Coffer sends a pkcs11 managed key's fields as it stores them, so
// booleans may be the strings "true"/"false" and numbers may be decimal strings, as in Vault.

import { BridgeError } from './errors.mjs';

/** @typedef {Record<string, unknown>} Body */

/** @param {string} msg */
const bad = (msg) => new BridgeError(400, 'bad_request', msg);

/**
 * @param {Body} body
 * @param {string} name
 * @returns {string | undefined}
 */
export function optString(body, name) {
  const v = body[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw bad(`${name} must be a string`);
  return v;
}

/**
 * @param {Body} body
 * @param {string} name
 */
export function reqString(body, name) {
  const v = optString(body, name);
  if (v === undefined) throw bad(`${name} is required`);
  return v;
}

/**
 * Go's strconv.ParseBool spellings, and JSON booleans.
 * @param {Body} body
 * @param {string} name
 * @param {boolean} dflt
 */
export function optBool(body, name, dflt) {
  const v = body[name];
  if (v === undefined || v === null || v === '') return dflt;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
    if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  }
  throw bad(`${name} must be a boolean`);
}

/**
 * @param {Body} body
 * @param {string} name
 * @param {{ min: number, max: number, dflt?: number }} range
 * @returns {number}
 */
export function optInt(body, name, { min, max, dflt }) {
  const v = body[name];
  if (v === undefined || v === null || v === '') {
    if (dflt === undefined) throw bad(`${name} is required`);
    return dflt;
  }
  const n = typeof v === 'string' && /^[0-9]+$/.test(v.trim()) ? Number(v.trim()) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) throw bad(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

/**
 * Standard base64 (padding optional).
 * @param {Body} body
 * @param {string} name
 * @param {{ required?: boolean, maxBytes?: number }} [opts]
 * @returns {Buffer | undefined}
 */
export function optBase64(body, name, { required = false, maxBytes = 1 << 20 } = {}) {
  const v = body[name];
  if (v === undefined || v === null || v === '') {
    if (required) throw bad(`${name} is required (base64)`);
    return undefined;
  }
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.replace(/=+$/, '').length % 4 === 1) throw bad(`${name} must be base64`);
  const b = Buffer.from(v, 'base64');
  if (b.length > maxBytes) throw bad(`${name} is longer than ${maxBytes} bytes`);
  return b;
}

/**
 * @param {Body} body
 * @param {string} name
 * @param {{ required?: boolean, maxBytes?: number }} [opts]
 */
export function reqBase64(body, name, opts = {}) {
  return /** @type {Buffer} */ (optBase64(body, name, { ...opts, required: true }));
}

/**
 * @typedef {{ library: string, slot?: string, tokenLabel?: string, pin: string, forceRw: boolean,
 *   maxParallel: number }} Target
 */

/**
 * The token half of a pkcs11 managed key: library, slot or token_label, pin, force_rw_session,
 * max_parallel.
 * @param {Body} body
 * @returns {Target}
 */
export function parseTarget(body) {
  const library = reqString(body, 'library');
  const rawSlot = body.slot;
  /** @type {string | undefined} */
  let slot;
  if (rawSlot !== undefined && rawSlot !== null && rawSlot !== '') {
    const s = typeof rawSlot === 'number' && Number.isSafeInteger(rawSlot) ? String(rawSlot) : rawSlot;
    if (typeof s !== 'string' || !/^[0-9]{1,20}$/.test(s.trim())) throw bad('slot must be a slot number in decimal, as a string');
    slot = BigInt(s.trim()).toString();
  }
  const tokenLabel = optString(body, 'token_label');
  if (slot === undefined && tokenLabel === undefined) throw bad('one of slot or token_label is required');
  const pin = body.pin;
  if (typeof pin !== 'string' || pin === '') throw bad('pin is required (a string)');
  return {
    library,
    slot,
    tokenLabel,
    pin,
    forceRw: optBool(body, 'force_rw_session', false),
    maxParallel: optInt(body, 'max_parallel', { min: 1, max: 1024, dflt: 1 }),
  };
}

/**
 * @typedef {{ label?: string, id?: Buffer }} KeyRef
 */

/**
 * key_label and/or key_id (hexadecimal CKA_ID, "0x" optional). With both, a key must match both.
 * @param {Body} body
 * @returns {KeyRef}
 */
export function parseKeyRef(body) {
  const label = optString(body, 'key_label');
  const rawId = optString(body, 'key_id');
  /** @type {Buffer | undefined} */
  let id;
  if (rawId !== undefined) {
    const hex = rawId.trim().replace(/^0x/i, '');
    if (!/^(?:[0-9a-f]{2}){1,128}$/i.test(hex)) throw bad('key_id must be the hexadecimal CKA_ID of the key (an even number of hex digits, "0x" optional)');
    id = Buffer.from(hex, 'hex');
  }
  if (label === undefined && id === undefined) throw bad('one of key_label or key_id is required');
  if (label !== undefined && Buffer.byteLength(label) > 256) throw bad('key_label is too long');
  return { label, id };
}

/** @param {Buffer} id */
export const idHex = (id) => `0x${id.toString('hex')}`;
