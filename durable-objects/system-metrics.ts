// sys/metrics: the SystemObject's requests, every token shard's and every mount object's, with the
// gauges of the cluster (seal state, mount tables). An object that cannot answer is left out.

import { mergeSnapshots, type Gauge, type MetricsRegistry, type MetricsSnapshot } from '../src/core/metrics/registry';
import type { MountService } from '../src/core/mounts/service';
import type { Env } from '../src/rpc/env';
import { allTokenShards, mountStub } from '../src/rpc/stubs';

export async function gatherMetrics(env: Env, own: MetricsRegistry, mounts: MountService, sealed: () => Promise<boolean>): Promise<MetricsSnapshot> {
  const entries = [...(await mounts.list('mounts')), ...(await mounts.list('auth'))];
  const tables = new Map<string, number>();
  for (const e of entries) {
    const key = `${e.table === 'auth' ? 'auth' : 'logical'}|${e.local}`;
    tables.set(key, (tables.get(key) ?? 0) + 1);
  }
  const gauges: Gauge[] = [{ name: 'vault.core.unsealed', labels: {}, value: (await sealed()) ? 0 : 1 }];
  for (const [key, value] of tables) {
    const [type, local] = key.split('|');
    gauges.push({ name: 'vault.core.mount_table.num_entries', labels: { type, local }, value });
  }
  const others = await Promise.allSettled([
    ...allTokenShards(env).map((shard) => shard.metricsSnapshot()),
    ...(await mounts.objectEntries()).map((e) => mountStub(env, e.uuid).metricsSnapshot()),
  ]);
  return mergeSnapshots([own.snapshot(gauges), ...others.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))]);
}
