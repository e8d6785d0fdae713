// LIST metadata/<folder>: Vault's direct children (folders end with "/"), and beyond Vault a
// recursive listing in pages: every secret below the folder, as a path relative to it, in key
// order, after a given path, at most `limit`. A page reads an index range of its own size,
// however many secrets the mount holds. Names are never filtered by policy (as in Vault).

import type { LogicalRequest, LogicalResponse } from '../../../framework/backend';
import { badRequest, notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { drive, andThen, settled, type Maybe, type Steps } from '../../../framework/steps';
import { compareKeys, listNow, type Storage } from '../../../framework/storage';
import { GONE, goneKey, META } from './layout';
import { overdueGone } from './timers';

export const DEFAULT_LIST_LIMIT = 1000;
export const MAX_LIST_LIMIT = 10_000;

export const LIST_FIELDS: FieldSchemas = {
  recursive: { type: 'bool', description: 'List every secret below the folder (full relative paths, no folder entries), in pages.' },
  after: { type: 'string', description: 'Only names after this one (exclusive), in key order: the last name of the previous page.' },
  limit: { type: 'int', description: `At most this many names (1..${MAX_LIST_LIMIT}; recursive lists default to ${DEFAULT_LIST_LIMIT}).` },
  exclude_deleted: { type: 'bool', description: 'Leave out secrets whose current version is deleted or destroyed.' },
};

export interface ListOptions {
  recursive: boolean;
  after: string;
  /** null: no limit (plain lists without `limit`, as in Vault). */
  limit: number | null;
  excludeDeleted: boolean;
}

export function listOptions(f: FieldData): ListOptions {
  const recursive = f.get<boolean>('recursive');
  const given = f.has('limit');
  const limit = given ? f.get<number>('limit') : recursive ? DEFAULT_LIST_LIMIT : null;
  if (limit !== null && (limit < 1 || limit > MAX_LIST_LIMIT)) throw badRequest(`limit must be between 1 and ${MAX_LIST_LIMIT}`);
  return { recursive, after: f.get<string>('after'), limit, excludeDeleted: f.get<boolean>('exclude_deleted') };
}

/** Decides whether a secret (by full path) is hidden by exclude_deleted. */
type Hidden = (path: string) => Promise<boolean>;

async function hiddenTest(storage: Storage, folder: string, opts: ListOptions, now: number): Promise<Hidden | null> {
  if (!opts.excludeDeleted) return null;
  const overdue = await overdueGone(storage, now);
  if (opts.recursive) return async (path) => overdue.has(path) || (await storage.get(goneKey(path))) !== null;
  // One folder: its gone/ twin lists the hidden names at the cost of one folder listing.
  const gone = new Set(await storage.list(GONE + folder));
  return async (path) => overdue.has(path) || gone.has(path.slice(folder.length));
}

/** Secrets below `folder`, relative to it, in key order. */
export async function recursiveNames(storage: Storage, folder: string, after: string, limit: number, hidden: Hidden | null): Promise<string[]> {
  const base = META + folder;
  const out: string[] = [];
  let cursor = after === '' ? '' : base + after;
  while (out.length < limit) {
    const want = limit - out.length;
    const page = await storage.scan(base, cursor, want);
    for (const key of page) {
      const name = key.slice(base.length);
      if (!hidden || !(await hidden(folder + name))) out.push(name);
    }
    if (page.length < want) break;
    cursor = page[page.length - 1];
  }
  return out;
}

function childNames(storage: Storage, folder: string, opts: ListOptions, hidden: Hidden | null): Maybe<string[]> {
  const chosen = (all: string[]): string[] => {
    const names = all.sort(compareKeys);
    return opts.after === '' ? names : names.filter((n) => compareKeys(n, opts.after) > 0);
  };
  const limited = (names: string[]) => (opts.limit === null ? names : names.slice(0, opts.limit));
  // A plain listing of names in memory answers at once.
  if (!hidden) return andThen(listNow(storage, META + folder), (all) => limited(chosen(all)));
  return (async () => {
    const kept: string[] = [];
    // Folders stay: they are not secrets, and may hold live ones.
    for (const n of chosen(await storage.list(META + folder))) if (n.endsWith('/') || !(await hidden(folder + n))) kept.push(n);
    return limited(kept);
  })();
}

/** The listing, as steps: at once for a plain listing whose folder is in memory. */
export function listMetadata(req: LogicalRequest, folderPath: string, opts: ListOptions): Maybe<LogicalResponse> {
  return drive(listSteps(req, folderPath, opts));
}

function* listSteps(req: LogicalRequest, folderPath: string, opts: ListOptions): Steps<LogicalResponse> {
  const folder = folderPath === '' || folderPath.endsWith('/') ? folderPath : `${folderPath}/`;
  const hidden = opts.excludeDeleted ? yield* settled(hiddenTest(req.storage, folder, opts, Date.now())) : null;
  const keys = opts.recursive
    ? yield* settled(recursiveNames(req.storage, folder, opts.after, opts.limit ?? DEFAULT_LIST_LIMIT, hidden))
    : yield* settled(childNames(req.storage, folder, opts, hidden));
  if (keys.length === 0) throw notFound();
  return { data: { keys } };
}
