// Building, storing and serving the mount's CRLs (reference §1.10). Issuers that share a key and a
// subject share one CRL (Vault's equivalence sets), identified by a CRL id that survives issuer
// rotation. CRLs are rebuilt from the revoked/ entries a page at a time, never inside a
// revocation: a revocation only flags the CRLs stale (revoked-store.ts), and the next CRL read or
// periodic run rebuilds them. Each CRL is stored in chunks below the storage value limit.

import { buildCrl, type CrlEntry } from '../../crypto/pki/crl';
import { subjectKeyId, type Signer } from '../../crypto/pki/keys';
import { randomUUID } from '../../crypto/random';
import { bytesEqual, concatBytes, fromBase64 } from '../../crypto/encoding';
import { asCofferError, CofferError } from '../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { issuerAia } from './authority';
import { parsedIssuers, parseStoredCert, signerOf, type IssuerCert } from './certs';
import { crlDurations, DEFAULT_MAX_CRL_ENTRIES, loadCrlConfig, type CrlConfig } from './crl-config';
import {
  clearDeltaLog,
  deltaLogSerials,
  loadPending,
  loadRevoked,
  revokedPages,
  saveRevoked,
  savePending,
  type CrlPending,
  type RevokedEntry,
} from './revoked-store';
import { keySigner, type KeyAccess } from './signers';
import { issuersConfig, loadAllIssuers, loadKey, type IssuerEntry } from './store';

/** Callers without managed keys (tests, local-only mounts) sign with local keys only. */
const LOCAL_ONLY: KeyAccess = { allowed: null };

export type CrlKind = 'complete' | 'delta';

/** Stored CRLs are cut into values of at most this size (the barrier refuses values over 1 MiB). */
export const CRL_CHUNK_SIZE = 512 * 1024;

const STATE_KEY = 'crls/state';
const CRLS_PREFIX = 'crls/';

/** What the builder remembers between builds (Vault's local CRL config). */
export interface CrlState {
  /** Issuer id → the id of the CRL its equivalence set shares. */
  issuerCrl: Record<string, string>;
  /** CRL id → the number the next CRL (complete or delta) gets. */
  numbers: Record<string, number>;
  /** CRL id → the number of its last complete CRL (a delta CRL's base). */
  lastComplete: Record<string, number>;
  /** The issuer set the CRLs were last built for; a mismatch forces a rebuild. */
  fingerprint: string;
  /** When the current complete CRLs expire (ms; 0: none built), for auto-rebuild. */
  nextUpdate: number;
  /** When delta CRLs were last built (ms). */
  lastDeltaBuild: number;
  /** The last build failure ('' when the last build succeeded). */
  lastError: string;
}

/** Metadata of one stored CRL. */
export interface StoredCrlMeta {
  chunks: number;
  size: number;
  /** Build time, ms (Last-Modified, If-Modified-Since). */
  builtAt: number;
  number: number;
}

export async function loadCrlState(storage: Storage): Promise<CrlState> {
  const s = await getJSON<Partial<CrlState>>(storage, STATE_KEY);
  return {
    issuerCrl: s?.issuerCrl ?? {},
    numbers: s?.numbers ?? {},
    lastComplete: s?.lastComplete ?? {},
    fingerprint: s?.fingerprint ?? '',
    nextUpdate: s?.nextUpdate ?? 0,
    lastDeltaBuild: s?.lastDeltaBuild ?? 0,
    lastError: s?.lastError ?? '',
  };
}

const saveCrlState = (storage: Storage, s: CrlState): Promise<void> => putJSON(storage, STATE_KEY, s);

/** Everything about the issuers that decides how CRLs are grouped and signed. */
export function issuerFingerprint(issuers: IssuerEntry[], defaultId: string): string {
  const parts = issuers
    .map((e) => `${e.id}/${e.keyId}/${e.usage.includes('crl-signing') ? 1 : 0}/${e.revoked ? e.revocationTime : 0}/${e.lastModified}`)
    .sort();
  return `${defaultId}|${parts.join(',')}`;
}

