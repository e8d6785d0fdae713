// Tidy (reference §1.12): removing expired certificates and revocation entries, fixing revoked
// entries' issuer associations and removing long-expired issuers. A tidy runs in the mount's
// periodic work (its Durable Object alarm), a page of storage keys per run, with its progress
// kept in storage, so it survives restarts, never holds one huge transaction and can be
// cancelled between pages. Auto-tidy starts one every interval_duration.

import { formatGoDuration, formatRFC3339Nano, GO_ZERO_TIME } from '../../framework/duration';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { parsedIssuers, parseStoredCert, signerOf, type IssuerCert } from './certs';
import { loadCrlConfig } from './crl-config';
import { crlPeriodic } from './crl-store';
import type { KeyAccess } from './signers';
import { colonSerial, markCrlsStale, REVOKED_PREFIX, saveRevoked, type RevokedEntry } from './revoked-store';
import { CERTS_PREFIX, deleteCert, deleteIssuer, issuersConfig, loadAllIssuers, type CertEntry } from './store';

/** What one tidy run does (the POST tidy parameters; auto-tidy's configuration holds the same). */
export interface TidyParams {
  tidyCertStore: boolean;
  tidyRevokedCerts: boolean;
  tidyRevokedCertIssuerAssociations: boolean;
  tidyExpiredIssuers: boolean;
  tidyMoveLegacyCaBundle: boolean;
  tidyRevocationQueue: boolean;
  tidyCrossClusterRevokedCerts: boolean;
  tidyAcme: boolean;
  tidyCertMetadata: boolean;
  tidyCmpv2NonceStore: boolean;
  /** Seconds. */
  safetyBuffer: number;
  issuerSafetyBuffer: number;
  revocationQueueSafetyBuffer: number;
  acmeAccountSafetyBuffer: number;
  /** Seconds to wait between two entries (0: go through a page at a time). */
  pauseDuration: number;
}

export const DEFAULT_TIDY_PARAMS: Readonly<TidyParams> = {
  tidyCertStore: false,
  tidyRevokedCerts: false,
  tidyRevokedCertIssuerAssociations: false,
  tidyExpiredIssuers: false,
  tidyMoveLegacyCaBundle: false,
  tidyRevocationQueue: false,
  tidyCrossClusterRevokedCerts: false,
  tidyAcme: false,
  tidyCertMetadata: false,
  tidyCmpv2NonceStore: false,
  safetyBuffer: 72 * 3600,
  issuerSafetyBuffer: 365 * 24 * 3600,
  revocationQueueSafetyBuffer: 48 * 3600,
  acmeAccountSafetyBuffer: 30 * 24 * 3600,
  pauseDuration: 0,
};

export interface AutoTidyConfig extends TidyParams {
  enabled: boolean;
  /** Seconds between the end of one auto-tidy and the start of the next. */
  intervalDuration: number;
  minStartupBackoffDuration: number;
  maxStartupBackoffDuration: number;
  maintainStoredCertificateCounts: boolean;
  publishStoredCertificateCountMetrics: boolean;
}

export const DEFAULT_AUTO_TIDY: Readonly<AutoTidyConfig> = {
  ...DEFAULT_TIDY_PARAMS,
  enabled: false,
  intervalDuration: 12 * 3600,
  minStartupBackoffDuration: 300,
  maxStartupBackoffDuration: 900,
  maintainStoredCertificateCounts: false,
  publishStoredCertificateCountMetrics: false,
};

export type TidyState = 'Inactive' | 'Running' | 'Finished' | 'Error' | 'Cancelling' | 'Cancelled';
type Phase = 'certs' | 'revoked' | 'issuers' | 'done';

/** The current (or last) tidy run and where it is. */
export interface TidyRun {
  state: TidyState;
  params: TidyParams;
  error: string | null;
  /** RFC 3339. */
  timeStarted: string;
  timeFinished: string | null;
  message: string | null;
  certStoreDeletedCount: number;
  revokedCertDeletedCount: number;
  missingIssuerCertCount: number;
  phase: Phase;
  /** Last storage key handled in the phase. */
  after: string;
  /** Entries handled in the phase, and how many it had when it began. */
  index: number;
  total: number;
  /** ms: the next entry waits until then (pause_duration). */
  notBefore: number;
  /** Revocation entries went away: the CRLs need a rebuild at the end. */
  rebuildCrl: boolean;
}

