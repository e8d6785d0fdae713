// sys/mounts, sys/auth (with tune), sys/remount.

import type { EnableParams } from '../../core/mounts/service';
import { mountInfo, tuneInfo, type MountEntry, type MountTable } from '../../core/mounts/table';
import { pluginStatuses } from '../../core/plugins/directory';
import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import type { SystemServices } from '../context';

const enableFields: FieldSchemas = {
  path: { type: 'string', description: 'Mount path.' },
  type: { type: 'string', description: 'Backend type, e.g. "kv".' },
  description: { type: 'string', description: 'Human-friendly description.' },
  config: { type: 'map', description: 'default_lease_ttl, max_lease_ttl, listing_visibility, header lists, ...' },
  options: { type: 'string-map', description: 'Backend options, e.g. {"version": "1"} for kv.' },
  local: { type: 'bool', description: 'Not replicated to other clusters.' },
  seal_wrap: { type: 'bool', description: 'Accepted for compatibility; every value is already behind the barrier.' },
  external_entropy_access: { type: 'bool', description: 'Accepted for compatibility.' },
  plugin_version: { type: 'string', description: 'The catalog version to run (catalog plugins; built-ins accept only their own version).' },
  plugin_name: { type: 'string', description: 'With type "plugin" (legacy form): the catalog plugin to mount.' },
};

const tuneFields: FieldSchemas = {
  path: { type: 'string', description: 'Mount path.' },
  default_lease_ttl: { type: 'any', description: 'Default lease TTL, duration or "system".' },
  max_lease_ttl: { type: 'any', description: 'Maximum lease TTL, duration or "system".' },
  description: { type: 'string', description: 'Human-friendly description.' },
  options: { type: 'string-map', description: 'Options to merge; an empty value removes an option.' },
  plugin_version: { type: 'string', description: 'Pinned plugin version.' },
  audit_non_hmac_request_keys: { type: 'comma-string-list', description: 'Request keys audit devices leave un-HMACed.' },
  audit_non_hmac_response_keys: { type: 'comma-string-list', description: 'Response keys audit devices leave un-HMACed.' },
  listing_visibility: { type: 'string', description: '"unauth" lists the mount in the unauthenticated UI listing.' },
  passthrough_request_headers: { type: 'comma-string-list', description: 'Request headers passed to the backend.' },
  allowed_response_headers: { type: 'comma-string-list', description: 'Response headers the backend may set.' },
  allowed_managed_keys: { type: 'comma-string-list', description: 'Managed keys the mount may use.' },
  token_type: { type: 'string', description: 'Auth mounts: token type issued at login.' },
  force_no_cache: { type: 'bool', description: 'Disable caching.' },
  user_lockout_config: { type: 'map', description: 'Accepted for compatibility.' },
};

function enableParams(f: FieldData): EnableParams {
  return {
    type: f.get<string>('type') || f.get<string>('plugin_name'),
    plugin_name: f.get<string>('plugin_name'),
    description: f.get<string>('description'),
    config: f.get<Record<string, unknown>>('config'),
    options: f.get<Record<string, string>>('options'),
    local: f.get<boolean>('local'),
    seal_wrap: f.get<boolean>('seal_wrap'),
    external_entropy_access: f.get<boolean>('external_entropy_access'),
    plugin_version: f.get<string>('plugin_version'),
  };
}

/** mountInfo with, for catalog plugin mounts, whether their module can run now (hashed per listing). */
function infoWithStatus(s: SystemServices): (e: MountEntry) => Promise<Record<string, unknown>> {
  const status = pluginStatuses(s.plugins.directory);
  return async (e) => mountInfo(e, e.plugin ? await status(e.type, e.plugin) : undefined);
}

function tablePaths(s: SystemServices, table: MountTable, base: 'mounts' | 'auth'): PathDef[] {
  const missing = (path: string) =>
    badRequest(table === 'auth' ? `No auth engine at auth/${path.replace(/\/?$/, '/')}` : `No secret engine mount at ${path.replace(/\/?$/, '/')}`);
  return [
    {
      pattern: `${base}/(?<path>.+?)/tune/?`,
      fields: tuneFields,
      summary: `Read or tune the settings of a${table === 'auth' ? 'n auth method' : ' secrets engine'}.`,
      operations: {
        read: async (_req, f) => {
          const entry = await s.mounts.get(table, f.get('path'));
          if (!entry) throw missing(f.get('path'));
          return { data: tuneInfo(entry) };
        },
        update: async (_req, f) => {
          // Pass only what the caller sent (null included, as its zero value): an absent field
          // leaves the setting alone.
          const given: Record<string, unknown> = {};
          for (const k of Object.keys(tuneFields)) if (k !== 'path' && f.has(k)) given[k] = f.get(k);
          const warnings = await s.mounts.tune(table, f.get('path'), given);
          return warnings.length ? { warnings } : null;
        },
      },
    },
    {
      pattern: `${base}/(?<path>.+)`,
      fields: enableFields,
      summary: `Enable, read or disable a${table === 'auth' ? 'n auth method' : ' secrets engine'}.`,
      operations: {
        read: async (_req, f) => {
          const entry = await s.mounts.get(table, f.get('path'));
          if (!entry) throw missing(f.get('path'));
          return { data: await infoWithStatus(s)(entry) };
        },
        update: async (_req, f) => {
          await s.mounts.enable(table, f.get('path'), enableParams(f));
          return null;
        },
        delete: async (_req, f) => {
          await s.mounts.disable(table, f.get('path'));
          return null;
        },
      },
    },
    {
      pattern: base,
      summary: `List the enabled ${table === 'auth' ? 'auth methods' : 'secrets engines'}.`,
      operations: {
        read: async () => {
          const data: Record<string, unknown> = {};
          const info = infoWithStatus(s);
          for (const e of await s.mounts.list(table)) data[e.path] = await info(e);
          return { data };
        },
      },
    },
  ];
}

export function mountPaths(s: SystemServices): PathDef[] {
  return [
    ...tablePaths(s, 'mounts', 'mounts'),
    ...tablePaths(s, 'auth', 'auth'),
    {
      pattern: 'remount',
      fields: {
        from: { type: 'string', description: 'Current mount path (auth mounts as auth/<path>).', required: true },
        to: { type: 'string', description: 'New mount path.', required: true },
      },
      summary: 'Move a mount to a new path; its data moves with it.',
      operations: {
        update: async (_req, f) => {
          const id = await s.mounts.remount(f.get('from'), f.get('to'));
          return {
            data: { migration_id: id },
            warnings: ['Mount move completed; its status is kept under sys/remount/status/' + id],
          };
        },
      },
    },
    {
      pattern: 'remount/status/(?<migration_id>[^/]+)',
      fields: { migration_id: { type: 'string', description: 'The id sys/remount returned.' } },
      summary: 'Status of a mount move.',
      operations: {
        read: async (_req, f) => {
          const status = await s.mounts.remountStatus(f.get('migration_id'));
          if (!status) throw badRequest(`no migration found with id ${f.get('migration_id')}`);
          return { data: status };
        },
      },
    },
  ];
}
