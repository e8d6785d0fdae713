// <mount>/metadata/<path>: a secret's settings and version list (read, write, patch, delete) and
// the listing of secrets. Writing metadata creates no version.

import type { Handler, LogicalRequest, LogicalResponse, PathDef } from '../../../../framework/backend';
import { badRequest, notFound } from '../../../../framework/errors';
import type { FieldData } from '../../../../framework/fields';
import { PATH_FIELD, type Kv2Context } from '../context';
import { parseCustomMetadata, validateCustomMetadata, withoutNulls } from '../custom-metadata';
import { LIST_FIELDS, listMetadata, listOptions } from '../listing';
import { newMeta, type KeyMeta } from '../model';
import { emptyNotFound } from '../raw';
import { eraseKey, readConfig, readMeta, saveMeta } from '../store';
import { metadataView } from '../views';

const SETTINGS = ['max_versions', 'cas_required', 'delete_version_after', 'custom_metadata'] as const;

export const CAS_IGNORED_WARNING = '"cas_required" set to false, but is mandated by backend config. This value will be ignored.';

/** The secret a metadata write addresses: named, and not a folder. */
function writablePath(f: FieldData): string {
  const path = f.get<string>('path');
  if (path === '') throw badRequest('missing path');
  if (path.endsWith('/')) throw badRequest('cannot write metadata to a path ending in "/"');
  return path;
}

/** Applies the scalar settings present in the request. */
function applySettings(meta: KeyMeta, f: FieldData): void {
  if (f.has('max_versions')) {
    const max = f.get<number>('max_versions');
    if (max < 0) throw badRequest('max_versions cannot be negative');
    meta.maxVersions = max;
  }
  if (f.has('cas_required')) meta.casRequired = f.get<boolean>('cas_required');
  if (f.has('delete_version_after')) meta.deleteVersionAfter = f.get<number>('delete_version_after');
}

async function casWarning(req: LogicalRequest, f: FieldData): Promise<LogicalResponse | null> {
  if (!f.has('cas_required') || f.get<boolean>('cas_required')) return null;
  return (await readConfig(req.storage)).casRequired ? { warnings: [CAS_IGNORED_WARNING] } : null;
}

export function metadataPath(ctx: Kv2Context): PathDef {
  const write: Handler = ctx.guard(async (req, f) => {
    const path = writablePath(f);
    // A null setting counts as absent; Vault writes nothing (not even empty metadata) when no setting is given.
    if (!SETTINGS.some((s) => f.has(s) && req.data[s] !== null)) return null;
    let custom: Record<string, string> | undefined;
    if (f.has('custom_metadata') && req.data.custom_metadata !== null) {
      custom = withoutNulls(parseCustomMetadata(f.get('custom_metadata'), false));
      validateCustomMetadata(custom);
    }
    const now = Date.now();
    const meta = (await readMeta(req.storage, path)) ?? newMeta(now);
    applySettings(meta, f);
    if (custom) meta.customMetadata = Object.keys(custom).length > 0 ? custom : null;
    const response = await casWarning(req, f);
    await saveMeta(req.storage, path, meta, now, { wakeAt: req.wakeAt });
    return response;
  });

  return {
    pattern: 'metadata/(?<path>.*)',
    summary: "Read, write, patch or delete a secret's metadata and versions; list secrets.",
    fields: {
      path: PATH_FIELD,
      max_versions: { type: 'int', description: "Versions kept for this secret (0: the engine's setting)." },
      cas_required: { type: 'bool', description: 'Every write to this secret must carry options.cas.' },
      delete_version_after: { type: 'duration', description: "Time after which a new version is deleted (capped by the engine's); 0 clears it." },
      custom_metadata: { type: 'map', description: 'String pairs describing the secret (at most 64; keys up to 128 bytes, values up to 512).' },
      ...LIST_FIELDS,
    },
    existenceCheck: async (req, f) => (await readMeta(req.storage, f.get<string>('path'))) !== null,
    operations: {
      read: ctx.guard(async (req, f) => {
        const meta = await readMeta(req.storage, f.get<string>('path'));
        if (!meta) throw notFound();
        return { data: metadataView(meta) };
      }),
      create: write,
      update: write,
      patch: ctx.guard(async (req, f) => {
        const path = writablePath(f);
        let patch: Record<string, string | null> | null | undefined;
        if (f.has('custom_metadata')) {
          patch = req.data.custom_metadata === null ? null : parseCustomMetadata(f.get('custom_metadata'), true);
          if (patch) validateCustomMetadata(withoutNulls(patch));
        }
        const now = Date.now();
        const meta = await readMeta(req.storage, path);
        if (!meta) return emptyNotFound();
        applySettings(meta, f);
        if (patch === null) meta.customMetadata = null;
        else if (patch) {
          const merged: Record<string, string> = { ...meta.customMetadata };
          for (const [k, v] of Object.entries(patch)) {
            if (v === null) delete merged[k];
            else Object.defineProperty(merged, k, { value: v, enumerable: true, writable: true, configurable: true });
          }
          // The patch was valid on its own; together with what was there it may be too many keys.
          validateCustomMetadata(merged);
          meta.customMetadata = Object.keys(merged).length > 0 ? merged : null;
        }
        const response = await casWarning(req, f);
        await saveMeta(req.storage, path, meta, now, { wakeAt: req.wakeAt });
        return response;
      }),
      delete: ctx.guard(async (req, f) => {
        const path = f.get<string>('path');
        const meta = await readMeta(req.storage, path);
        if (meta) await eraseKey(req.storage, path, meta);
        return null;
      }),
      list: ctx.guard((req, f) => listMetadata(req, f.get<string>('path'), listOptions(f))),
    },
  };
}
