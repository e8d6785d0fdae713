// Unversioned key/value paths: the whole request body is the secret. Shared by KV v1 and the
// cubbyhole engine, which differ only in where a request's keys live and in lease hints.

import type { LogicalRequest, LogicalResponse, PathDef } from './backend';
import { parseDurationSeconds } from './duration';
import { badRequest, notFound } from './errors';
import { andThen, type Maybe } from './steps';
import { getJSONNow, listNow, putJSON, type Storage } from './storage';

export interface PassthroughOptions {
  /** The storage a request reads and writes (cubbyhole narrows it to the caller's token). */
  storageFor(req: LogicalRequest): Storage;
  /** KV v1 reports a lease_duration from the secret's "ttl"/"lease" or the mount default. */
  leaseHints: boolean;
}

function ttlHint(data: Record<string, unknown>, defaultTTL: number): number {
  const raw = data.ttl ?? data.lease;
  if (raw === undefined) return defaultTTL;
  try {
    return parseDurationSeconds(raw);
  } catch {
    return defaultTTL;
  }
}

export function passthroughPaths(opts: PassthroughOptions): PathDef[] {
  const key = (req: LogicalRequest, forWrite: boolean): string => {
    const k = req.path;
    if (forWrite && k === '') throw badRequest('missing key: write to a path below the mount');
    if (forWrite && k.endsWith('/')) throw badRequest('cannot write to a path ending in "/"');
    return k;
  };
  const answer = (req: LogicalRequest, data: Record<string, unknown> | null): LogicalResponse => {
    if (!data) throw notFound();
    return opts.leaseHints ? { data, lease: { ttl: ttlHint(data, req.mountConfig.defaultLeaseTTL), renewable: false } } : { data };
  };
  // At once when the value is in memory (Storage.peek).
  const read = (req: LogicalRequest): Maybe<LogicalResponse> => {
    const k = key(req, false);
    if (k === '' || k.endsWith('/')) return answer(req, null);
    return andThen(getJSONNow<Record<string, unknown>>(opts.storageFor(req), k), (data) => answer(req, data));
  };
  const write = async (req: LogicalRequest): Promise<null> => {
    const k = key(req, true);
    if (Object.keys(req.data).length === 0) throw badRequest('missing data fields');
    await putJSON(opts.storageFor(req), k, req.data);
    return null;
  };
  return [
    {
      pattern: '.*',
      arbitraryData: true,
      summary: 'Read, write, delete or list secrets; the request body is the secret.',
      existenceCheck: async (req) => req.path !== '' && !req.path.endsWith('/') && (await opts.storageFor(req).get(req.path)) !== null,
      operations: {
        read,
        create: write,
        update: write,
        delete: async (req) => {
          const k = key(req, false);
          if (k !== '' && !k.endsWith('/')) await opts.storageFor(req).delete(k);
          return null;
        },
        list: (req) => {
          const prefix = req.path === '' || req.path.endsWith('/') ? req.path : `${req.path}/`;
          return andThen(listNow(opts.storageFor(req), prefix), (keys) => {
            if (keys.length === 0) throw notFound();
            return { data: { keys } };
          });
        },
      },
    },
  ];
}