// ---- storage of CRL bytes ----

const crlFolder = (crlId: string, kind: CrlKind): string => `${CRLS_PREFIX}${crlId}/${kind}/`;

async function writeCrl(storage: Storage, crlId: string, kind: CrlKind, der: Uint8Array, meta: Omit<StoredCrlMeta, 'chunks' | 'size'>): Promise<void> {
  const folder = crlFolder(crlId, kind);
  const old = await getJSON<StoredCrlMeta>(storage, folder + 'meta');
  const chunks = Math.max(1, Math.ceil(der.length / CRL_CHUNK_SIZE));
  for (let i = 0; i < chunks; i++) await storage.put(folder + i, der.subarray(i * CRL_CHUNK_SIZE, (i + 1) * CRL_CHUNK_SIZE));
  for (let i = chunks; i < (old?.chunks ?? 0); i++) await storage.delete(folder + i);
  await putJSON(storage, folder + 'meta', { ...meta, chunks, size: der.length } satisfies StoredCrlMeta);
}

/** A stored CRL (DER) with its metadata, or null when none was built. */
export async function readCrl(storage: Storage, crlId: string, kind: CrlKind): Promise<{ der: Uint8Array; meta: StoredCrlMeta } | null> {
  const folder = crlFolder(crlId, kind);
  const meta = await getJSON<StoredCrlMeta>(storage, folder + 'meta');
  if (!meta) return null;
  const parts: Uint8Array[] = [];
  for (let i = 0; i < meta.chunks; i++) {
    const part = await storage.get(folder + i);
    if (!part) return null;
    parts.push(part);
  }
  return { der: concatBytes(...parts), meta };
}

async function deleteCrlData(storage: Storage, crlId: string): Promise<void> {
  for (;;) {
    const keys = await storage.scan(`${CRLS_PREFIX}${crlId}/`, '', 500);
    if (keys.length === 0) return;
    for (const key of keys) await storage.delete(key);
  }
}

// ---- grouping issuers ----

interface CrlGroup {
  members: IssuerCert[];
  /** The member that signs the group's CRL (crl-signing usage; the default issuer preferred). */
  signer: IssuerCert | null;
  crlId: string;
}

interface Plan {
  access: KeyAccess;
  config: CrlConfig;
  all: IssuerEntry[];
  defaultId: string;
  /** Issuers holding a key, parsed (the only ones a revoked certificate can be placed under). */
  keyed: IssuerCert[];
  groups: CrlGroup[];
  groupOf: Map<string, CrlGroup>;
  warnings: string[];
}

async function plan(storage: Storage, state: CrlState, access: KeyAccess): Promise<Plan> {
  const config = await loadCrlConfig(storage);
  const all = await loadAllIssuers(storage);
  const defaultId = (await issuersConfig(storage)).default;
  const keyed = parsedIssuers(all.filter((e) => e.keyId !== ''));
  const byKeySubject = new Map<string, IssuerCert[]>();
  for (const i of keyed) {
    const k = `${i.entry.keyId}|${[...i.cert.subjectDer].join(',')}`;
    byKeySubject.set(k, [...(byKeySubject.get(k) ?? []), i]);
  }
  const groups: CrlGroup[] = [];
  const groupOf = new Map<string, CrlGroup>();
  const warnings: string[] = [];
  for (const members of byKeySubject.values()) {
    const signing = members.filter((m) => m.entry.usage.includes('crl-signing'));
    const signer = signing.find((m) => m.entry.id === defaultId) ?? signing[0] ?? null;
    const existing = members.map((m) => state.issuerCrl[m.entry.id]).find((id) => id);
    if (!signer) {
      warnings.push(
        `Issuer equivalency set with associated keys lacked an issuer with CRL Signing KeyUsage; refusing to rebuild CRL for this group of issuers: ${members.map((m) => m.entry.id).join(',')}`,
      );
    }
    const group: CrlGroup = { members, signer, crlId: existing ?? (signer ? randomUUID() : '') };
    groups.push(group);
    for (const m of members) groupOf.set(m.entry.id, group);
  }
  return { access, config, all, defaultId, keyed, groups, groupOf, warnings };
}

