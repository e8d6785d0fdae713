// The identity object's copy of the auth mount table: cached briefly, looked up again at once
// for an accessor it does not know (an auth method enabled a moment ago), 503 while sealed.
import { describe, expect, it } from 'vitest';
import { CachedMountDirectory } from '../../../../src/engines/identity/mount-directory';
import type { AuthMountInfo } from '../../../../src/core/identity/types';
import { CofferError } from '../../../../src/framework/errors';
import { MOUNTS, USERPASS } from './fixtures';

describe('CachedMountDirectory', () => {
  it('serves known accessors from its copy and re-reads for unknown ones', async () => {
    let table: AuthMountInfo[] = MOUNTS.slice(0, 1);
    let reads = 0;
    const directory = new CachedMountDirectory(async () => {
      reads++;
      return table;
    });
    expect(await directory.byAccessor(USERPASS)).toEqual(MOUNTS[0]);
    expect(await directory.byAccessor(USERPASS)).toEqual(MOUNTS[0]);
    expect(reads).toBe(1);
    table = MOUNTS;
    expect(await directory.byAccessor(MOUNTS[1].accessor)).toEqual(MOUNTS[1]);
    expect(reads).toBe(2);
    expect(await directory.byAccessor('auth_nope')).toBeNull();
    expect(await directory.byAccessor('')).toBeNull();
  });

  it('answers 503 while the cluster is sealed', async () => {
    const directory = new CachedMountDirectory(async () => null);
    await expect(directory.byAccessor(USERPASS)).rejects.toSatisfy((e: unknown) => e instanceof CofferError && e.status === 503);
  });
});