const AUTO_TIDY_KEY = 'config/auto-tidy';
const RUN_KEY = 'tidy/status';
const LAST_AUTO_KEY = 'tidy/last-auto';
/** Entries handled per periodic run when no pause is asked for. */
export const TIDY_PAGE = 256;

export async function loadAutoTidy(storage: Storage): Promise<AutoTidyConfig> {
  return { ...DEFAULT_AUTO_TIDY, ...((await getJSON<Partial<AutoTidyConfig>>(storage, AUTO_TIDY_KEY)) ?? {}) };
}
export const saveAutoTidy = (storage: Storage, c: AutoTidyConfig): Promise<void> => putJSON(storage, AUTO_TIDY_KEY, c);

export const loadTidyRun = (storage: Storage): Promise<TidyRun | null> => getJSON<TidyRun>(storage, RUN_KEY);
const saveTidyRun = (storage: Storage, r: TidyRun): Promise<void> => putJSON(storage, RUN_KEY, r);

/** When a tidy last finished (or a manual one started, or auto-tidy was turned on), ms; 0: never. */
export async function lastAutoTidy(storage: Storage): Promise<number> {
  return (await getJSON<{ time: number }>(storage, LAST_AUTO_KEY))?.time ?? 0;
}
export const setLastAutoTidy = (storage: Storage, time: number): Promise<void> => putJSON(storage, LAST_AUTO_KEY, { time });

export const isRunning = (r: TidyRun | null): boolean => r?.state === 'Running' || r?.state === 'Cancelling';

/** Just the run parameters of an auto-tidy configuration. */
export function tidyParamsOf(c: TidyParams): TidyParams {
  const out = { ...DEFAULT_TIDY_PARAMS };
  for (const k of Object.keys(out) as (keyof TidyParams)[]) (out as Record<string, unknown>)[k] = c[k];
  return out;
}

export const anyTidyEnabled = (p: TidyParams): boolean =>
  p.tidyCertStore ||
  p.tidyRevokedCerts ||
  p.tidyRevokedCertIssuerAssociations ||
  p.tidyExpiredIssuers ||
  p.tidyMoveLegacyCaBundle ||
  p.tidyAcme ||
  p.tidyCrossClusterRevokedCerts ||
  p.tidyRevocationQueue ||
  p.tidyCertMetadata ||
  p.tidyCmpv2NonceStore;

export const ANY_TIDY_CONFIG =
  'tidy_cert_store / tidy_revoked_certs / tidy_revoked_cert_issuer_associations / tidy_expired_issuers / tidy_move_legacy_ca_bundle / tidy_revocation_queue / tidy_cross_cluster_revoked_certs / tidy_acme';

/** Starts a tidy run (the caller checked none is running); the periodic work carries it out. */
export async function startTidy(storage: Storage, params: TidyParams, now: number): Promise<TidyRun> {
  const run: TidyRun = {
    state: 'Running',
    params,
    error: null,
    timeStarted: formatRFC3339Nano(now),
    timeFinished: null,
    message: null,
    certStoreDeletedCount: 0,
    revokedCertDeletedCount: 0,
    missingIssuerCertCount: 0,
    phase: 'certs',
    after: '',
    index: 0,
    total: -1,
    notBefore: 0,
    rebuildCrl: false,
  };
  await saveTidyRun(storage, run);
  // As Vault: a manual tidy also restarts the auto-tidy interval.
  await setLastAutoTidy(storage, now);
  return run;
}

/** Asks a running tidy to stop; the next periodic run stops it between two entries. */
export async function cancelTidy(storage: Storage): Promise<TidyRun | null> {
  const run = await loadTidyRun(storage);
  if (!run || run.state !== 'Running') return run;
  run.state = 'Cancelling';
  await saveTidyRun(storage, run);
  return run;
}

const PHASES: Phase[] = ['certs', 'revoked', 'issuers', 'done'];

function phaseWanted(p: TidyParams, phase: Phase): boolean {
  switch (phase) {
    case 'certs':
      return p.tidyCertStore;
    case 'revoked':
      return p.tidyRevokedCerts || p.tidyRevokedCertIssuerAssociations;
    case 'issuers':
      return p.tidyExpiredIssuers;
    default:
      return true;
  }
}

const PHASE_PREFIX: Partial<Record<Phase, string>> = { certs: CERTS_PREFIX, revoked: REVOKED_PREFIX };

