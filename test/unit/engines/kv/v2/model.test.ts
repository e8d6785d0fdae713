// The version state machine (spec: "Key-value secret versions"), pruning, deletion times and cas.
import { describe, expect, it } from 'vitest';
import { CofferError } from '../../../../../src/framework/errors';
import {
  addVersion,
  checkCas,
  currentGone,
  DEFAULT_CONFIG,
  deletionTime,
  DELETE_AFTER_DISABLED,
  destroy,
  isDeleted,
  isLive,
  maxVersionsFor,
  newMeta,
  softDelete,
  softDeleteLatest,
  undelete,
  type EngineConfig,
  type KeyMeta,
} from '../../../../../src/engines/kv/v2/model';

const T0 = 1_700_000_000_000;
const config = (c: Partial<EngineConfig> = {}): EngineConfig => ({ ...DEFAULT_CONFIG, ...c });
const withVersions = (n: number, c = config()): KeyMeta => {
  const meta = newMeta(T0);
  for (let i = 0; i < n; i++) addVersion(meta, T0 + i, c);
  return meta;
};
const casError = (fn: () => void): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof CofferError && e.status === 400) return e.errors[0];
    throw e;
  }
  return 'accepted';
};

describe('transitions', () => {
  it('none → POST (cas 0 or unset) → version 1 active', () => {
    const meta = newMeta(T0);
    expect(casError(() => checkCas({}, config(), meta))).toBe('accepted');
    expect(casError(() => checkCas({ cas: 0 }, config(), meta))).toBe('accepted');
    expect(addVersion(meta, T0, config())).toEqual({ version: 1, pruned: [] });
    expect(isLive(meta.versions[1], T0)).toBe(true);
    expect(meta).toMatchObject({ current: 1, oldest: 0, created: T0, updated: T0 });
  });

  it('none → POST with cas > 0 is refused', () => {
    expect(casError(() => checkCas({ cas: 1 }, config(), newMeta(T0)))).toBe('check-and-set parameter did not match the current version');
  });

  it('active → POST → a new active version; earlier ones kept', () => {
    const meta = withVersions(2);
    expect(casError(() => checkCas({ cas: 2 }, config(), meta))).toBe('accepted');
    addVersion(meta, T0 + 10, config());
    expect(meta.current).toBe(3);
    expect([1, 2, 3].map((v) => isLive(meta.versions[v], T0 + 10))).toEqual([true, true, true]);
    expect(meta.updated).toBe(T0 + 10);
  });

  it('active → POST with a stale cas, or without a required one, is refused', () => {
    const meta = withVersions(2);
    expect(casError(() => checkCas({ cas: 1 }, config(), meta))).toBe('check-and-set parameter did not match the current version');
    expect(casError(() => checkCas({}, config({ casRequired: true }), meta))).toBe('check-and-set parameter required for this call');
    meta.casRequired = true;
    expect(casError(() => checkCas({}, config(), meta))).toBe('check-and-set parameter required for this call');
    expect(casError(() => checkCas({ cas: 'x' }, config(), meta))).toBe('error parsing check-and-set parameter');
    expect(casError(() => checkCas({ cas: 1.5 }, config(), meta))).toBe('error parsing check-and-set parameter');
    expect(casError(() => checkCas({ cas: ' 2 ' }, config(), meta))).toBe('accepted');
  });

  it('active → DELETE → soft-deleted (data kept); deleting again changes nothing', () => {
    const meta = withVersions(2);
    expect(softDeleteLatest(meta, T0 + 5)).toBe(true);
    expect(meta.versions[2]).toEqual({ created: T0 + 1, deletion: T0 + 5, destroyed: false });
    expect(isDeleted(meta.versions[2], T0 + 5)).toBe(true);
    expect(softDeleteLatest(meta, T0 + 9)).toBe(false);
    expect(meta.versions[2].deletion).toBe(T0 + 5);
    expect(isLive(meta.versions[1], T0 + 9)).toBe(true);
  });

  it('active → POST delete versions → soft-deleted; unknown versions are skipped', () => {
    const meta = withVersions(3);
    expect(softDelete(meta, [1, 3, 42], T0 + 5)).toBe(true);
    expect([1, 2, 3].map((v) => isLive(meta.versions[v], T0 + 5))).toEqual([false, true, false]);
  });

  it('soft-deleted → undelete → active', () => {
    const meta = withVersions(1);
    softDeleteLatest(meta, T0 + 5);
    expect(undelete(meta, [1], T0 + 6, config())).toBe(true);
    expect(meta.versions[1].deletion).toBeNull();
    expect(isLive(meta.versions[1], T0 + 6)).toBe(true);
  });

  it('active or soft-deleted → destroy → destroyed; then undelete and delete change nothing', () => {
    const meta = withVersions(2);
    softDelete(meta, [1], T0 + 5);
    expect(destroy(meta, [1, 2, 2, 7])).toEqual([1, 2]);
    expect(meta.versions[1].destroyed && meta.versions[2].destroyed).toBe(true);
    expect(destroy(meta, [1])).toEqual([]);
    expect(undelete(meta, [1, 2], T0 + 6, config())).toBe(false);
    expect(softDelete(meta, [2], T0 + 6)).toBe(false);
    expect(isLive(meta.versions[2], T0 + 6)).toBe(false);
    expect(currentGone(meta, T0 + 6)).toBe(true);
  });

  it('a write to a soft-deleted secret needs cas = its current version', () => {
    const meta = withVersions(2);
    softDeleteLatest(meta, T0 + 5);
    expect(casError(() => checkCas({ cas: 0 }, config(), meta))).toBe('check-and-set parameter did not match the current version');
    expect(casError(() => checkCas({ cas: 2 }, config(), meta))).toBe('accepted');
    addVersion(meta, T0 + 6, config());
    expect(currentGone(meta, T0 + 6)).toBe(false);
  });
});

