// tidy, tidy-status, tidy-cancel and config/auto-tidy (reference §1.12). The work itself runs in
// the mount's periodic work (tidy.ts); these paths start, stop, show and schedule it.

import type { LogicalRequest, LogicalResponse, PathDef } from '../../../framework/backend';
import { DurationError, formatGoDuration, parseDurationSeconds } from '../../../framework/duration';
import { badRequest } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { toHex, utf8 } from '../../../crypto/encoding';
import {
  ANY_TIDY_CONFIG,
  anyTidyEnabled,
  cancelTidy,
  isRunning,
  lastAutoTidy,
  loadAutoTidy,
  loadTidyRun,
  saveAutoTidy,
  setLastAutoTidy,
  startTidy,
  storedCounts,
  tidyStatusView,
  autoTidyView,
  type TidyParams,
  type TidyRun,
} from '../tidy';

const bool = (description: string) => ({ type: 'bool', description }) as const;

const TIDY_FIELDS: FieldSchemas = {
  tidy_cert_store: bool('Remove expired certificates from the certificate store'),
  tidy_revoked_certs: bool('Remove expired certificates from the revocation list'),
  tidy_revocation_list: bool('Deprecated alias of tidy_revoked_certs'),
  tidy_revoked_cert_issuer_associations: bool('Associate revoked certificates with their issuers'),
  tidy_expired_issuers: bool('Remove issuers expired longer than issuer_safety_buffer'),
  tidy_move_legacy_ca_bundle: bool('Move the legacy CA bundle (nothing to move in Coffer)'),
  tidy_revocation_queue: bool('Enterprise cross-cluster revocation queue (nothing to tidy here)'),
  tidy_cross_cluster_revoked_certs: bool('Enterprise cross-cluster revocations (nothing to tidy here)'),
  tidy_acme: bool('Remove unused ACME accounts and orders'),
  tidy_cert_metadata: bool('Enterprise certificate metadata'),
  tidy_cmpv2_nonce_store: bool('CMPv2 nonces'),
  safety_buffer: { type: 'signed-duration', description: 'How long past NotAfter a certificate is kept', default: 72 * 3600 },
  issuer_safety_buffer: { type: 'signed-duration', description: 'How long past NotAfter an issuer is kept', default: 365 * 24 * 3600 },
  revocation_queue_safety_buffer: { type: 'signed-duration', description: 'Revocation queue safety buffer', default: 48 * 3600 },
  acme_account_safety_buffer: { type: 'signed-duration', description: 'ACME account safety buffer', default: 30 * 24 * 3600 },
  pause_duration: { type: 'string', description: 'Pause between two tidied certificates', default: '0s' },
};

/** A deterministic id for this mount's backend (Vault's internal_backend_uuid), from its accessor. */
async function backendUuid(req: LogicalRequest): Promise<string> {
  const h = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(`pki-backend:${req.mountAccessor}`))));
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

async function statusView(req: LogicalRequest, run: TidyRun | null): Promise<Record<string, unknown>> {
  const auto = await loadAutoTidy(req.storage);
  return tidyStatusView(run, {
    backendUuid: await backendUuid(req),
    lastAutoTidy: await lastAutoTidy(req.storage),
    counts: auto.maintainStoredCertificateCounts ? await storedCounts(req.storage) : null,
  });
}

function pauseSeconds(raw: string, parseError: (why: string) => string): number {
  let secs: number;
  try {
    secs = parseDurationSeconds(raw);
  } catch (e) {
    throw badRequest(parseError(e instanceof DurationError ? e.message : String(e)));
  }
  if (secs < 0) throw badRequest('received invalid, negative pause_duration');
  return secs;
}

