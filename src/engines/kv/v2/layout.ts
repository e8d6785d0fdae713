// Where KV v2 keeps things in the engine's storage. Every key lives under a first segment ".."
// that no request path can contain (src/worker/canonical.ts refuses "." and ".." segments), so
// the plain keys of a v1 mount being upgraded in place can never collide with versioned data.
//
//   ../config                  engine settings
//   ../meta/<path>             a secret's metadata and version list, and the data of its small
//                              versions (store.ts); listing a folder of meta/ is listing the
//                              secrets (SQLite: an index on the parent folder)
//   ../ver/<path>/<n>          the data of version n when it is not kept in the metadata
//   ../gone/<path>             present while the current version is deleted or destroyed
//   ../due/<ms>/<n>/<path>     a deletion_time still to come, for the alarm (ms zero-padded,
//                              so a scan of due/ is in time order)

export const ROOT = '../';
/** Above every key under ROOT (they all go on in ASCII) and below every other key after it. */
export const ROOT_END = '../\u{10FFFF}';
export const CONFIG_KEY = `${ROOT}config`;
export const META = `${ROOT}meta/`;
export const GONE = `${ROOT}gone/`;
export const DUE = `${ROOT}due/`;
const VERSIONS = `${ROOT}ver/`;

export const metaKey = (path: string): string => META + path;
export const versionKey = (path: string, version: number): string => `${VERSIONS}${path}/${version}`;
export const goneKey = (path: string): string => GONE + path;
export const dueKey = (at: number, version: number, path: string): string => `${DUE}${String(at).padStart(15, '0')}/${version}/${path}`;

export interface DueEntry {
  at: number;
  version: number;
  path: string;
}

export function parseDueKey(key: string): DueEntry | null {
  const m = /^(\d{15})\/(\d+)\/(.+)$/s.exec(key.slice(DUE.length));
  return key.startsWith(DUE) && m ? { at: Number(m[1]), version: Number(m[2]), path: m[3] } : null;
}

/** A secret's path as a storage key: not empty, not a folder. */
export const isKeyPath = (path: string): boolean => path !== '' && !path.endsWith('/');