/** The group an entry goes on: its issuer's, else (unknown issuer) the default issuer's. */
async function placeEntry(storage: Storage, p: Plan, e: RevokedEntry): Promise<CrlGroup | undefined> {
  let group = e.issuerId ? p.groupOf.get(e.issuerId) : undefined;
  if (!group) {
    // The recorded issuer is gone (or was never known): find the signer again, and remember it.
    let found: IssuerCert | null = null;
    try {
      found = await signerOf(parseStoredCert(e.certificate), p.keyed);
    } catch {
      found = null;
    }
    if (found) {
      group = p.groupOf.get(found.entry.id);
      await saveRevoked(storage, { ...e, issuerId: found.entry.id });
    } else {
      group = p.groupOf.get(p.defaultId);
    }
  }
  return group;
}

/** An issuer's own certificate recorded as revoked (issuer/:ref/revoke) is not put on CRLs from here. */
function isIssuerItself(p: Plan, e: RevokedEntry): boolean {
  return p.keyed.some((i) => i.cert.serial === e.serial && bytesEqual(i.cert.der, fromBase64(e.certificate) ?? new Uint8Array(0)));
}

class EntrySets {
  private readonly sets = new Map<CrlGroup, Map<string, CrlEntry>>();
  add(group: CrlGroup, serial: string, revocationTime: Date): void {
    let m = this.sets.get(group);
    if (!m) this.sets.set(group, (m = new Map()));
    if (!m.has(serial)) m.set(serial, { serial, revocationTime });
  }
  of(group: CrlGroup): CrlEntry[] {
    return [...(this.sets.get(group)?.values() ?? [])];
  }
}

const entryTime = (e: RevokedEntry): Date => (e.revocationTimeNanos ? new Date(e.revocationTimeNanos) : new Date(e.revocationTime * 1000));

function checkLimit(config: CrlConfig, count: number): void {
  if (config.maxCrlEntries === -1) return;
  const limit = config.maxCrlEntries > 0 ? config.maxCrlEntries : DEFAULT_MAX_CRL_ENTRIES;
  if (count > limit) throw new CrlBuildError(`error building CRL: revocation list size (${count}) exceeds configured maximum (${limit})`);
}

/** A CRL build failure: Vault reports it as "Error during CRL building: ..." (400). */
export class CrlBuildError extends CofferError {
  constructor(message: string) {
    super(400, [`Error during CRL building: ${message}`]);
  }
}

interface Built {
  group: CrlGroup;
  der: Uint8Array;
  number: number;
}

/** The signer of an issuer's CRLs: its key with its revocation_signature_algorithm (or the key's default). */
export async function crlSigner(storage: Storage, issuer: IssuerEntry, access: KeyAccess = LOCAL_ONLY): Promise<Signer> {
  const keyEntry = issuer.keyId ? await loadKey(storage, issuer.keyId) : null;
  if (!keyEntry) throw new CrlBuildError(`could not fetch the CA certificate: issuer ${issuer.id} has no key`);
  const alg = issuer.revocationSignatureAlgorithm;
  return await keySigner(access, keyEntry, alg ? { goName: alg } : { signatureBits: 0, usePss: false });
}