async function tidy(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const params: TidyParams = {
    tidyCertStore: f.get<boolean>('tidy_cert_store'),
    tidyRevokedCerts: f.get<boolean>('tidy_revoked_certs') || f.get<boolean>('tidy_revocation_list'),
    tidyRevokedCertIssuerAssociations: f.get<boolean>('tidy_revoked_cert_issuer_associations'),
    tidyExpiredIssuers: f.get<boolean>('tidy_expired_issuers'),
    tidyMoveLegacyCaBundle: f.get<boolean>('tidy_move_legacy_ca_bundle'),
    tidyRevocationQueue: f.get<boolean>('tidy_revocation_queue'),
    tidyCrossClusterRevokedCerts: f.get<boolean>('tidy_cross_cluster_revoked_certs'),
    tidyAcme: f.get<boolean>('tidy_acme'),
    tidyCertMetadata: f.get<boolean>('tidy_cert_metadata'),
    tidyCmpv2NonceStore: f.get<boolean>('tidy_cmpv2_nonce_store'),
    safetyBuffer: f.get<number>('safety_buffer'),
    issuerSafetyBuffer: f.get<number>('issuer_safety_buffer'),
    revocationQueueSafetyBuffer: f.get<number>('revocation_queue_safety_buffer'),
    acmeAccountSafetyBuffer: f.get<number>('acme_account_safety_buffer'),
    pauseDuration: 0,
  };
  if (params.safetyBuffer < 1) throw badRequest('safety_buffer must be greater than zero');
  if (params.issuerSafetyBuffer < 1) throw badRequest('issuer_safety_buffer must be greater than zero');
  if (params.revocationQueueSafetyBuffer < 1) throw badRequest('revocation_queue_safety_buffer must be greater than zero');
  if (params.acmeAccountSafetyBuffer < 1) throw badRequest('acme_account_safety_buffer must be greater than zero');
  const pause = f.get<string>('pause_duration');
  if (pause !== '') params.pauseDuration = pauseSeconds(pause, (why) => `Error parsing pause_duration: ${why}`);
  if (params.tidyCertMetadata) throw badRequest('certificate metadata is only supported on Vault Enterprise');

  if (isRunning(await loadTidyRun(req.storage))) return { warnings: ['Tidy operation already in progress.'] };
  const now = Date.now();
  await startTidy(req.storage, params, now);
  req.wakeAt?.(now);
  const warning = anyTidyEnabled(params)
    ? "Tidy operation successfully started. Any information from the operation will be printed to Vault's server logs."
    : `Manual tidy requested but no tidy operations were set. Enable at least one tidy operation to be run (${ANY_TIDY_CONFIG}).`;
  return { warnings: [warning], status: 202 };
}

async function cancel(req: LogicalRequest): Promise<LogicalResponse> {
  if (!isRunning(await loadTidyRun(req.storage))) {
    return { warnings: ['Tidy operation cannot be cancelled as none is currently running.'] };
  }
  const run = await cancelTidy(req.storage);
  req.wakeAt?.(Date.now());
  return { data: await statusView(req, run) };
}

/**
 * A duration field in seconds that must be at least one second. `label` is the name Vault's
 * message uses (for issuer_safety_buffer it says safety_buffer).
 */
function atLeastOneSecond(f: FieldData, name: string, label = name): number | undefined {
  if (!f.has(name)) return undefined;
  const v = f.get<number>(name);
  if (v < 1) throw badRequest(`given ${label} must be at least one second; got: ${v}`);
  return v;
}