async function countKeys(storage: Storage, prefix: string): Promise<number> {
  let n = 0;
  let after = '';
  for (;;) {
    const keys = await storage.scan(prefix, after, 1000);
    if (keys.length === 0) return n;
    n += keys.length;
    after = keys[keys.length - 1];
  }
}

/** Moves the run to its next wanted phase. */
function advance(run: TidyRun): void {
  let i = PHASES.indexOf(run.phase) + 1;
  while (!phaseWanted(run.params, PHASES[i])) i++;
  run.phase = PHASES[i];
  run.after = '';
  run.index = 0;
  run.total = -1;
}

interface Context {
  storage: Storage;
  now: number;
  run: TidyRun;
  issuers: IssuerCert[];
  issuerIds: Set<string>;
}

async function tidyCertEntry(c: Context, key: string): Promise<void> {
  const e = await getJSON<CertEntry>(c.storage, key);
  const expiresAt = e ? (e.expiresAt ?? Math.floor(parseStoredCert(e.certificate).notAfter.getTime() / 1000)) : 0;
  if (!e || c.now / 1000 - expiresAt > c.run.params.safetyBuffer) {
    await c.storage.delete(key);
    c.run.certStoreDeletedCount++;
  }
}

async function tidyRevokedEntry(c: Context, key: string): Promise<void> {
  const { params } = c.run;
  const e = await getJSON<RevokedEntry>(c.storage, key);
  if (!e) {
    await c.storage.delete(key);
    c.run.revokedCertDeletedCount++;
    return;
  }
  let changed: RevokedEntry | null = null;
  if (params.tidyRevokedCertIssuerAssociations && !c.issuerIds.has(e.issuerId)) {
    c.run.missingIssuerCertCount++;
    let issuerId = '';
    try {
      issuerId = (await signerOf(parseStoredCert(e.certificate), c.issuers))?.entry.id ?? '';
    } catch {
      issuerId = '';
    }
    changed = { ...e, issuerId };
  }
  if (params.tidyRevokedCerts && c.now / 1000 - e.expiresAt > params.safetyBuffer) {
    await c.storage.delete(key);
    await deleteCert(c.storage, e.serial || colonSerial(key));
    c.run.revokedCertDeletedCount++;
    c.run.rebuildCrl = true;
    return;
  }
  if (changed) await saveRevoked(c.storage, changed);
}

/** Removes issuers expired longer than issuer_safety_buffer, except the default one. */
async function tidyIssuers(c: Context): Promise<void> {
  const { default: defaultId } = await issuersConfig(c.storage);
  for (const i of c.issuers) {
    if (c.now - i.cert.notAfter.getTime() <= c.run.params.issuerSafetyBuffer * 1000) continue;
    if (i.entry.id === defaultId) continue;
    await deleteIssuer(c.storage, i.entry.id);
    // Removing an issuer always warrants new CRLs (its CRL goes; its certs move to the default's).
    await markCrlsStale(c.storage, { complete: true });
  }
}

/** Handles up to `budget` entries of the run; returns false when the run has finished. */
async function step(c: Context, budget: number): Promise<boolean> {
  const { run, storage } = c;
  if (!phaseWanted(run.params, run.phase)) advance(run);
  while (budget > 0 && run.phase !== 'done') {
    if (run.phase === 'issuers') {
      await tidyIssuers(c);
      advance(run);
      continue;
    }
    const prefix = PHASE_PREFIX[run.phase]!;
    if (run.total < 0) run.total = await countKeys(storage, prefix);
    const keys = await storage.scan(prefix, run.after, budget);
    if (keys.length === 0) {
      advance(run);
      continue;
    }
    for (const key of keys) {
      run.message =
        run.phase === 'certs'
          ? `Tidying certificate store: checking entry ${run.index} of ${run.total}`
          : `Tidying revoked certificates: checking certificate ${run.index} of ${run.total}`;
      if (run.phase === 'certs') await tidyCertEntry(c, key);
      else await tidyRevokedEntry(c, key);
      run.after = key;
      run.index++;
      budget--;
    }
  }
  return run.phase !== 'done';
}

async function finish(storage: Storage, run: TidyRun, now: number): Promise<void> {
  run.state = 'Finished';
  run.timeFinished = formatRFC3339Nano(now);
  run.message = null;
  if (run.rebuildCrl && !(await loadCrlConfig(storage)).autoRebuild) await markCrlsStale(storage, { complete: true });
  await setLastAutoTidy(storage, now);
}

