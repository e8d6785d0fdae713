// sys/metrics (Vault's telemetry, JSON or Prometheus text) and sys/host-info (what is true of the
// Worker that serves the request). Both need a token with read on their path, as in Vault.

import { prometheusText, PROMETHEUS_CONTENT_TYPE, vaultJson } from '../../core/metrics/format';
import type { PathDef } from '../../framework/backend';
import { formatRFC3339Nano } from '../../framework/duration';
import { badRequest } from '../../framework/errors';
import type { SystemServices } from '../context';

export function metricsPaths(s: SystemServices): PathDef[] {
  return [
    {
      pattern: 'metrics',
      fields: { format: { type: 'string', description: '"prometheus" for the Prometheus text format; JSON otherwise.' } },
      summary: 'Telemetry: request counts and latencies per mount and operation, tokens, leases, audit failures, seal state.',
      operations: {
        read: async (_req, f) => {
          const format = f.get<string>('format');
          if (format !== '' && format !== 'prometheus' && format !== 'json') throw badRequest(`unsupported metrics format: ${format}`);
          const snapshot = await s.metrics();
          if (format === 'prometheus') return { raw: { status: 200, body: prometheusText(snapshot), contentType: PROMETHEUS_CONTENT_TYPE } };
          return { raw: { status: 200, body: vaultJson(snapshot, Date.now()) } };
        },
      },
    },
    {
      pattern: 'host-info',
      summary: 'What is known of the host: a Worker runs in a V8 isolate and sees no CPU, memory or disk.',
      operations: {
        read: async (req) => {
          const now = Date.now();
          return {
            data: {
              timestamp: formatRFC3339Nano(now),
              host: {
                hostname: '',
                os: 'workerd',
                platform: 'cloudflare-workers',
                virtualizationSystem: 'v8-isolate',
                virtualizationRole: 'guest',
                // The SystemObject instance that answers: when it started, and for how long.
                bootTime: Math.floor(s.startedAt / 1000),
                uptime: Math.floor((now - s.startedAt) / 1000),
                // The Cloudflare location the request entered by (not known locally).
                colo: req.colo ?? null,
              },
              cpu: null,
              cpu_times: null,
              disk: null,
              memory: null,
            },
            warnings: ['cpu, cpu_times, disk and memory are not visible to a Worker: they are left null rather than guessed'],
          };
        },
      },
    },
  ];
}
