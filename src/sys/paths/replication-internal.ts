// sys/replication/dr/internal/*: what a DR secondary pulls from its primary — log pages after
// its positions, Merkle buckets and entry hashes, values for a repair. Cluster traffic (Vault's
// cluster port): authenticated by the id and credential the activation token carried, neither
// audited nor governed by EGPs.

import { validObjectName } from '../../core/replication/stream';
import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { SystemServices } from '../context';

const credentialFields = {
  secondary_id: { type: 'string' as const, description: 'The secondary id its activation token carried.' },
  credential: { type: 'string' as const, description: 'The credential its activation token carried.' },
  api_address: { type: 'string' as const, description: "The secondary's own API address (shown in the primary's status)." },
};

export function replicationInternalPaths(s: SystemServices): PathDef[] {
  const dr = s.replication;
  /** The secondary's call: authenticated by id and credential, its heartbeat recorded. */
  const secondary = async (f: { get<T>(name: string): T }) => {
    const id = f.get<string>('secondary_id');
    const credential = f.get<string>('credential');
    if (!id || !credential) throw badRequest('secondary_id and credential are required');
    await dr.authenticate(id, credential, f.get<string>('api_address'));
    return id;
  };
  const object = (name: string) => {
    if (!validObjectName(name)) throw badRequest(`unknown replicated object "${name}"`);
    return name;
  };
  return [
    {
      pattern: 'replication/dr/internal/pull',
      fields: {
        ...credentialFields,
        positions: { type: 'map', description: 'Applied sequence number per object.' },
        limit: { type: 'int', description: 'Most entries per object.', default: 1000 },
      },
      summary: "A secondary's pull: the log pages after its positions.",
      operations: {
        update: async (_req, f) => {
          const id = await secondary(f);
          const positions: Record<string, number> = {};
          for (const [name, seq] of Object.entries(f.get<Record<string, unknown>>('positions') ?? {})) {
            if (!Number.isSafeInteger(seq) || (seq as number) < 0) throw badRequest(`position of "${object(name)}" must be a non-negative integer`);
            positions[object(name)] = seq as number;
          }
          return { data: { ...(await dr.pull(id, positions, f.get<number>('limit'))) } };
        },
      },
    },
    {
      pattern: 'replication/dr/internal/merkle',
      fields: {
        ...credentialFields,
        object: { type: 'string', description: 'The object compared.' },
        buckets: { type: 'comma-int-list', description: 'Buckets whose entry hashes are wanted (none: the root and bucket hashes).' },
      },
      summary: "A secondary's Merkle comparison: bucket hashes, or entry hashes of buckets.",
      operations: {
        update: async (req, f) => {
          await secondary(f);
          const buckets = 'buckets' in req.data ? f.get<number[]>('buckets') : undefined;
          return { data: { ...(await dr.merkle(object(f.get<string>('object')), buckets)) } };
        },
      },
    },
    {
      pattern: 'replication/dr/internal/values',
      fields: { ...credentialFields, object: { type: 'string', description: 'The object read.' }, keys: { type: 'string-list', description: 'Keys wanted.' } },
      summary: "A secondary's repair: stored values by key.",
      operations: {
        update: async (_req, f) => {
          await secondary(f);
          return { data: { values: await dr.values(object(f.get<string>('object')), f.get<string[]>('keys')) } };
        },
      },
    },
  ];
}