describe('pruning', () => {
  it('keeps 10 versions when max_versions is 0 everywhere, moving oldest_version as Vault does', () => {
    const meta = withVersions(9);
    expect(meta.oldest).toBe(0);
    expect(addVersion(meta, T0 + 20, config()).pruned).toEqual([]);
    expect(meta.oldest).toBe(1);
    expect(Object.keys(meta.versions)).toHaveLength(10);
    expect(addVersion(meta, T0 + 21, config()).pruned).toEqual([1]);
    expect(meta.oldest).toBe(2);
    expect(Object.keys(meta.versions).map(Number)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('uses the larger of the key and engine settings', () => {
    const meta = newMeta(T0);
    meta.maxVersions = 2;
    expect(maxVersionsFor(meta, config({ maxVersions: 5 }))).toBe(5);
    expect(maxVersionsFor(meta, config())).toBe(2);
    for (let i = 0; i < 4; i++) addVersion(meta, T0 + i, config());
    expect(Object.keys(meta.versions).map(Number)).toEqual([3, 4]);
  });

  it('a lowered limit prunes every excess version at the next write', () => {
    const meta = withVersions(6);
    meta.maxVersions = 2;
    expect(addVersion(meta, T0 + 10, config()).pruned).toEqual([1, 2, 3, 4, 5]);
    expect(Object.keys(meta.versions).map(Number)).toEqual([6, 7]);
    expect(meta.oldest).toBe(6);
  });

  it('pruned versions include destroyed ones (their records go too)', () => {
    const meta = withVersions(2, config({ maxVersions: 2 }));
    destroy(meta, [1]);
    expect(addVersion(meta, T0 + 10, config({ maxVersions: 2 })).pruned).toEqual([1]);
  });
});

describe('delete_version_after', () => {
  it('is the smaller non-zero of engine and key', () => {
    const meta = newMeta(T0);
    expect(deletionTime(T0, config(), meta)).toBeNull();
    meta.deleteVersionAfter = 60;
    expect(deletionTime(T0, config(), meta)).toBe(T0 + 60_000);
    expect(deletionTime(T0, config({ deleteVersionAfter: 10 }), meta)).toBe(T0 + 10_000);
    expect(deletionTime(T0, config({ deleteVersionAfter: 600 }), meta)).toBe(T0 + 60_000);
    meta.deleteVersionAfter = 0;
    expect(deletionTime(T0, config({ deleteVersionAfter: 600 }), meta)).toBe(T0 + 600_000);
    meta.deleteVersionAfter = 60;
    expect(deletionTime(T0, config({ deleteVersionAfter: DELETE_AFTER_DISABLED }), meta)).toBeNull();
  });

  it('a version reads as deleted from its deletion time exactly, not a millisecond before', () => {
    const meta = newMeta(T0);
    meta.deleteVersionAfter = 1;
    addVersion(meta, T0, config());
    const v = meta.versions[1];
    expect(v.deletion).toBe(T0 + 1000);
    expect(isLive(v, T0 + 999)).toBe(true);
    expect(isDeleted(v, T0 + 1000)).toBe(true);
    expect(currentGone(meta, T0 + 999)).toBe(false);
    expect(currentGone(meta, T0 + 1000)).toBe(true);
  });

  it('a scheduled deletion is brought forward by an explicit delete, and undelete starts the clock again', () => {
    const meta = newMeta(T0);
    meta.deleteVersionAfter = 100;
    addVersion(meta, T0, config());
    expect(softDeleteLatest(meta, T0 + 5)).toBe(true);
    expect(meta.versions[1].deletion).toBe(T0 + 5);
    undelete(meta, [1], T0 + 50, config());
    expect(meta.versions[1].deletion).toBe(T0 + 50 + 100_000);
  });
});
