// config/crl (reference §1.10): how long CRLs and OCSP answers are valid, whether CRLs are built
// at all, automatic rebuilding and delta CRLs. Durations are kept as the strings the operator gave
// ("72h"), as Vault returns them; reads always show every field, even before the first write.

import type { LogicalRequest, LogicalResponse, PathDef } from '../../framework/backend';
import { DurationError, formatGoDuration, parseDurationSeconds } from '../../framework/duration';
import { badRequest } from '../../framework/errors';
import type { FieldData } from '../../framework/fields';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { markCrlsStale } from './revoked-store';

export interface CrlConfig {
  expiry: string;
  disable: boolean;
  ocspDisable: boolean;
  ocspExpiry: string;
  autoRebuild: boolean;
  autoRebuildGracePeriod: string;
  enableDelta: boolean;
  deltaRebuildInterval: string;
  crossClusterRevocation: boolean;
  unifiedCrl: boolean;
  unifiedCrlOnExistingPaths: boolean;
  /** -1: no limit. */
  maxCrlEntries: number;
}

export const DEFAULT_MAX_CRL_ENTRIES = 100_000;

export const DEFAULT_CRL_CONFIG: Readonly<CrlConfig> = {
  expiry: '72h',
  disable: false,
  ocspDisable: false,
  ocspExpiry: '12h',
  autoRebuild: false,
  autoRebuildGracePeriod: '12h',
  enableDelta: false,
  deltaRebuildInterval: '15m',
  crossClusterRevocation: false,
  unifiedCrl: false,
  unifiedCrlOnExistingPaths: false,
  maxCrlEntries: DEFAULT_MAX_CRL_ENTRIES,
};

const CONFIG_KEY = 'config/crl';

export async function loadCrlConfig(storage: Storage): Promise<CrlConfig> {
  return { ...DEFAULT_CRL_CONFIG, ...((await getJSON<Partial<CrlConfig>>(storage, CONFIG_KEY)) ?? {}) };
}

/** A stored duration string in seconds (they were validated when written). */
export function durationOf(value: string): number {
  try {
    return parseDurationSeconds(value);
  } catch {
    return 0;
  }
}

/** The config's durations in seconds. */
export function crlDurations(c: CrlConfig): { expiry: number; ocspExpiry: number; grace: number; deltaInterval: number } {
  return {
    expiry: durationOf(c.expiry),
    ocspExpiry: durationOf(c.ocspExpiry),
    grace: durationOf(c.autoRebuildGracePeriod),
    deltaInterval: durationOf(c.deltaRebuildInterval),
  };
}

export function crlConfigView(c: CrlConfig): Record<string, unknown> {
  return {
    expiry: c.expiry,
    disable: c.disable,
    ocsp_disable: c.ocspDisable,
    ocsp_expiry: c.ocspExpiry,
    auto_rebuild: c.autoRebuild,
    auto_rebuild_grace_period: c.autoRebuildGracePeriod,
    enable_delta: c.enableDelta,
    delta_rebuild_interval: c.deltaRebuildInterval,
    cross_cluster_revocation: c.crossClusterRevocation,
    unified_crl: c.unifiedCrl,
    unified_crl_on_existing_paths: c.unifiedCrlOnExistingPaths,
    max_crl_entries: c.maxCrlEntries === 0 ? DEFAULT_MAX_CRL_ENTRIES : c.maxCrlEntries,
  };
}

/** Seconds of a duration field, or Vault's 400 naming the field. */
function parsedDuration(field: string, value: string): number {
  try {
    return parseDurationSeconds(value);
  } catch (e) {
    const why = e instanceof DurationError ? e.message : String(e);
    throw badRequest(`given ${field} could not be decoded: ${why}`);
  }
}

