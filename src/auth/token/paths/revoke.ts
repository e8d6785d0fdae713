// auth/token/revoke, revoke-self, revoke-accessor and revoke-orphan.
import { BATCH_TOKEN_PREFIX } from '../../../core/tokens/entry';
import type { PathDef } from '../../../framework/backend';
import { badRequest, permissionDenied } from '../../../framework/errors';
import type { TokenOps } from '../ops';

const notBatch = (token: string) => {
  if (token.startsWith(BATCH_TOKEN_PREFIX)) throw badRequest('batch tokens cannot be revoked');
};

export function revokePaths(ops: TokenOps): PathDef[] {
  return [
    {
      pattern: 'revoke-self',
      summary: 'Revoke the calling token and its children.',
      operations: {
        update: async (req) => {
          const caller = await ops.caller(req);
          if (!caller) throw permissionDenied();
          notBatch(caller.token);
          await ops.revokeToken(caller.token);
          return null;
        },
      },
    },
    {
      pattern: 'revoke',
      fields: { token: { type: 'string', description: 'Token to revoke (with its children).', required: true } },
      summary: 'Revoke a token and its children.',
      operations: {
        update: async (_req, f) => {
          notBatch(f.get('token'));
          await ops.revokeToken(f.get('token'));
          return null;
        },
      },
    },
    {
      pattern: 'revoke-accessor',
      fields: { accessor: { type: 'string', description: 'Accessor of the token to revoke.', required: true } },
      summary: 'Revoke a token and its children, by accessor.',
      operations: {
        update: async (_req, f) => {
          await ops.revokeAccessor(f.get('accessor'));
          return null;
        },
      },
    },
    {
      pattern: 'revoke-orphan',
      fields: { token: { type: 'string', description: 'Token to revoke; its children become orphans.', required: true } },
      summary: 'Revoke a token, leaving its children as orphans (root or sudo).',
      operations: {
        update: async (req, f) => {
          if (!req.sudo) throw badRequest('root or sudo privileges required to revoke and orphan');
          notBatch(f.get('token'));
          await ops.revokeOrphan(f.get('token'));
          return null;
        },
      },
    },
  ];
}
