// sys/replication: DR status (unauthenticated) and the primary's operations — enable, demote,
// disable, secondary activation tokens (response-wrapped, or encrypted to a secondary's public
// key), revoking a secondary. A secondary's operations are in replication-secondary.ts, the
// endpoints a secondary pulls from in replication-internal.ts.

import { encryptActivation, validatePublicKey } from '../../core/replication/activation';
import { demotePrimary, disablePrimary, enablePrimary, issueSecondaryToken, primaryOnly, revokeSecondary } from '../../core/replication/state';
import { drStatus, replicationStatus } from '../../core/replication/status';
import { randomBase62 } from '../../crypto/random';
import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { SystemServices } from '../context';
import { replicationInternalPaths } from './replication-internal';
import { replicationSecondaryPaths } from './replication-secondary';

const DEFAULT_TOKEN_TTL = 30 * 60;

export function replicationPaths(s: SystemServices): PathDef[] {
  const dr = s.replication;
  const status = async () => {
    const state = await dr.state();
    const facts = {
      now: Date.now(),
      lastWal: state.mode === 'primary' ? await dr.lastWal() : 0,
      lastRemoteWal: state.mode === 'secondary' ? await dr.lastRemoteWal() : 0,
      merkleRoot: await dr.merkleRoot(),
      lastReindexEpoch: dr.lastReindexEpoch(),
    };
    return drStatus(state, facts);
  };
  return [
    {
      pattern: 'replication/status',
      summary: 'Replication status of every kind (DR; performance replication is not offered).',
      operations: { read: async () => ({ data: { ...replicationStatus(await status()) } }) },
    },
    {
      pattern: 'replication/dr/status',
      summary: 'DR replication status.',
      operations: { read: async () => ({ data: { ...(await status()) } }) },
    },
    {
      pattern: 'replication/dr/primary/enable',
      fields: { primary_cluster_addr: { type: 'string', description: 'The address secondaries are given (defaults to COFFER_API_ADDR).' } },
      summary: 'Makes this cluster a DR primary: every object starts recording its changes.',
      operations: {
        update: async (_req, f) => {
          const next = enablePrimary(await dr.state(), { primaryClusterAddr: f.get<string>('primary_cluster_addr') }, { newId: () => crypto.randomUUID() });
          await dr.recording(true);
          await dr.save(next);
          return null;
        },
      },
    },
    {
      pattern: 'replication/dr/primary/demote',
      summary: 'Demotes the primary to a secondary with no primary (cluster id and data kept).',
      operations: {
        update: async () => {
          const next = demotePrimary(await dr.state(), { now: Date.now() });
          await dr.save(next);
          await dr.recording(false);
          await dr.followAll();
          return null;
        },
      },
    },
    {
      pattern: 'replication/dr/primary/disable',
      summary: 'Turns DR replication off; secondaries lose their primary.',
      operations: {
        update: async () => {
          const next = disablePrimary(await dr.state());
          await dr.save(next);
          await dr.recording(false);
          return null;
        },
      },
    },
    {
      pattern: 'replication/dr/primary/secondary-token',
      fields: {
        id: { type: 'string', description: 'An identifier for the secondary (unique among this primary\'s secondaries).' },
        ttl: { type: 'duration', description: 'How long the activation token may be used.', default: DEFAULT_TOKEN_TTL },
        secondary_public_key: { type: 'string', description: 'Encrypt the activation token to this key instead of wrapping it.' },
      },
      summary: 'Issues an activation token for a new secondary (sudo).',
      operations: {
        update: async (_req, f) => {
          const state = primaryOnly(await dr.state());
          const apiAddr = dr.apiAddr || state.primaryClusterAddr;
          if (!apiAddr) throw badRequest('no address to give secondaries: set COFFER_API_ADDR or enable the primary with primary_cluster_addr');
          const publicKey = f.get<string>('secondary_public_key');
          if (publicKey) await validatePublicKey(publicKey);
          const ttl = f.get<number>('ttl') || DEFAULT_TOKEN_TTL;
          const now = Date.now();
          const issued = issueSecondaryToken(state, { id: f.get<string>('id'), ttlSeconds: ttl, apiAddr, tokenShards: dr.tokenShards }, { now, random: () => randomBase62(48) });
          // The token is handed out only once the secondary's record is stored.
          await dr.save(issued.state);
          if (publicKey) return { data: { token: await encryptActivation(issued.payload, publicKey) } };
          // Vault answers with the activation token response-wrapped, whatever the request asked,
          // as a JWT that tells the secondary where to unwrap it.
          return { data: { ...issued.payload }, wrapTTL: ttl, wrapJwtAddr: apiAddr };
        },
      },
    },
    {
      pattern: 'replication/dr/primary/revoke-secondary',
      fields: { id: { type: 'string', description: 'The secondary to cut off.' } },
      summary: 'Revokes a secondary: its next pull is refused.',
      operations: {
        update: async (_req, f) => {
          await dr.save(revokeSecondary(await dr.state(), { id: f.get<string>('id') }));
          return null;
        },
      },
    },
    ...replicationSecondaryPaths(s),
    ...replicationInternalPaths(s),
  ];
}
