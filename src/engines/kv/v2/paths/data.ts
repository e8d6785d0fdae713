// <mount>/data/<path>: read a version, write a new one (check-and-set), patch the current one
// (JSON merge patch), soft-delete the latest. Every write reads, checks and writes inside the
// request's single transaction, and the mount's object runs writes one at a time: a cas check
// cannot be raced.

import type { Handler, LogicalRequest, LogicalResponse, PathDef } from '../../../../framework/backend';
import { drive, settled, type Steps } from '../../../../framework/steps';
import { badRequest, notFound } from '../../../../framework/errors';
import type { FieldData } from '../../../../framework/fields';
import { PATH_FIELD, type Kv2Context } from '../context';
import { mergePatch } from '../merge-patch';
import { addVersion, checkCas, isLive, neverGone, newMeta, softDeleteLatest, type EngineConfig, type KeyMeta } from '../model';
import { emptyNotFound, rawEnvelope } from '../raw';
import { eraseVersionData, readMeta, readVersionData, saveMeta, writeVersionData } from '../store';
import { versionMetadata } from '../views';

/** ?version=N: 0 or absent means the current version. */
function requestedVersion(f: FieldData, meta: KeyMeta): number {
  const v = f.get<number>('version');
  if (v < 0) throw badRequest('version must be zero (the current version) or a positive version number');
  return v > 0 ? v : meta.current;
}

/** The `data` map of a write; Vault refuses a request without one. */
function dataField(req: LogicalRequest, f: FieldData): Record<string, unknown> {
  if (req.data.data === undefined || req.data.data === null) throw badRequest('no data provided');
  return f.get<Record<string, unknown>>('data');
}

/** Appends a version holding `data`, prunes beyond max_versions, and answers its metadata. */
async function appendVersion(req: LogicalRequest, path: string, meta: KeyMeta, config: EngineConfig, data: Record<string, unknown>, now: number) {
  const wasNeverGone = neverGone(meta);
  const { version, pruned } = addVersion(meta, now, config);
  // Pruned first: their room in the record is the new version's.
  await eraseVersionData(req.storage, path, meta, pruned);
  await writeVersionData(req.storage, path, meta, version, data);
  await saveMeta(req.storage, path, meta, now, { wakeAt: req.wakeAt, wasNeverGone });
  return { data: versionMetadata(meta, version) };
}

/** The version a read of `path` names (404 when there is none), its metadata, and whether it can be read (not deleted or destroyed). */
export function* versionToRead(req: LogicalRequest, f: FieldData, path: string): Steps<{ meta: KeyMeta; version: number; metadata: Record<string, unknown>; live: boolean }> {
  const meta = yield* settled(readMeta(req.storage, path));
  if (!meta) throw notFound();
  const version = requestedVersion(f, meta);
  const v = meta.versions[version];
  if (!v) throw notFound();
  return { meta, version, metadata: versionMetadata(meta, version), live: isLive(v, Date.now()) };
}

/** A version's read, as steps: at once when its records are in memory. */
function* readSteps(req: LogicalRequest, f: FieldData): Steps<LogicalResponse> {
  const path = f.get<string>('path');
  const { meta, version, metadata, live } = yield* versionToRead(req, f, path);
  if (!live) return rawEnvelope(req, 404, { data: null, metadata });
  return { data: { data: yield* settled(readVersionData(req.storage, path, meta, version)), metadata } };
}

export function dataPath(ctx: Kv2Context): PathDef {
  const write: Handler = ctx.guard(async (req, f) => {
    const path = f.get<string>('path');
    const data = dataField(req, f);
    const now = Date.now();
    const config = await ctx.config.forWrite(req.storage);
    const meta = (await readMeta(req.storage, path)) ?? newMeta(now);
    checkCas(f.get('options'), config, meta);
    return appendVersion(req, path, meta, config, data, now);
  });

  return {
    pattern: 'data/(?<path>.*[^/])',
    summary: 'Write, patch, read and soft-delete versions of a secret.',
    fields: {
      path: PATH_FIELD,
      version: { type: 'int', description: 'The version to read (0: the current one).' },
      options: { type: 'map', description: 'Write options: "cas", the version the write expects to be current (0: the secret must not exist).' },
      data: { type: 'map', description: 'The secret: stored as the new version on write, merged into the current one on patch.' },
    },
    existenceCheck: async (req, f) => (await readMeta(req.storage, f.get<string>('path'))) !== null,
    operations: {
      read: ctx.guard((req, f) => drive(readSteps(req, f))),
      create: write,
      update: write,
      patch: ctx.guard(async (req, f) => {
        const path = f.get<string>('path');
        const patch = dataField(req, f);
        const now = Date.now();
        const meta = await readMeta(req.storage, path);
        if (!meta) return emptyNotFound();
        const config = await ctx.config.forWrite(req.storage);
        checkCas(f.get('options'), config, meta);
        const current = meta.versions[meta.current];
        if (!current) return emptyNotFound();
        if (!isLive(current, now)) return rawEnvelope(req, 404, versionMetadata(meta, meta.current));
        const merged = mergePatch(await readVersionData(req.storage, path, meta, meta.current), patch) as Record<string, unknown>;
        return appendVersion(req, path, meta, config, merged, now);
      }),
      delete: ctx.guard(async (req, f) => {
        const path = f.get<string>('path');
        const now = Date.now();
        const meta = await readMeta(req.storage, path);
        if (meta && softDeleteLatest(meta, now)) await saveMeta(req.storage, path, meta, now, { wakeAt: req.wakeAt });
        return null;
      }),
    },
  };
}
