// <mount>/subkeys/<path>: a version's structure with every value replaced by null. depth 0 is
// unlimited; at depth N, maps N levels down become leaves too (null), so no value can leak.

import type { PathDef } from '../../../../framework/backend';
import { badRequest } from '../../../../framework/errors';
import { isExactNumber } from '../../../../framework/json-numbers';
import { drive } from '../../../../framework/steps';
import { PATH_FIELD, type Kv2Context } from '../context';
import { versionToRead } from './data';
import { rawEnvelope } from '../raw';
import { readVersionData } from '../store';

/** A JSON object (a number kept exact is a leaf, though held in an object). */
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !isExactNumber(v);

/** The keys of `data` to `maxDepth` levels (0: all), leaves and empty maps as null. */
export function subkeys(data: Record<string, unknown>, maxDepth: number, depth = 1): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    const expand = isObject(v) && Object.keys(v).length > 0 && (maxDepth === 0 || depth + 1 <= maxDepth);
    Object.defineProperty(out, k, { value: expand ? subkeys(v, maxDepth, depth + 1) : null, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export function subkeysPath(ctx: Kv2Context): PathDef {
  return {
    pattern: 'subkeys/(?<path>.*)',
    summary: 'Read the structure of a secret, its values removed.',
    fields: {
      path: PATH_FIELD,
      version: { type: 'int', description: 'The version to read (0: the current one).' },
      depth: { type: 'int', description: 'Deepest level to show (0: no limit); maps at that level appear as null.' },
    },
    operations: {
      read: ctx.guard(async (req, f) => {
        const depth = f.get<number>('depth');
        if (depth < 0) throw badRequest('depth must be zero (no limit) or a positive number');
        const path = f.get<string>('path');
        const { meta, version, metadata, live } = await drive(versionToRead(req, f, path));
        if (!live) return rawEnvelope(req, 404, { subkeys: null, metadata });
        return { data: { subkeys: subkeys(await readVersionData(req.storage, path, meta, version), depth), metadata } };
      }),
    },
  };
}
