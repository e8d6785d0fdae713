// sys/audit (list, enable, disable audit devices) and sys/audit-hash (a device's HMAC of a value).
// The sudo requirement on sys/audit and sys/audit/* comes from SYS_SUDO_PATHS.

import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { SystemServices } from '../context';

export function auditPaths(s: SystemServices): PathDef[] {
  return [
    {
      pattern: 'audit-hash/(?<path>.+)',
      fields: {
        path: { type: 'string', description: 'Path of the audit device.' },
        input: { type: 'string', description: 'The value to hash.' },
      },
      summary: "Hash a value with an audit device's HMAC and salt, to find it in that device's log.",
      operations: {
        update: async (_req, f) => {
          const input = f.get<string>('input');
          if (input === '') throw badRequest('the "input" parameter is empty');
          return { data: { hash: await s.audit.hash(f.get('path'), input) } };
        },
      },
    },
    {
      pattern: 'audit/(?<path>.+)',
      fields: {
        path: { type: 'string', description: 'Path of the audit device, e.g. "file".' },
        type: { type: 'string', description: 'Device type: "file" or "http".' },
        description: { type: 'string', description: 'Human-friendly description.' },
        options: { type: 'string-map', description: 'Device options (file_path, url, prefix, hmac_accessor, log_raw, elide_list_responses, format, mode).' },
        local: { type: 'bool', description: 'Not replicated to other clusters.' },
      },
      summary: 'Enable or disable an audit device.',
      operations: {
        update: async (_req, f) => {
          const warnings = await s.audit.enable(f.get('path'), {
            type: f.get<string>('type'),
            description: f.get<string>('description'),
            options: f.get<Record<string, string>>('options'),
            local: f.get<boolean>('local'),
          });
          return warnings.length > 0 ? { warnings } : null;
        },
        delete: async (_req, f) => {
          await s.audit.disable(f.get('path'));
          return null;
        },
      },
    },
    {
      pattern: 'audit',
      summary: 'List the enabled audit devices.',
      operations: {
        read: async () => ({ data: await s.audit.listing() }),
      },
    },
  ];
}