async function sign(storage: Storage, p: Plan, group: CrlGroup, entries: CrlEntry[], now: number, number: number, deltaBase?: number): Promise<Uint8Array> {
  const s = group.signer!;
  const signer = await crlSigner(storage, s.entry, p.access);
  let freshestCrl: string[] | undefined;
  if (deltaBase === undefined) {
    try {
      const dps = (await issuerAia(storage, s.entry)).deltaCrlDistributionPoints;
      if (dps.length > 0) freshestCrl = dps;
    } catch {
      freshestCrl = undefined;
    }
  }
  return await buildCrl(
    {
      issuerDer: s.cert.subjectDer,
      issuerSkid: s.cert.skid ?? (await subjectKeyId(s.cert.spki)),
      signer,
      thisUpdate: new Date(now),
      nextUpdate: new Date(now + crlDurations(p.config).expiry * 1000),
      number: BigInt(number),
      ...(deltaBase !== undefined ? { deltaBase: BigInt(deltaBase) } : {}),
      ...(freshestCrl ? { freshestCrl } : {}),
    },
    entries,
  );
}

/**
 * Rebuilds every complete CRL (and, with delta CRLs on, an empty delta after each), as Vault's
 * rebuild. `force` signs even when CRLs are disabled (then empty). Everything is computed before
 * anything is written, so a failure leaves the stored CRLs as they were. Returns warnings.
 */
export async function rebuildCrls(storage: Storage, now: number, force: boolean, access: KeyAccess = LOCAL_ONLY): Promise<string[]> {
  const state = await loadCrlState(storage);
  const p = await plan(storage, state, access);
  const pending = await loadPending(storage);
  if (p.config.disable && !force) {
    // Vault keeps the one empty CRL signed when CRLs were disabled; nothing to rebuild.
    await savePending(storage, { ...pending, complete: false, force: false });
    return [];
  }
  const sets = new EntrySets();
  if (!p.config.disable) {
    for await (const page of revokedPages(storage)) {
      for (const e of page) {
        if (isIssuerItself(p, e)) continue;
        const group = await placeEntry(storage, p, e);
        if (group?.signer) sets.add(group, e.serial, entryTime(e));
      }
    }
    // A revoked issuer goes on the CRL of every other issuer whose key signed it.
    for (const r of parsedIssuers(p.all.filter((e) => e.revoked))) {
      for (const o of p.keyed) {
        if (o.entry.id === r.entry.id) continue;
        const group = p.groupOf.get(o.entry.id);
        if (!group?.signer || !(await signerOf(r.cert, [o]))) continue;
        sets.add(group, r.cert.serial, r.entry.revocationTimeNanos ? new Date(r.entry.revocationTimeNanos) : new Date(r.entry.revocationTime * 1000));
      }
    }
  }

  const built: Built[] = [];
  for (const group of p.groups) {
    if (!group.signer) continue;
    const entries = sets.of(group);
    checkLimit(p.config, entries.length);
    const number = state.numbers[group.crlId] ?? 1;
    built.push({ group, number, der: await sign(storage, p, group, entries, now, number) });
  }

  // Nothing failed: store it all.
  for (const b of built) {
    await writeCrl(storage, b.group.crlId, 'complete', b.der, { builtAt: now, number: b.number });
    state.numbers[b.group.crlId] = b.number + 1;
    state.lastComplete[b.group.crlId] = b.number;
    for (const m of b.group.members) state.issuerCrl[m.entry.id] = b.group.crlId;
  }
  await forgetRemovedIssuers(storage, state, p.all);
  state.fingerprint = issuerFingerprint(p.all, p.defaultId);
  state.nextUpdate = built.length > 0 ? now + crlDurations(p.config).expiry * 1000 : 0;
  state.lastError = '';
  await clearDeltaLog(storage);
  if (p.config.enableDelta && !p.config.disable) {
    // The new complete CRLs hold everything: the deltas start over, empty.
    for (const b of built) await buildDeltaFor(storage, p, state, b.group, [], now);
    state.lastDeltaBuild = now;
  }
  await saveCrlState(storage, state);
  await savePending(storage, { complete: false, force: false, delta: false });
  return p.warnings;
}

