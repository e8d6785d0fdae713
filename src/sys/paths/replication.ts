// sys/replication: DR status (unauthenticated) and the primary's operations — enable, demote,
// disable, secondary activation tokens (response-wrapped, or encrypted to a secondary's public
// key), revoking a secondary — plus the secondary's key pair for encrypted tokens and the
// internal endpoints a secondary pulls from (authenticated by the credential its token carried).
// On a secondary: enable (the pull loop runs from the SystemObject's alarm), DR operation tokens,
// promote, update-primary, reindex and disable.

import { encryptActivation, generateSecondaryKeyPair, validatePublicKey } from '../../core/replication/activation';
import { demotePrimary, disablePrimary, enablePrimary, issueSecondaryToken, primaryOnly, revokeSecondary, secondaryOnly, updatePrimary } from '../../core/replication/state';
import { drStatus, replicationStatus } from '../../core/replication/status';
import { validObjectName } from '../../core/replication/stream';
import { randomBase62 } from '../../crypto/random';
import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { SystemServices } from '../context';

const DEFAULT_TOKEN_TTL = 30 * 60;

const credentialFields = {
  secondary_id: { type: 'string' as const, description: 'The secondary id its activation token carried.' },
  credential: { type: 'string' as const, description: 'The credential its activation token carried.' },
  api_address: { type: 'string' as const, description: "The secondary's own API address (shown in the primary's status)." },
};

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
          const issued = issueSecondaryToken(state, { id: f.get<string>('id'), ttlSeconds: ttl, apiAddr }, { now, random: () => randomBase62(48) });
          // The token is handed out only once the secondary's record is stored.
          await dr.save(issued.state);
          if (publicKey) return { data: { token: await encryptActivation(issued.payload, publicKey) } };
          // Vault answers with the activation token response-wrapped, whatever the request asked.
          return { data: { ...issued.payload }, wrapTTL: ttl };
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
    {
      pattern: 'replication/dr/secondary/generate-public-key',
      summary: 'A key pair for encrypted activation tokens; the private key stays in this cluster.',
      operations: {
        update: async () => {
          const pair = await generateSecondaryKeyPair();
          await dr.keepSecondaryKey(pair.privateKeyJwk);
          return { data: { secondary_public_key: pair.publicKey } };
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/enable',
      fields: {
        token: { type: 'string', description: 'The activation token the primary issued.' },
        primary_api_addr: { type: 'string', description: "The primary's API address (needed with a response-wrapped token)." },
        ca_file: { type: 'string', description: 'Not supported: Workers have no per-request trust store.' },
        ca_path: { type: 'string', description: 'Not supported: Workers have no per-request trust store.' },
      },
      summary: 'Makes this cluster a DR secondary of the primary that issued the token. ERASES ALL DATA.',
      operations: {
        update: async (_req, f) => {
          const token = f.get<string>('token').trim();
          if (!token) throw badRequest('missing activation token');
          if (f.get<string>('ca_file') || f.get<string>('ca_path')) {
            throw badRequest('ca_file and ca_path are not supported: a Worker reaches the primary with the platform trust store');
          }
          const payload = await dr.activation(token, f.get<string>('primary_api_addr').trim());
          await dr.becomeSecondary(payload);
          return { warnings: ['All data of this cluster was erased: it now follows the primary and serves no requests until promoted.'] };
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/generate-operation-token/attempt',
      fields: {
        otp: { type: 'string', description: 'A 28-character OTP to encode the token with; generated when omitted.' },
        pgp_key: { type: 'string', description: 'Not supported.' },
        key: { type: 'string', description: 'A recovery key share authorising the attempt when no sudo token is sent.' },
      },
      summary: 'Start, read or cancel a DR operation token generation attempt (recovery key shares of the primary).',
      operations: {
        read: async () => ({ raw: { status: 200, body: await s.core.operationTokenGet() } }),
        update: async (req, f) => ({
          raw: {
            status: 200,
            body: await s.core.operationTokenStart(
              { otp: f.get<string>('otp'), pgp_key: f.get<string>('pgp_key'), key: f.get<string>('key') || undefined },
              await s.sudoOn(req.auth, 'sys/replication/dr/secondary/generate-operation-token/attempt'),
              () => dr.issueOperationToken(),
            ),
          },
        }),
        delete: async (req, f) => {
          await s.core.operationTokenCancel(await s.sudoOn(req.auth, 'sys/replication/dr/secondary/generate-operation-token/attempt'), f.get<string>('key') || undefined);
          return { raw: { status: 204 } };
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/generate-operation-token/update',
      fields: {
        key: { type: 'string', description: 'A recovery key share, hex or base64.' },
        nonce: { type: 'string', description: 'The nonce of the running attempt.' },
      },
      summary: 'Submit a recovery key share to the running DR operation token attempt.',
      operations: {
        update: async (_req, f) => ({
          raw: { status: 200, body: await s.core.operationTokenUpdate({ key: f.get<string>('key'), nonce: f.get<string>('nonce') }, () => dr.issueOperationToken()) },
        }),
      },
    },
    {
      pattern: 'replication/dr/secondary/operation-token/delete',
      fields: { dr_operation_token: { type: 'string', description: 'The DR operation token to revoke.' } },
      summary: 'Revokes the DR operation token.',
      operations: {
        update: async (_req, f) => {
          dr.revokeOperationToken(f.get<string>('dr_operation_token'));
          return null;
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/promote',
      fields: {
        dr_operation_token: { type: 'string', description: 'A DR operation token.' },
        primary_cluster_addr: { type: 'string', description: 'The address this cluster gives its own secondaries.' },
        force: { type: 'bool', description: 'Promote even if the initial sync never completed.' },
      },
      summary: 'Promotes this DR secondary to primary.',
      operations: {
        update: async (_req, f) => {
          dr.checkOperationToken(f.get<string>('dr_operation_token'));
          await dr.promote({ force: f.get<boolean>('force'), primaryClusterAddr: f.get<string>('primary_cluster_addr') });
          return { warnings: ['This cluster is now the DR primary: issue new activation tokens to the other secondaries.'] };
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/update-primary',
      fields: {
        dr_operation_token: { type: 'string', description: 'A DR operation token.' },
        token: { type: 'string', description: 'An activation token from the new primary (blank: forget the primary).' },
        primary_api_addr: { type: 'string', description: "The new primary's API address (needed with a response-wrapped token)." },
        ca_file: { type: 'string', description: 'Not supported.' },
        ca_path: { type: 'string', description: 'Not supported.' },
        update_primary_addrs: { type: 'comma-string-list', description: 'Not supported: give a token.' },
      },
      summary: 'Follows another primary of the same cluster, without erasing data.',
      operations: {
        update: async (_req, f) => {
          dr.checkOperationToken(f.get<string>('dr_operation_token'));
          if (f.get<string[]>('update_primary_addrs').length > 0) throw badRequest('update_primary_addrs is not supported: give an activation token');
          if (f.get<string>('ca_file') || f.get<string>('ca_path')) throw badRequest('ca_file and ca_path are not supported');
          const token = f.get<string>('token').trim();
          const payload = token ? await dr.activation(token, f.get<string>('primary_api_addr').trim()) : null;
          await dr.relink(updatePrimary(await dr.state(), payload, { now: Date.now() }));
          return null;
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/reindex',
      fields: {
        dr_operation_token: { type: 'string', description: 'A DR operation token.' },
        diff: { type: 'bool', description: 'Accepted: Coffer always compares keys (entry hashes) in the buckets that differ.' },
        force: { type: 'bool', description: 'Accepted: every object is compared whole.' },
        skip_flush: { type: 'bool', description: 'Accepted: there is no separate flush stage.' },
      },
      summary: "Compares every object with the primary's by Merkle tree and repairs what differs.",
      operations: {
        update: async (_req, f) => {
          dr.checkOperationToken(f.get<string>('dr_operation_token'));
          secondaryOnly(await dr.state());
          await dr.reindex();
          return null;
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/disable',
      fields: { dr_operation_token: { type: 'string', description: 'A DR operation token.' } },
      summary: 'Stops following the primary; re-enabling changes the cluster id.',
      operations: {
        update: async (_req, f) => {
          dr.checkOperationToken(f.get<string>('dr_operation_token'));
          await dr.leaveSecondary();
          return null;
        },
      },
    },
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
