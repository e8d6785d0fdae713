// EGP paths: exact paths, glob prefixes ("secret/*") and "*" for every request. A path entry is
// stored as written (leading "/" dropped) and matched against the request's logical path.

import { badRequest } from '../../../framework/errors';

export interface EgpPath {
  /** The exact path, or the prefix before "*". */
  path: string;
  glob: boolean;
}

export function parseEgpPath(raw: string): EgpPath {
  const path = raw.trim().replace(/^\/+/, '');
  if (path === '') throw badRequest('paths cannot contain an empty path');
  if (path.indexOf('*') >= 0 && path.indexOf('*') !== path.length - 1) {
    throw badRequest(`invalid path "${raw}": "*" may only end a path`);
  }
  return path.endsWith('*') ? { path: path.slice(0, -1), glob: true } : { path, glob: false };
}

/** The request path (no leading "/") lies under the entry. "*" is a glob with an empty prefix. */
export function egpPathMatches(entry: EgpPath, requestPath: string): boolean {
  return entry.glob ? requestPath.startsWith(entry.path) : requestPath === entry.path;
}

/** The `paths` field: an array, or a comma-separated string (Vault accepts both). */
export function egpPathList(value: unknown): string[] {
  const items = Array.isArray(value) ? value.map(String) : typeof value === 'string' ? value.split(',') : [];
  const paths = items.map((p) => p.trim().replace(/^\/+/, '')).filter((p) => p !== '');
  if (paths.length === 0) throw badRequest('paths cannot be empty');
  for (const p of paths) parseEgpPath(p);
  return [...new Set(paths)];
}