async function buildDeltaFor(storage: Storage, p: Plan, state: CrlState, group: CrlGroup, entries: CrlEntry[], now: number): Promise<void> {
  const number = state.numbers[group.crlId] ?? 1;
  const base = state.lastComplete[group.crlId] ?? number - 1;
  const der = await sign(storage, p, group, entries, now, number, base);
  await writeCrl(storage, group.crlId, 'delta', der, { builtAt: now, number });
  state.numbers[group.crlId] = number + 1;
}

/** Drops CRL ids no remaining issuer uses, with their stored CRLs. */
async function forgetRemovedIssuers(storage: Storage, state: CrlState, all: IssuerEntry[]): Promise<void> {
  const ids = new Set(all.map((e) => e.id));
  for (const issuerId of Object.keys(state.issuerCrl)) if (!ids.has(issuerId)) delete state.issuerCrl[issuerId];
  const used = new Set(Object.values(state.issuerCrl));
  for (const crlId of Object.keys(state.numbers)) {
    if (used.has(crlId)) continue;
    delete state.numbers[crlId];
    delete state.lastComplete[crlId];
    await deleteCrlData(storage, crlId);
  }
}

/**
 * Rebuilds the delta CRLs from the delta log (revocations since the last complete CRL). Returns
 * warnings; a no-op when delta CRLs are off or CRLs are disabled.
 */
export async function rebuildDeltaCrls(storage: Storage, now: number, access: KeyAccess = LOCAL_ONLY): Promise<string[]> {
  const state = await loadCrlState(storage);
  const p = await plan(storage, state, access);
  if (!p.config.enableDelta || p.config.disable) return [];
  const sets = new EntrySets();
  for (const serial of await deltaLogSerials(storage)) {
    const e = await loadRevoked(storage, serial);
    if (!e || isIssuerItself(p, e)) continue;
    const group = await placeEntry(storage, p, e);
    if (group?.signer) sets.add(group, e.serial, entryTime(e));
  }
  const built: { group: CrlGroup; entries: CrlEntry[] }[] = [];
  for (const group of p.groups) {
    // A group without a complete CRL yet gets one from the next complete build first.
    if (!group.signer || state.lastComplete[group.crlId] === undefined) continue;
    const entries = sets.of(group);
    checkLimit(p.config, entries.length);
    built.push({ group, entries });
  }
  for (const b of built) await buildDeltaFor(storage, p, state, b.group, b.entries, now);
  state.lastDeltaBuild = now;
  await saveCrlState(storage, state);
  const pending = await loadPending(storage);
  await savePending(storage, { ...pending, delta: false });
  return p.warnings;
}

/** Whether the complete CRLs must be rebuilt before being served. */
async function staleness(storage: Storage, state: CrlState): Promise<{ stale: boolean; force: boolean; pending: CrlPending }> {
  const pending = await loadPending(storage);
  const all = await loadAllIssuers(storage);
  const changed = issuerFingerprint(all, (await issuersConfig(storage)).default) !== state.fingerprint;
  return { stale: pending.complete || pending.force || changed, force: pending.force || changed, pending };
}

/**
 * Brings the complete CRLs up to date if a revocation or an issuer change made them stale (CRL
 * reads call this: they are "writing reads"). A failed build keeps serving the previous CRLs.
 */
export async function freshenCrls(storage: Storage, now: number, access: KeyAccess = LOCAL_ONLY): Promise<void> {
  const state = await loadCrlState(storage);
  const { stale, force } = await staleness(storage, state);
  if (!stale) return;
  try {
    await rebuildCrls(storage, now, force, access);
  } catch (e) {
    e = asCofferError(e);
    if (!(e instanceof CofferError)) throw e;
    await saveCrlState(storage, { ...(await loadCrlState(storage)), lastError: e.errors.join('; ') });
  }
}