async function writeConfig(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const old = await loadCrlConfig(req.storage);
  const c: CrlConfig = { ...old };
  if (f.has('expiry')) {
    parsedDuration('expiry', f.get<string>('expiry'));
    c.expiry = f.get<string>('expiry');
  }
  if (f.has('disable')) c.disable = f.get<boolean>('disable');
  if (f.has('ocsp_disable')) c.ocspDisable = f.get<boolean>('ocsp_disable');
  if (f.has('ocsp_expiry')) {
    const secs = parsedDuration('ocsp_expiry', f.get<string>('ocsp_expiry'));
    if (secs < 0) throw badRequest(`ocsp_expiry must be greater than or equal to 0 got: ${formatGoDuration(secs)}`);
    c.ocspExpiry = f.get<string>('ocsp_expiry');
  }
  if (f.has('auto_rebuild')) c.autoRebuild = f.get<boolean>('auto_rebuild');
  if (f.has('auto_rebuild_grace_period')) {
    parsedDuration('auto_rebuild_grace_period', f.get<string>('auto_rebuild_grace_period'));
    c.autoRebuildGracePeriod = f.get<string>('auto_rebuild_grace_period');
  }
  if (f.has('enable_delta')) c.enableDelta = f.get<boolean>('enable_delta');
  if (f.has('delta_rebuild_interval')) {
    parsedDuration('delta_rebuild_interval', f.get<string>('delta_rebuild_interval'));
    c.deltaRebuildInterval = f.get<string>('delta_rebuild_interval');
  }
  if (f.has('cross_cluster_revocation')) c.crossClusterRevocation = f.get<boolean>('cross_cluster_revocation');
  if (f.has('unified_crl')) c.unifiedCrl = f.get<boolean>('unified_crl');
  if (f.has('unified_crl_on_existing_paths')) c.unifiedCrlOnExistingPaths = f.get<boolean>('unified_crl_on_existing_paths');
  if (f.has('max_crl_entries')) {
    // Vault keeps the old value for 0 and for negatives other than -1.
    const v = f.get<number>('max_crl_entries');
    if (v === -1 || v > 0) c.maxCrlEntries = v;
  }

  if (c.unifiedCrlOnExistingPaths && !c.unifiedCrl) throw badRequest('unified_crl_on_existing_paths cannot be enabled if unified_crl is disabled');
  const d = crlDurations(c);
  if (c.autoRebuild && d.grace >= d.expiry) {
    throw badRequest(
      `CRL auto-rebuilding grace period (${c.autoRebuildGracePeriod}) must be strictly shorter than CRL expiry (${c.expiry}) value when auto-rebuilding of CRLs is enabled`,
    );
  }
  if (c.enableDelta && d.deltaInterval >= d.expiry) {
    throw badRequest(
      `CRL delta rebuild window (${c.deltaRebuildInterval}) must be strictly shorter than CRL expiry (${c.expiry}) value when delta CRLs are enabled`,
    );
  }
  if (!c.autoRebuild) {
    if (c.enableDelta) throw badRequest('Delta CRLs cannot be enabled when auto rebuilding is disabled as the complete CRL is always regenerated!');
    if (c.crossClusterRevocation) {
      throw badRequest(
        'Global, cross-cluster revocation queue cannot be enabled when auto rebuilding is disabled as the local cluster may not have the certificate entry!',
      );
    }
  }
  // Coffer is the community edition: these enterprise features show in the config but stay off.
  if (c.crossClusterRevocation) throw badRequest('Global, cross-cluster revocation queue (cross_cluster_revocation) can only be enabled on Vault Enterprise.');
  if (c.unifiedCrl) throw badRequest('unified_crl can only be enabled on Vault Enterprise');

  await putJSON(req.storage, CONFIG_KEY, c);
  // As Vault: turning CRLs off (or on), leaving auto-rebuild or toggling deltas needs a new
  // complete CRL (disabled: a signed empty one), built by the next CRL read or periodic run.
  if (old.disable !== c.disable || (old.autoRebuild && !c.autoRebuild) || old.enableDelta !== c.enableDelta) {
    await markCrlsStale(req.storage, { complete: true, force: true });
    req.wakeAt?.(Date.now());
  } else if (c.autoRebuild) {
    // A shorter expiry or grace period may bring the scheduled rebuild forward.
    req.wakeAt?.(Date.now());
  }
  return { data: crlConfigView(c) };
}

export function crlConfigPaths(): PathDef[] {
  const str = (description: string) => ({ type: 'string', description }) as const;
  const bool = (description: string) => ({ type: 'bool', description }) as const;
  return [
    {
      pattern: 'config/crl',
      fields: {
        expiry: str('How long a generated CRL is valid (default 72h)'),
        disable: bool('Stop building CRLs (an empty CRL is served)'),
        ocsp_disable: bool('Answer every OCSP request with unauthorized'),
        ocsp_expiry: str('How long an OCSP response is valid (NextUpdate; default 12h)'),
        auto_rebuild: bool('Rebuild CRLs on a schedule instead of at every revocation'),
        auto_rebuild_grace_period: str('How long before expiry an automatic rebuild happens (default 12h)'),
        enable_delta: bool('Build delta CRLs between complete rebuilds (needs auto_rebuild)'),
        delta_rebuild_interval: str('Time between delta CRL rebuilds after a revocation (default 15m)'),
        cross_cluster_revocation: bool('Enterprise only'),
        unified_crl: bool('Enterprise only'),
        unified_crl_on_existing_paths: bool('Enterprise only'),
        max_crl_entries: { type: 'int', description: 'Most entries a CRL may hold (-1: no limit)' },
      },
      summary: 'Configure CRL and OCSP building.',
      operations: {
        read: async (req) => ({ data: crlConfigView(await loadCrlConfig(req.storage)) }),
        update: writeConfig,
      },
    },
  ];
}
