// sys/replication/dr/secondary/*: a secondary's key pair for encrypted activation tokens,
// enable (which erases the cluster and starts following), DR operation tokens (from the
// primary's recovery keys, like generate-root), and what they authorise: promote,
// update-primary, reindex, disable, revoking the token.

import { generateSecondaryKeyPair } from '../../core/replication/activation';
import { canEnableSecondary, secondaryOnly, updatePrimary } from '../../core/replication/state';
import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { FieldData } from '../../framework/fields';
import type { SystemServices } from '../context';

const OPERATION_TOKEN = { type: 'string' as const, description: 'A DR operation token.' };

export function replicationSecondaryPaths(s: SystemServices): PathDef[] {
  const dr = s.replication;
  /**
   * What promote, update-primary, reindex and disable need: a secondary (a primary is told so
   * before its token is looked at, as Vault) and its DR operation token.
   */
  const authorised = async (f: FieldData): Promise<void> => {
    secondaryOnly(await dr.state());
    dr.checkOperationToken(f.get<string>('dr_operation_token'));
  };
  return [
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
          // Before the token is unwrapped: a refused enable must not spend it.
          canEnableSecondary(await dr.state());
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
          secondaryOnly(await dr.state());
          dr.revokeOperationToken(f.get<string>('dr_operation_token'));
          return null;
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/promote',
      fields: {
        dr_operation_token: OPERATION_TOKEN,
        primary_cluster_addr: { type: 'string', description: 'The address this cluster gives its own secondaries.' },
        force: { type: 'bool', description: 'Promote even if the initial sync never completed.' },
      },
      summary: 'Promotes this DR secondary to primary.',
      operations: {
        update: async (_req, f) => {
          await authorised(f);
          await dr.promote({ force: f.get<boolean>('force'), primaryClusterAddr: f.get<string>('primary_cluster_addr') });
          return { warnings: ['This cluster is now the DR primary: issue new activation tokens to the other secondaries.'] };
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/update-primary',
      fields: {
        dr_operation_token: OPERATION_TOKEN,
        token: { type: 'string', description: 'An activation token from the new primary (blank: forget the primary).' },
        primary_api_addr: { type: 'string', description: "The new primary's API address (needed with a response-wrapped token)." },
        ca_file: { type: 'string', description: 'Not supported.' },
        ca_path: { type: 'string', description: 'Not supported.' },
        update_primary_addrs: { type: 'comma-string-list', description: 'Not supported: give a token.' },
      },
      summary: 'Follows another primary of the same cluster, without erasing data.',
      operations: {
        update: async (_req, f) => {
          await authorised(f);
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
        dr_operation_token: OPERATION_TOKEN,
        diff: { type: 'bool', description: 'Accepted: Coffer always compares keys (entry hashes) in the buckets that differ.' },
        force: { type: 'bool', description: 'Accepted: every object is compared whole.' },
        skip_flush: { type: 'bool', description: 'Accepted: there is no separate flush stage.' },
      },
      summary: "Compares every object with the primary's by Merkle tree and repairs what differs.",
      operations: {
        update: async (_req, f) => {
          await authorised(f);
          await dr.reindex();
          return null;
        },
      },
    },
    {
      pattern: 'replication/dr/secondary/disable',
      fields: { dr_operation_token: OPERATION_TOKEN },
      summary: 'Stops following the primary; re-enabling changes the cluster id.',
      operations: {
        update: async (_req, f) => {
          await authorised(f);
          await dr.leaveSecondary();
          return null;
        },
      },
    },
  ];
}
