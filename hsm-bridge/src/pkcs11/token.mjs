// @ts-check
// One token (a slot of a loaded library): its pool of open sessions and its login state.
//
// PKCS#11 login is per token and per application: once one session has logged in, every session
// of the process on that token is logged in, and a C_Login with another PIN answers
// CKR_USER_ALREADY_LOGGED_IN without checking it. So the bridge remembers which PIN the token is
// logged in with (as an HMAC under a key made at start-up, never the PIN itself). A request with
// the same PIN uses the pool as it is; a request with another PIN waits for the operations in
// flight, logs out and logs in with its own PIN, so a wrong PIN is always refused by the token.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import pkcs11js from 'pkcs11js';
import { pkcs11Code, ckrName } from '../errors.mjs';
import { RwLock } from './rwlock.mjs';

const PIN_KEY = randomBytes(32);

/** @param {string} pin */
const pinDigest = (pin) => createHmac('sha256', PIN_KEY).update(pin, 'utf8').digest();

/** Errors after which the session is still usable (the failed operation is over). */
const BENIGN = new Set([
  'CKR_ARGUMENTS_BAD', 'CKR_DATA_INVALID', 'CKR_DATA_LEN_RANGE', 'CKR_ENCRYPTED_DATA_INVALID',
  'CKR_ENCRYPTED_DATA_LEN_RANGE', 'CKR_KEY_TYPE_INCONSISTENT', 'CKR_KEY_FUNCTION_NOT_PERMITTED',
  'CKR_MECHANISM_INVALID', 'CKR_MECHANISM_PARAM_INVALID', 'CKR_SIGNATURE_INVALID',
  'CKR_SIGNATURE_LEN_RANGE', 'CKR_KEY_SIZE_RANGE', 'CKR_TEMPLATE_INCOMPLETE',
  'CKR_TEMPLATE_INCONSISTENT', 'CKR_ATTRIBUTE_VALUE_INVALID', 'CKR_DOMAIN_PARAMS_INVALID',
  'CKR_CURVE_NOT_SUPPORTED', 'CKR_OBJECT_HANDLE_INVALID', 'CKR_KEY_HANDLE_INVALID',
]);

/**
 * @typedef {{ library: string, slot: string, token_label: string, max_sessions: number,
 *   sessions_open: number, sessions_rw: number, sessions_ro: number, in_use: number,
 *   peak_in_use: number, ops_rw: number, ops_ro: number, logins: number, login_failures: number,
 *   logged_in: boolean }} TokenStats
 */

export class Token {
  /** @type {{ ro: Buffer[], rw: Buffer[] }} */
  #idle = { ro: [], rw: [] };
  /** @type {Map<string, boolean>} open session handle (hex) → read-write? */
  #open = new Map();
  /** @type {Array<() => void>} */
  #waiters = [];
  /** @type {Buffer | null} */
  #loginDigest = null;
  #lock = new RwLock();

  /**
   * @param {import('pkcs11js').PKCS11} p11
   * @param {Buffer} handle slot handle
   * @param {{ library: string, slot: string, label: string, maxSessions: number }} info
   */
  constructor(p11, handle, info) {
    this.p11 = p11;
    this.handle = handle;
    this.label = info.label;
    this.maxSessions = info.maxSessions;
    /** @type {TokenStats} */
    this.stats = {
      library: info.library, slot: info.slot, token_label: info.label, max_sessions: info.maxSessions,
      sessions_open: 0, sessions_rw: 0, sessions_ro: 0, in_use: 0, peak_in_use: 0,
      ops_rw: 0, ops_ro: 0, logins: 0, login_failures: 0, logged_in: false,
    };
  }

