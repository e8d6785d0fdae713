// sys/internal/counters: service tokens stored, and client counts (Vault's activity log) from the
// clients the token-store shards record, with the activity configuration.

import { DEFAULT_RETENTION_MONTHS, monthOf } from '../../core/activity/log';
import { activityReport, DELETED_MOUNT, monthsBetween } from '../../core/activity/report';
import { findRoute } from '../../core/mounts/table';
import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { getJSON, putJSON } from '../../framework/storage';
import type { SystemServices } from '../context';

const CONFIG_KEY = 'core/activity-config';
const DEFAULT_REPORT_MONTHS = 12;

interface ActivityConfig {
  retentionMonths: number;
  defaultReportMonths: number;
}

async function loadConfig(s: SystemServices): Promise<ActivityConfig> {
  return (await getJSON<ActivityConfig>(s.core.barrier, CONFIG_KEY)) ?? { retentionMonths: DEFAULT_RETENTION_MONTHS, defaultReportMonths: DEFAULT_REPORT_MONTHS };
}

/** RFC 3339, or unix seconds (as Vault's parseutil.ParseAbsoluteTime takes them). */
function parseTime(field: string, value: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (!Number.isFinite(ms)) throw badRequest(`failed to parse ${field} as RFC3339: ${JSON.stringify(value)}`);
  return ms;
}

const startOfMonth = (ms: number, monthsBack = 0): number => Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth() - monthsBack, 1);
const endOfMonth = (ms: number): number => startOfMonth(ms, -1) - 1000;
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The auth mount a token was created through, by its creation path ("deleted mount" if gone). */
async function mountResolver(s: SystemServices): Promise<(path: string) => string> {
  const routes = (await s.mounts.routes()).filter((r) => r.table === 'auth');
  return (path) => {
    if (path.startsWith('auth/token/')) return 'auth/token/';
    return findRoute(routes, path)?.prefix ?? DELETED_MOUNT;
  };
}

export function counterPaths(s: SystemServices): PathDef[] {
  return [
    {
      pattern: 'internal/counters/tokens',
      summary: 'The number of service tokens stored.',
      operations: {
        read: async () => ({ data: { counters: { service_tokens: { total: await s.serviceTokens() } } } }),
      },
    },
    {
      pattern: 'internal/counters/activity',
      fields: {
        start_time: { type: 'string', description: 'Start of the period (RFC 3339 or unix seconds); default: the default report months back.' },
        end_time: { type: 'string', description: 'End of the period (RFC 3339 or unix seconds); default: now.' },
      },
      summary: 'Distinct clients (entities and non-entity tokens) over a period, per month and per mount.',
      operations: {
        read: async (_req, f) => {
          const config = await loadConfig(s);
          const now = Date.now();
          const end = f.get<string>('end_time') ? parseTime('end_time', f.get<string>('end_time')) : now;
          const start = f.get<string>('start_time') ? parseTime('start_time', f.get<string>('start_time')) : startOfMonth(end, config.defaultReportMonths - 1);
          if (start > end) throw badRequest('start_time is later than end_time');
          const months = monthsBetween(start, end);
          const report = activityReport(await s.activity(months), months, await mountResolver(s));
          return { data: { ...report, start_time: rfc3339(startOfMonth(start)), end_time: rfc3339(endOfMonth(end)) } };
        },
      },
    },
    {
      pattern: 'internal/counters/activity/monthly',
      summary: 'Distinct clients of the current month.',
      operations: {
        read: async () => {
          const month = monthOf(Date.now());
          const report = activityReport(await s.activity([month]), [month], await mountResolver(s));
          return { data: { by_namespace: report.by_namespace, months: [], ...report.total } };
        },
      },
    },
    {
      pattern: 'internal/counters/config',
      fields: {
        enabled: { type: 'string', description: '"enable" or "default" (client counting is always on).' },
        retention_months: { type: 'int', description: `Months of client activity to keep (at least ${DEFAULT_RETENTION_MONTHS}).` },
        default_report_months: { type: 'int', description: 'Months a report covers when no start_time is given.' },
      },
      summary: 'Client counting configuration.',
      operations: {
        read: async () => {
          const config = await loadConfig(s);
          return {
            data: {
              default_report_months: config.defaultReportMonths,
              enabled: 'default-enabled',
              minimum_retention_months: DEFAULT_RETENTION_MONTHS,
              queries_available: true,
              reporting_enabled: false,
              retention_months: config.retentionMonths,
            },
          };
        },
        update: async (_req, f) => {
          const config = await loadConfig(s);
          if (f.has('enabled') && !['enable', 'default', ''].includes(f.get<string>('enabled'))) {
            throw badRequest('client counting cannot be disabled: Coffer always counts clients, so reports can be answered (enabled must be "enable" or "default")');
          }
          if (f.has('retention_months')) {
            const months = f.get<number>('retention_months');
            if (months < DEFAULT_RETENTION_MONTHS || months > 1200) throw badRequest(`retention_months must be between ${DEFAULT_RETENTION_MONTHS} and 1200`);
            config.retentionMonths = months;
          }
          if (f.has('default_report_months')) {
            const months = f.get<number>('default_report_months');
            if (months < 1 || months > config.retentionMonths) throw badRequest('default_report_months must be at least 1 and at most retention_months');
            config.defaultReportMonths = months;
          }
          await putJSON(s.core.barrier, CONFIG_KEY, config);
          await s.setActivityRetention(config.retentionMonths);
          return null;
        },
      },
    },
  ];
}

