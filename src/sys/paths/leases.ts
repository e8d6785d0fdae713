// sys/leases/* (and the legacy sys/renew, sys/revoke, sys/revoke-prefix, sys/revoke-force):
// each call goes to the object of the mount that issued the lease (the lease id's prefix).

import type { LogicalResponse, PathDef } from '../../framework/backend';
import { badRequest, notFound } from '../../framework/errors';
import type { FieldSchemas } from '../../framework/fields';
import type { LeaseOp, SystemServices } from '../context';

const TIDY_WARNING = 'Tidy operation successfully started. Any information from the operation will be printed to the server\'s logs.';

const idFields: FieldSchemas = {
  lease_id: { type: 'string', description: 'The lease id.' },
  url_lease_id: { type: 'string', description: 'The lease id, in the URL.' },
  increment: { type: 'duration', description: 'Requested extension of the lease.' },
  sync: { type: 'bool', description: 'Wait for the revocation (default); false answers 202 at once.', default: true },
};

function leaseId(f: { get<T>(n: string): T }): string {
  const id = f.get<string>('url_lease_id') || f.get<string>('lease_id');
  if (!id) throw badRequest('lease_id must be specified');
  return id;
}

export function leasePaths(s: SystemServices): PathDef[] {
  const renew = async (_req: unknown, f: { get<T>(n: string): T }) => s.leaseCall({ op: 'renew', id: leaseId(f), increment: f.get('increment') });
  const revoke = (force: boolean) => async (_req: unknown, f: { get<T>(n: string): T }): Promise<LogicalResponse> => {
    await s.leaseCall({ op: 'revoke', id: leaseId(f), force });
    return f.get<boolean>('sync') ? {} : { status: 202 };
  };
  const revokePrefix = (force: boolean) => async (_req: unknown, f: { get<T>(n: string): T }): Promise<LogicalResponse> => {
    await s.leaseCall({ op: 'revoke-prefix', prefix: f.get('prefix'), force });
    return f.get<boolean>('sync') ? {} : { status: 202 };
  };
  const prefixFields: FieldSchemas = {
    prefix: { type: 'string', description: 'Lease id prefix.' },
    sync: idFields.sync,
  };
  const paths: PathDef[] = [
    {
      pattern: 'leases/lookup',
      fields: idFields,
      summary: 'Details of a lease.',
      operations: { update: async (_req, f) => s.leaseCall({ op: 'lookup', id: leaseId(f) }) },
    },
    {
      pattern: 'leases/lookup/(?<prefix>.*)',
      fields: { prefix: { type: 'string', description: 'Lease id prefix.' } },
      summary: 'List lease ids under a prefix (sudo).',
      operations: {
        list: async (_req, f) => {
          const r = await s.leaseCall({ op: 'list', prefix: f.get('prefix') });
          if (!(r.data?.keys as string[] | undefined)?.length) throw notFound();
          return r;
        },
      },
    },
    {
      pattern: 'leases',
      fields: { type: { type: 'string', description: 'Only "irrevocable" is supported.' } },
      summary: 'Leases whose revocation keeps failing (sudo).',
      operations: {
        read: async (_req, f) => {
          if (f.get('type') !== 'irrevocable') throw badRequest('only type=irrevocable is supported');
          return s.leaseCall({ op: 'irrevocable' });
        },
      },
    },
    {
      pattern: 'leases/count',
      fields: { type: { type: 'string', description: 'Only "irrevocable" is supported.' } },
      summary: 'How many leases keep failing to revoke (sudo).',
      operations: {
        read: async (_req, f) => {
          if (f.get('type') !== 'irrevocable') throw badRequest('only type=irrevocable is supported');
          const leases = ((await s.leaseCall({ op: 'irrevocable' })).data?.leases ?? []) as unknown[];
          return { data: { lease_count: leases.length } };
        },
      },
    },
    {
      pattern: 'leases/tidy',
      summary: 'Expire due leases and retry failed revocations now.',
      operations: {
        update: async () => {
          await s.leaseCall({ op: 'tidy' });
          return { status: 202, warnings: [TIDY_WARNING] };
        },
      },
    },
  ];
  // Current and legacy spellings.
  for (const base of ['leases/', '']) {
    paths.push(
      { pattern: `${base}renew`, fields: idFields, summary: 'Renew a lease.', operations: { update: renew } },
      { pattern: `${base}renew/(?<url_lease_id>.+)`, fields: idFields, summary: 'Renew a lease.', operations: { update: renew } },
      { pattern: `${base}revoke`, fields: idFields, summary: 'Revoke a lease.', operations: { update: revoke(false) } },
      { pattern: `${base}revoke/(?<url_lease_id>.+)`, fields: idFields, summary: 'Revoke a lease.', operations: { update: revoke(false) } },
      {
        pattern: `${base}revoke-prefix/(?<prefix>.+)`,
        fields: prefixFields,
        summary: 'Revoke every lease under a prefix (sudo).',
        operations: { update: revokePrefix(false) },
      },
      {
        pattern: `${base}revoke-force/(?<prefix>.+)`,
        fields: prefixFields,
        summary: 'Drop every lease under a prefix without revoking the secrets (sudo).',
        operations: { update: revokePrefix(true) },
      },
    );
  }
  return paths;
}