/** The tidy part of the periodic work. Returns when it wants to run next (ms) or null. */
export async function tidyPeriodic(storage: Storage, now: number): Promise<number | null> {
  let run = await loadTidyRun(storage);
  const auto = await loadAutoTidy(storage);
  if (!isRunning(run) && auto.enabled && auto.intervalDuration > 0) {
    const due = (await lastAutoTidy(storage)) + auto.intervalDuration * 1000;
    if (now < due) return due;
    run = await startTidy(storage, tidyParamsOf(auto), now);
  }
  if (!run || !isRunning(run)) return null;
  if (run.state === 'Cancelling') {
    run.state = 'Cancelled';
    run.timeFinished = formatRFC3339Nano(now);
    await saveTidyRun(storage, run);
    return await autoTidyDue(storage, auto);
  }
  if (now < run.notBefore) return run.notBefore;
  const issuers = parsedIssuers(await loadAllIssuers(storage));
  const c: Context = { storage, now, run, issuers, issuerIds: new Set(issuers.map((i) => i.entry.id)) };
  const pause = run.params.pauseDuration;
  let more: boolean;
  try {
    more = await step(c, pause > 0 ? 1 : TIDY_PAGE);
  } catch (e) {
    run.state = 'Error';
    run.error = e instanceof Error ? e.message : String(e);
    run.timeFinished = formatRFC3339Nano(now);
    await saveTidyRun(storage, run);
    return await autoTidyDue(storage, auto);
  }
  if (!more) {
    await finish(storage, run, now);
    await saveTidyRun(storage, run);
    return await autoTidyDue(storage, auto);
  }
  run.notBefore = pause > 0 ? now + pause * 1000 : 0;
  await saveTidyRun(storage, run);
  return pause > 0 ? run.notBefore : now;
}

async function autoTidyDue(storage: Storage, auto: AutoTidyConfig): Promise<number | null> {
  if (!auto.enabled || auto.intervalDuration <= 0) return null;
  return (await lastAutoTidy(storage)) + auto.intervalDuration * 1000;
}

const earliest = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b));

/**
 * The PKI mount's periodic work (Backend.periodic): tidy first (it may remove revocation entries
 * or issuers), then whatever the CRLs need. Idempotent; returns when to run next.
 */
export async function pkiPeriodic(storage: Storage, now: number, access: KeyAccess = { allowed: null }): Promise<number | null> {
  const tidyNext = await tidyPeriodic(storage, now);
  const crlNext = await crlPeriodic(storage, now, access);
  return earliest(tidyNext, crlNext);
}

// ---- response shapes ----

export function autoTidyView(c: AutoTidyConfig): Record<string, unknown> {
  return {
    enabled: c.enabled,
    interval_duration: c.intervalDuration,
    min_startup_backoff_duration: c.minStartupBackoffDuration,
    max_startup_backoff_duration: c.maxStartupBackoffDuration,
    tidy_cert_store: c.tidyCertStore,
    tidy_revoked_certs: c.tidyRevokedCerts,
    tidy_revoked_cert_issuer_associations: c.tidyRevokedCertIssuerAssociations,
    tidy_expired_issuers: c.tidyExpiredIssuers,
    tidy_move_legacy_ca_bundle: c.tidyMoveLegacyCaBundle,
    tidy_acme: c.tidyAcme,
    safety_buffer: c.safetyBuffer,
    issuer_safety_buffer: c.issuerSafetyBuffer,
    acme_account_safety_buffer: c.acmeAccountSafetyBuffer,
    pause_duration: formatGoDuration(c.pauseDuration),
    publish_stored_certificate_count_metrics: c.publishStoredCertificateCountMetrics,
    maintain_stored_certificate_counts: c.maintainStoredCertificateCounts,
    tidy_revocation_queue: c.tidyRevocationQueue,
    revocation_queue_safety_buffer: c.revocationQueueSafetyBuffer,
    tidy_cross_cluster_revoked_certs: c.tidyCrossClusterRevokedCerts,
    tidy_cert_metadata: c.tidyCertMetadata,
    tidy_cmpv2_nonce_store: c.tidyCmpv2NonceStore,
  };
}