async function writeAutoTidy(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const c = await loadAutoTidy(req.storage);
  const wasEnabled = c.enabled;
  if (f.has('enabled')) c.enabled = f.get<boolean>('enabled');
  for (const [name, key] of [
    ['min_startup_backoff_duration', 'minStartupBackoffDuration'],
    ['max_startup_backoff_duration', 'maxStartupBackoffDuration'],
  ] as const) {
    if (!f.has(name)) continue;
    const v = f.get<number>(name);
    if (v < 1) throw badRequest(`${name} must be at least 1 second: parsed: ${formatGoDuration(v)}`);
    c[key] = v;
  }
  if (c.minStartupBackoffDuration > c.maxStartupBackoffDuration) {
    throw badRequest(
      `max_startup_backoff_duration ${formatGoDuration(c.maxStartupBackoffDuration)} must be greater or equal to min_startup_backoff_duration ${formatGoDuration(c.minStartupBackoffDuration)}`,
    );
  }
  if (f.has('interval_duration')) {
    const v = f.get<number>('interval_duration');
    if (v < 0) throw badRequest(`given interval_duration must be greater than or equal to zero seconds; got: ${v}`);
    c.intervalDuration = v;
  }
  const flags: [string, keyof TidyParams][] = [
    ['tidy_cert_store', 'tidyCertStore'],
    ['tidy_revoked_certs', 'tidyRevokedCerts'],
    ['tidy_revoked_cert_issuer_associations', 'tidyRevokedCertIssuerAssociations'],
    ['tidy_expired_issuers', 'tidyExpiredIssuers'],
    ['tidy_move_legacy_ca_bundle', 'tidyMoveLegacyCaBundle'],
    ['tidy_revocation_queue', 'tidyRevocationQueue'],
    ['tidy_cross_cluster_revoked_certs', 'tidyCrossClusterRevokedCerts'],
    ['tidy_acme', 'tidyAcme'],
    ['tidy_cmpv2_nonce_store', 'tidyCmpv2NonceStore'],
  ];
  for (const [name, key] of flags) if (f.has(name)) (c as unknown as Record<string, unknown>)[key] = f.get<boolean>(name);
  c.safetyBuffer = atLeastOneSecond(f, 'safety_buffer') ?? c.safetyBuffer;
  if (f.has('pause_duration')) c.pauseDuration = pauseSeconds(f.get<string>('pause_duration'), (why) => `unable to parse given pause_duration: ${why}`);
  c.issuerSafetyBuffer = atLeastOneSecond(f, 'issuer_safety_buffer', 'safety_buffer') ?? c.issuerSafetyBuffer;
  c.revocationQueueSafetyBuffer = atLeastOneSecond(f, 'revocation_queue_safety_buffer') ?? c.revocationQueueSafetyBuffer;
  c.acmeAccountSafetyBuffer = atLeastOneSecond(f, 'acme_account_safety_buffer') ?? c.acmeAccountSafetyBuffer;
  if (f.has('tidy_cert_metadata')) {
    c.tidyCertMetadata = f.get<boolean>('tidy_cert_metadata');
    if (c.tidyCertMetadata) throw badRequest('certificate metadata is only supported on Vault Enterprise');
  }
  if (c.enabled && !anyTidyEnabled(c)) {
    throw badRequest(`Auto-tidy enabled but no tidy operations were requested. Enable at least one tidy operation to be run (${ANY_TIDY_CONFIG}).`);
  }
  if (f.has('maintain_stored_certificate_counts')) c.maintainStoredCertificateCounts = f.get<boolean>('maintain_stored_certificate_counts');
  if (f.has('publish_stored_certificate_count_metrics')) c.publishStoredCertificateCountMetrics = f.get<boolean>('publish_stored_certificate_count_metrics');
  if (c.publishStoredCertificateCountMetrics && !c.maintainStoredCertificateCounts) {
    throw badRequest(
      'Can not publish a running storage metrics count to metrics without first maintaining that count.  Enable `maintain_stored_certificate_counts` to enable `publish_stored_certificate_count_metrics`.',
    );
  }
  await saveAutoTidy(req.storage, c);
  const now = Date.now();
  // Turning auto-tidy on starts its interval now, as Vault does.
  if (c.enabled && !wasEnabled) await setLastAutoTidy(req.storage, now);
  if (c.enabled && c.intervalDuration > 0) req.wakeAt?.((await lastAutoTidy(req.storage)) + c.intervalDuration * 1000);
  return { data: autoTidyView(c) };
}

export function tidyPaths(): PathDef[] {
  return [
    {
      pattern: 'tidy/?',
      fields: TIDY_FIELDS,
      summary: 'Tidy up the certificate store and the revocation list.',
      operations: { update: tidy },
    },
    {
      pattern: 'tidy-status',
      summary: 'The state of the current or last tidy operation.',
      operations: { read: async (req) => ({ data: await statusView(req, await loadTidyRun(req.storage)) }) },
    },
    {
      pattern: 'tidy-cancel',
      summary: 'Cancel the running tidy operation.',
      operations: { update: cancel },
    },
    {
      pattern: 'config/auto-tidy',
      fields: {
        ...TIDY_FIELDS,
        enabled: bool('Run tidy automatically'),
        interval_duration: { type: 'signed-duration', description: 'Time between automatic tidy runs', default: 12 * 3600 },
        min_startup_backoff_duration: { type: 'signed-duration', description: 'Least delay of auto-tidy after startup', default: 300 },
        max_startup_backoff_duration: { type: 'signed-duration', description: 'Longest delay of auto-tidy after startup', default: 900 },
        maintain_stored_certificate_counts: bool('Keep counts of stored and revoked certificates'),
        publish_stored_certificate_count_metrics: bool('Publish those counts as metrics'),
      },
      summary: 'Configure automatic tidy.',
      operations: {
        read: async (req) => ({ data: autoTidyView(await loadAutoTidy(req.storage)) }),
        update: writeAutoTidy,
      },
    },
  ];
}