  /**
   * Runs fn with a logged-in session of this token.
   * @template T
   * @param {{ pin: string, rw: boolean }} opts rw: a read-write session (force_rw_session, or an
   *   operation that creates objects)
   * @param {(session: Buffer) => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async run(opts, fn) {
    try {
      return await this.#runOnce(opts, fn);
    } catch (e) {
      // The token logged us out behind our back (a removed and reinserted token, a network HSM's
      // idle timeout): forget the login and try once more.
      if (pkcs11Code(e) !== pkcs11js.CKR_USER_NOT_LOGGED_IN) throw e;
      this.#forgetLogin();
      return this.#runOnce(opts, fn);
    }
  }

  /**
   * @template T
   * @param {{ pin: string, rw: boolean }} opts
   * @param {(session: Buffer) => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async #runOnce({ pin, rw }, fn) {
    const digest = pinDigest(pin);
    for (;;) {
      await this.#lock.shared();
      if (this.#loginDigest && timingSafeEqual(this.#loginDigest, digest)) break;
      this.#lock.releaseShared();
      await this.#lock.exclusive();
      try {
        await this.#login(pin, digest);
      } finally {
        this.#lock.releaseExclusive();
      }
    }
    try {
      const session = await this.#acquire(rw);
      const s = this.stats;
      s.in_use++;
      s.peak_in_use = Math.max(s.peak_in_use, s.in_use);
      if (this.#open.get(session.toString('hex'))) s.ops_rw++;
      else s.ops_ro++;
      let keep = true;
      try {
        return await fn(session);
      } catch (e) {
        const code = pkcs11Code(e);
        if (code !== undefined && !BENIGN.has(ckrName(code))) keep = false;
        throw e;
      } finally {
        s.in_use--;
        if (keep) this.#release(session);
        else this.#close(session);
      }
    } finally {
      this.#lock.releaseShared();
    }
  }

  /**
   * Called with the lock held alone: no session is in use.
   * @param {string} pin
   * @param {Buffer} digest
   */
  async #login(pin, digest) {
    if (this.#loginDigest && timingSafeEqual(this.#loginDigest, digest)) return;
    const session = await this.#acquire(false);
    try {
      if (this.#loginDigest) this.#logout(session);
      try {
        this.p11.C_Login(session, pkcs11js.CKU_USER, pin);
      } catch (e) {
        if (pkcs11Code(e) !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw e;
        // Logged in by a login we no longer know about: log out so the token checks this PIN.
        this.#logout(session);
        this.p11.C_Login(session, pkcs11js.CKU_USER, pin);
      }
      this.#loginDigest = digest;
      this.stats.logins++;
      this.stats.logged_in = true;
    } catch (e) {
      this.stats.login_failures++;
      throw e;
    } finally {
      this.#release(session);
    }
  }

  /** @param {Buffer} session */
  #logout(session) {
    this.#forgetLogin();
    try {
      this.p11.C_Logout(session);
    } catch (e) {
      if (pkcs11Code(e) !== pkcs11js.CKR_USER_NOT_LOGGED_IN) throw e;
    }
  }

  #forgetLogin() {
    this.#loginDigest = null;
    this.stats.logged_in = false;
  }

  /**
   * @param {boolean} rw
   * @returns {Promise<Buffer>}
   */
  async #acquire(rw) {
    for (;;) {
      const pool = rw ? this.#idle.rw : this.#idle.ro;
      const idle = pool.pop();
      if (idle) return idle;
      if (this.#open.size >= this.maxSessions) {
        // Full. A read-write session does read-only work too; for read-write work, trade an idle
        // read-only session for a new read-write one; else wait for a session to come back.
        if (!rw) {
          const spare = this.#idle.rw.pop();
          if (spare) return spare;
        }
        const other = rw ? this.#idle.ro.pop() : undefined;
        if (other) this.#close(other);
        else {
          await new Promise((/** @type {(v?: unknown) => void} */ resolve) => this.#waiters.push(resolve));
          continue;
        }
      }
      const flags = pkcs11js.CKF_SERIAL_SESSION | (rw ? pkcs11js.CKF_RW_SESSION : 0);
      const session = this.p11.C_OpenSession(this.handle, flags);
      this.#open.set(session.toString('hex'), rw);
      this.#count();
      return session;
    }
  }

  /** @param {Buffer} session */
  #release(session) {
    (this.#open.get(session.toString('hex')) ? this.#idle.rw : this.#idle.ro).push(session);
    this.#waiters.shift()?.();
  }

  /** @param {Buffer} session */
  #close(session) {
    this.#open.delete(session.toString('hex'));
    try {
      this.p11.C_CloseSession(session);
    } catch {
      // already gone
    }
    // Closing the last session of a token logs the application out.
    if (this.#open.size === 0) this.#forgetLogin();
    this.#count();
    this.#waiters.shift()?.();
  }

  #count() {
    const rws = [...this.#open.values()].filter(Boolean).length;
    this.stats.sessions_open = this.#open.size;
    this.stats.sessions_rw = rws;
    this.stats.sessions_ro = this.#open.size - rws;
  }

  /** Closes every session (shutdown). */
  closeAll() {
    for (const s of [...this.#idle.ro, ...this.#idle.rw]) this.#close(s);
    this.#idle = { ro: [], rw: [] };
  }
}
