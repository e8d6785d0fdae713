// @ts-check
// The PKCS#11 libraries of the configuration's kms_library stanzas, each loaded and initialised
// once on first use, and their tokens, found by slot number or by token label.

import os from 'node:os';
import pkcs11js from 'pkcs11js';
import { BridgeError, toBridgeError } from '../errors.mjs';
import { log } from '../log.mjs';
import { Token } from './token.mjs';

/** @typedef {import('../config.mjs').LibraryStanza} LibraryStanza */

/** Slot handles are CK_ULONGs in native byte order; answers and requests use the decimal number. */
function slotNumber(/** @type {Buffer} */ handle) {
  const le = os.endianness() === 'LE';
  if (handle.length === 8) return (le ? handle.readBigUInt64LE(0) : handle.readBigUInt64BE(0)).toString();
  return String(le ? handle.readUInt32LE(0) : handle.readUInt32BE(0));
}

/** Token labels are 32 bytes padded with blanks. */
const trimLabel = (/** @type {string} */ s) => s.replace(/[\s\u0000]+$/, '');

class Library {
  /** @type {Map<string, Token>} slot number → token */
  tokens = new Map();

  /**
   * @param {LibraryStanza} stanza
   * @param {import('pkcs11js').PKCS11} p11
   */
  constructor(stanza, p11) {
    this.stanza = stanza;
    this.p11 = p11;
  }

  /**
   * The token in `slot` (decimal) and/or labelled `tokenLabel`; both must agree when both are given.
   * @param {{ slot?: string, tokenLabel?: string }} where
   */
  token({ slot, tokenLabel }) {
    // A known slot is checked with one C_GetTokenInfo; anything else scans the slot list.
    const cached = slot !== undefined ? this.tokens.get(slot) : [...this.tokens.values()].find((t) => t.label === tokenLabel);
    if (cached && this.#stillThere(cached, tokenLabel)) return cached;
    let slots;
    try {
      slots = this.p11.C_GetSlotList(true);
    } catch (e) {
      throw toBridgeError(e);
    }
    for (const handle of slots) {
      const number = slotNumber(handle);
      if (slot !== undefined && number !== slot) continue;
      let info;
      try {
        info = this.p11.C_GetTokenInfo(handle);
      } catch {
        continue;
      }
      const label = trimLabel(info.label);
      if (tokenLabel !== undefined && label !== tokenLabel) continue;
      if ((info.flags & pkcs11js.CKF_TOKEN_INITIALIZED) === 0) continue;
      let token = this.tokens.get(number);
      if (!token || token.label !== label) {
        token?.closeAll();
        token = new Token(this.p11, handle, { library: this.stanza.name, slot: number, label, maxSessions: this.stanza.max_sessions });
        this.tokens.set(number, token);
      }
      return token;
    }
    const what = [slot !== undefined ? `slot ${slot}` : '', tokenLabel !== undefined ? `token label "${tokenLabel}"` : ''].filter(Boolean).join(' and ');
    throw new BridgeError(404, 'token_not_found', `library ${this.stanza.name} has no initialised token with ${what}`);
  }

  /**
   * @param {Token} token
   * @param {string | undefined} tokenLabel
   */
  #stillThere(token, tokenLabel) {
    try {
      const label = trimLabel(this.p11.C_GetTokenInfo(token.handle).label);
      return label === token.label && (tokenLabel === undefined || label === tokenLabel);
    } catch {
      return false;
    }
  }

  close() {
    for (const t of this.tokens.values()) t.closeAll();
    try {
      this.p11.C_Finalize();
      this.p11.close();
    } catch {
      // shutting down
    }
  }
}

export class Libraries {
  /** @type {Map<string, Library>} by the library's path: two stanzas naming one file share it */
  #loaded = new Map();

  /** @param {Map<string, LibraryStanza>} stanzas */
  constructor(stanzas) {
    this.stanzas = stanzas;
  }

  /**
   * The library of a stanza name (case-insensitive, as Vault's kms_library names).
   * @param {string} name
   */
  get(name) {
    const stanza = this.stanzas.get(name.toLowerCase());
    if (!stanza) {
      throw new BridgeError(400, 'unknown_library', `library "${name}" is not a kms_library stanza of the bridge's configuration; known: ${[...this.stanzas.values()].map((s) => s.name).join(', ')}`);
    }
    let lib = this.#loaded.get(stanza.library);
    if (!lib) {
      const p11 = new pkcs11js.PKCS11();
      try {
        p11.load(stanza.library);
        p11.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
      } catch (e) {
        log.error('cannot load PKCS#11 library', { library: stanza.name, path: stanza.library, error: /** @type {Error} */ (e).message });
        throw new BridgeError(503, 'library_unavailable', `the PKCS#11 library of stanza ${stanza.name} cannot be loaded or initialised`);
      }
      const info = p11.C_GetInfo();
      log.info('loaded PKCS#11 library', { library: stanza.name, path: stanza.library, manufacturer: trimLabel(info.manufacturerID), description: trimLabel(info.libraryDescription) });
      lib = new Library(stanza, p11);
      this.#loaded.set(stanza.library, lib);
    }
    return lib;
  }

  /** What /v1/health and /v1/stats show. */
  status() {
    return [...this.stanzas.values()].map((s) => ({ name: s.name, loaded: this.#loaded.has(s.library) }));
  }

  tokenStats() {
    return [...this.#loaded.values()].flatMap((l) => [...l.tokens.values()].map((t) => ({ ...t.stats })));
  }

  closeAll() {
    for (const l of this.#loaded.values()) l.close();
    this.#loaded.clear();
  }
}
