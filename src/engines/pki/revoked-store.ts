// Revocation records and the small flags that tell the CRL builder what changed. A revocation
// writes a fixed number of small records (its entry, maybe a delta-log entry, the flags), so its
// cost does not grow with the number of certificates already revoked; the CRLs are rebuilt later
// (crl-store.ts), walking these records a page at a time.

import { serialStorageKey } from '../../crypto/pki/serial';
import { getJSON, putJSON, type Storage } from '../../framework/storage';

/** One revoked certificate (`revoked/<hyphen-serial>`). */
export interface RevokedEntry {
  /** Colon hex. */
  serial: string;
  /** DER, base64. */
  certificate: string;
  /** Unix seconds. */
  revocationTime: number;
  /** RFC 3339 with nanoseconds, UTC. */
  revocationTimeNanos: string;
  /** The issuer that signed it ('' when no issuer of the mount is known to have). */
  issuerId: string;
  /** The certificate's NotAfter, unix seconds (tidy reads it without parsing the certificate). */
  expiresAt: number;
}

export const REVOKED_PREFIX = 'revoked/';
/** Serials revoked since the last complete CRL (the delta CRL's contents), when delta CRLs are on. */
export const DELTA_LOG_PREFIX = 'crls/delta-log/';
const PENDING_KEY = 'crls/pending';

const hyphen = (serial: string): string => serialStorageKey(serial.toLowerCase());
/** Colon form of a hyphenated storage key's last segment. */
export const colonSerial = (key: string): string => key.slice(key.lastIndexOf('/') + 1).replace(/-/g, ':');

export const revokedKey = (serial: string): string => REVOKED_PREFIX + hyphen(serial);
export const loadRevoked = (storage: Storage, serial: string): Promise<RevokedEntry | null> => getJSON<RevokedEntry>(storage, revokedKey(serial));
export const saveRevoked = (storage: Storage, e: RevokedEntry): Promise<void> => putJSON(storage, revokedKey(e.serial), e);
export const deleteRevoked = (storage: Storage, serial: string): Promise<void> => storage.delete(revokedKey(serial));

/** Every revoked entry, a page of storage keys at a time (never one list of the whole folder). */
export async function* revokedPages(storage: Storage, pageSize = 1000): AsyncGenerator<RevokedEntry[]> {
  let after = '';
  for (;;) {
    const keys = await storage.scan(REVOKED_PREFIX, after, pageSize);
    if (keys.length === 0) return;
    after = keys[keys.length - 1];
    const page: RevokedEntry[] = [];
    for (const key of keys) {
      const e = await getJSON<RevokedEntry>(storage, key);
      if (e) page.push(e);
    }
    yield page;
  }
}

/** Revoked serials in colon form, in key order (LIST certs/revoked). */
export async function revokedSerials(storage: Storage): Promise<string[]> {
  const out: string[] = [];
  let after = '';
  for (;;) {
    const keys = await storage.scan(REVOKED_PREFIX, after, 1000);
    if (keys.length === 0) return out;
    after = keys[keys.length - 1];
    for (const key of keys) out.push(colonSerial(key));
  }
}

// ---- the delta log ----

export const addToDeltaLog = (storage: Storage, serial: string): Promise<void> => putJSON(storage, DELTA_LOG_PREFIX + hyphen(serial), {});

/** Serials in the delta log (colon form). Bounded by the revocations since the last complete CRL. */
export async function deltaLogSerials(storage: Storage): Promise<string[]> {
  const out: string[] = [];
  let after = '';
  for (;;) {
    const keys = await storage.scan(DELTA_LOG_PREFIX, after, 1000);
    if (keys.length === 0) return out;
    after = keys[keys.length - 1];
    for (const key of keys) out.push(colonSerial(key));
  }
}

/** Empties the delta log (a complete CRL now holds everything it listed). */
export async function clearDeltaLog(storage: Storage): Promise<void> {
  for (;;) {
    const keys = await storage.scan(DELTA_LOG_PREFIX, '', 1000);
    if (keys.length === 0) return;
    for (const key of keys) await storage.delete(key);
  }
}

// ---- what the CRL builder must redo ----

export interface CrlPending {
  /** The complete CRLs are stale (rebuilt by the next CRL read or periodic run). */
  complete: boolean;
  /** Rebuild even when CRLs are disabled (to sign the empty CRL once), as Vault's forceNew. */
  force: boolean;
  /** The delta log holds revocations no delta CRL lists yet. */
  delta: boolean;
}

const NOTHING_PENDING: CrlPending = { complete: false, force: false, delta: false };

export async function loadPending(storage: Storage): Promise<CrlPending> {
  return { ...NOTHING_PENDING, ...((await getJSON<CrlPending>(storage, PENDING_KEY)) ?? {}) };
}

/** Flags CRL work for later; only ever adds to what is already pending. */
export async function markCrlsStale(storage: Storage, what: Partial<CrlPending>): Promise<void> {
  const current = await loadPending(storage);
  const next: CrlPending = {
    complete: current.complete || what.complete === true,
    force: current.force || what.force === true,
    delta: current.delta || what.delta === true,
  };
  if (next.complete !== current.complete || next.force !== current.force || next.delta !== current.delta) {
    await putJSON(storage, PENDING_KEY, next);
  }
}

export async function savePending(storage: Storage, p: CrlPending): Promise<void> {
  if (!p.complete && !p.force && !p.delta) await storage.delete(PENDING_KEY);
  else await putJSON(storage, PENDING_KEY, p);
}
