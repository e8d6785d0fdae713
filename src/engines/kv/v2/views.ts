// The wire shapes of KV v2 metadata: Go RFC3339Nano times ("" when unset), Go duration strings.

import { formatGoDuration, formatRFC3339Nano } from '../../../framework/duration';
import type { EngineConfig, KeyMeta, VersionRecord } from './model';

const time = (ms: number | null): string => (ms === null ? '' : formatRFC3339Nano(ms));

const versionTimes = (v: VersionRecord) => ({ created_time: time(v.created), deletion_time: time(v.deletion), destroyed: v.destroyed });

/** The version metadata object of data reads, writes and 404s. */
export function versionMetadata(meta: KeyMeta, version: number): Record<string, unknown> {
  const v = meta.versions[version];
  return { ...versionTimes(v), custom_metadata: meta.customMetadata, version };
}

/** GET metadata/<path>. */
export function metadataView(meta: KeyMeta): Record<string, unknown> {
  const versions: Record<string, unknown> = {};
  for (const [n, v] of Object.entries(meta.versions)) versions[n] = versionTimes(v);
  return {
    cas_required: meta.casRequired,
    created_time: time(meta.created),
    current_version: meta.current,
    custom_metadata: meta.customMetadata,
    delete_version_after: formatGoDuration(meta.deleteVersionAfter),
    max_versions: meta.maxVersions,
    oldest_version: meta.oldest,
    updated_time: time(meta.updated),
    versions,
  };
}

/** GET config. */
export function configView(config: EngineConfig): Record<string, unknown> {
  return {
    cas_required: config.casRequired,
    delete_version_after: formatGoDuration(config.deleteVersionAfter),
    max_versions: config.maxVersions,
  };
}