/**
 * The CRL part of the mount's periodic work: stale CRLs, auto-rebuild before expiry (grace
 * period), and delta CRLs once delta_rebuild_interval has passed since the last. Returns when it
 * wants to run next (ms) or null.
 */
export async function crlPeriodic(storage: Storage, now: number, access: KeyAccess = LOCAL_ONLY): Promise<number | null> {
  const config = await loadCrlConfig(storage);
  const d = crlDurations(config);
  let state = await loadCrlState(storage);
  const { stale, force } = await staleness(storage, state);
  const rebuildDue = config.autoRebuild && !config.disable && state.nextUpdate > 0 && now >= state.nextUpdate - d.grace * 1000;
  try {
    if (stale || rebuildDue) await rebuildCrls(storage, now, force, access);
  } catch (e) {
    e = asCofferError(e);
    if (!(e instanceof CofferError)) throw e;
    await recordBackgroundFailure(storage, e);
    return null;
  }
  state = await loadCrlState(storage);
  let next: number | null = null;
  if (config.autoRebuild && !config.disable && state.nextUpdate > 0) next = state.nextUpdate - d.grace * 1000;
  if (config.enableDelta && !config.disable && (await loadPending(storage)).delta) {
    const due = state.lastDeltaBuild + d.deltaInterval * 1000;
    if (now >= due) {
      try {
        await rebuildDeltaCrls(storage, now, access);
      } catch (e) {
        e = asCofferError(e);
        if (!(e instanceof CofferError)) throw e;
        await recordBackgroundFailure(storage, e);
      }
    } else {
      next = next === null ? due : Math.min(next, due);
    }
  }
  return next;
}

/**
 * A background build failed: nothing was written (builds write only once everything is signed),
 * the pending flags still ask for the rebuild, and the error is kept and logged, as no request
 * is there to answer with it.
 */
async function recordBackgroundFailure(storage: Storage, e: CofferError): Promise<void> {
  const message = e.errors.join('; ');
  console.error(`PKI: background CRL rebuild failed: ${message}`);
  await saveCrlState(storage, { ...(await loadCrlState(storage)), lastError: message });
}

/** The CRL id serving an issuer, or '' when it has none (no key, no CRL-signing issuer in its set). */
export async function crlIdOf(storage: Storage, issuerId: string): Promise<string> {
  return (await loadCrlState(storage)).issuerCrl[issuerId] ?? '';
}

/** Rebuild problems as Vault words them in a response's warnings. */
export const rebuildWarnings = (problems: string[]): string[] => problems.map((w, i) => `Warning ${i + 1} during CRL rebuild: ${w}`);

/** rebuildCrls for a request: any 4xx during the build becomes Vault's "Error during CRL building". */
export async function rebuildCrlsOrFail(storage: Storage, now: number, force: boolean, access: KeyAccess = LOCAL_ONLY): Promise<string[]> {
  try {
    return await rebuildCrls(storage, now, force, access);
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError && !(e instanceof CrlBuildError)) throw new CrlBuildError(e.errors.join('; '));
    throw e;
  }
}

/** crl/rotate: rebuilds the complete CRLs now (forced when issuers changed or a force is pending). */
export async function rotateCrls(storage: Storage, now: number, access: KeyAccess = LOCAL_ONLY): Promise<string[]> {
  const { force } = await staleness(storage, await loadCrlState(storage));
  return await rebuildCrlsOrFail(storage, now, force, access);
}

/** crl/rotate-delta: brings the complete CRLs up to date, then rebuilds the delta CRLs now. */
export async function rotateDeltaCrls(storage: Storage, now: number, access: KeyAccess = LOCAL_ONLY): Promise<string[]> {
  await freshenCrls(storage, now, access);
  try {
    return await rebuildDeltaCrls(storage, now, access);
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError && !(e instanceof CrlBuildError)) throw new CrlBuildError(e.errors.join('; '));
    throw e;
  }
}
