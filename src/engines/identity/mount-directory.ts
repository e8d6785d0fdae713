// The auth mount table as the identity object sees it: fetched from the SystemObject and kept a
// few seconds. An accessor not found is looked up again right away, so an auth method enabled a
// moment ago is usable at once; a disabled one may linger for at most the cache time.

import { sealedError } from '../../framework/errors';
import type { AuthMountInfo, MountDirectory } from '../../core/identity/types';

const MAX_AGE_MS = 5_000;

export class CachedMountDirectory implements MountDirectory {
  private mounts: Map<string, AuthMountInfo> | null = null;
  private fetchedAt = 0;
  private inflight: Promise<Map<string, AuthMountInfo>> | null = null;

  /** `fetch` returns every auth mount, or null while the cluster is sealed. */
  constructor(private readonly fetch: () => Promise<AuthMountInfo[] | null>) {}

  private load(): Promise<Map<string, AuthMountInfo>> {
    this.inflight ??= this.fetch()
      .then((list) => {
        if (!list) throw sealedError();
        this.mounts = new Map(list.map((m) => [m.accessor, m]));
        this.fetchedAt = Date.now();
        return this.mounts;
      })
      .finally(() => {
        this.inflight = null;
      });
    return this.inflight;
  }

  async byAccessor(accessor: string): Promise<AuthMountInfo | null> {
    if (!accessor) return null;
    const fresh = this.mounts && Date.now() - this.fetchedAt < MAX_AGE_MS;
    const hit = fresh ? this.mounts!.get(accessor) : undefined;
    if (hit) return hit;
    return (await this.load()).get(accessor) ?? null;
  }

  clear(): void {
    this.mounts = null;
  }
}