export interface StatusExtras {
  backendUuid: string;
  lastAutoTidy: number;
  /** Stored counts when maintain_stored_certificate_counts is on. */
  counts: { certs: number; revoked: number } | null;
}

/** tidy-status (and tidy-cancel) data: every field, null where it does not apply. */
export function tidyStatusView(run: TidyRun | null, x: StatusExtras): Record<string, unknown> {
  const data: Record<string, unknown> = {
    safety_buffer: null,
    issuer_safety_buffer: null,
    revocation_queue_safety_buffer: null,
    acme_account_safety_buffer: null,
    tidy_cert_store: null,
    tidy_revoked_certs: null,
    tidy_revoked_cert_issuer_associations: null,
    tidy_expired_issuers: null,
    tidy_move_legacy_ca_bundle: null,
    tidy_revocation_queue: null,
    tidy_cross_cluster_revoked_certs: null,
    tidy_acme: null,
    tidy_cert_metadata: null,
    tidy_cmpv2_nonce_store: null,
    pause_duration: null,
    state: 'Inactive',
    error: null,
    time_started: null,
    time_finished: null,
    message: null,
    cert_store_deleted_count: null,
    revoked_cert_deleted_count: null,
    missing_issuer_cert_count: null,
    current_cert_store_count: x.counts?.certs ?? null,
    current_revoked_cert_count: x.counts?.revoked ?? null,
    internal_backend_uuid: x.backendUuid,
    revocation_queue_deleted_count: null,
    cross_revoked_cert_deleted_count: null,
    total_acme_account_count: null,
    acme_account_deleted_count: null,
    acme_account_revoked_count: null,
    acme_orders_deleted_count: null,
    cert_metadata_deleted_count: null,
    cmpv2_nonce_deleted_count: null,
    last_auto_tidy_finished: x.lastAutoTidy > 0 ? formatRFC3339Nano(x.lastAutoTidy) : GO_ZERO_TIME,
  };
  if (!run || run.state === 'Inactive') return data;
  const p = run.params;
  Object.assign(data, {
    safety_buffer: p.safetyBuffer,
    issuer_safety_buffer: p.issuerSafetyBuffer,
    revocation_queue_safety_buffer: p.revocationQueueSafetyBuffer,
    acme_account_safety_buffer: p.acmeAccountSafetyBuffer,
    tidy_cert_store: p.tidyCertStore,
    tidy_revoked_certs: p.tidyRevokedCerts,
    tidy_revoked_cert_issuer_associations: p.tidyRevokedCertIssuerAssociations,
    tidy_expired_issuers: p.tidyExpiredIssuers,
    tidy_move_legacy_ca_bundle: p.tidyMoveLegacyCaBundle,
    tidy_revocation_queue: p.tidyRevocationQueue,
    tidy_cross_cluster_revoked_certs: p.tidyCrossClusterRevokedCerts,
    tidy_acme: p.tidyAcme,
    tidy_cert_metadata: p.tidyCertMetadata,
    tidy_cmpv2_nonce_store: p.tidyCmpv2NonceStore,
    pause_duration: formatGoDuration(p.pauseDuration),
    state: run.state,
    time_started: run.timeStarted,
    message: run.message,
    cert_store_deleted_count: run.certStoreDeletedCount,
    revoked_cert_deleted_count: run.revokedCertDeletedCount,
    missing_issuer_cert_count: run.missingIssuerCertCount,
    revocation_queue_deleted_count: 0,
    cross_revoked_cert_deleted_count: 0,
    total_acme_account_count: 0,
    acme_account_deleted_count: 0,
    acme_account_revoked_count: 0,
    acme_orders_deleted_count: 0,
    cert_metadata_deleted_count: 0,
    cmpv2_nonce_deleted_count: 0,
  });
  if (run.state === 'Finished') {
    data.time_finished = run.timeFinished;
    data.message = null;
  } else if (run.state === 'Error') {
    data.time_finished = run.timeFinished;
    data.error = run.error;
  } else if (run.state === 'Cancelled') {
    data.time_finished = run.timeFinished;
  }
  return data;
}

/** Stored certificate and revocation counts (for maintain_stored_certificate_counts). */
export async function storedCounts(storage: Storage): Promise<{ certs: number; revoked: number }> {
  return { certs: await countKeys(storage, CERTS_PREFIX), revoked: await countKeys(storage, REVOKED_PREFIX) };
}
