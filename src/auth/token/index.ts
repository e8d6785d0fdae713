// The token auth method (auth/token/): creating, looking up, renewing and revoking tokens, token
// roles, and tidying. Handlers run in the caller's token-store shard (see ops.ts).
import type { Backend } from '../../framework/backend';
import { notFound } from '../../framework/errors';
import { createPaths } from './paths/create';
import { lookupPaths } from './paths/lookup';
import type { TokenOps } from './ops';
import { renewPaths } from './paths/renew';
import { revokePaths } from './paths/revoke';
import { rolePaths } from './paths/roles';

const TOKEN_UNAUTHENTICATED_PATHS: string[] = [];
/** Paths that need sudo in addition to the operation's capability (reference §4.6). */
export const TOKEN_SUDO_PATHS = ['revoke-orphan', 'revoke-orphan/*', 'accessors', 'accessors/*'];

export function tokenBackend(ops: TokenOps): Backend {
  return {
    type: 'token',
    unauthenticatedPaths: TOKEN_UNAUTHENTICATED_PATHS,
    sudoPaths: TOKEN_SUDO_PATHS,
    paths: [
      ...createPaths(ops),
      ...lookupPaths(ops),
      ...renewPaths(ops),
      ...revokePaths(ops),
      ...rolePaths(ops),
      {
        pattern: 'accessors/?',
        summary: 'List the accessors of every token (sudo).',
        operations: {
          list: async () => {
            const keys = await ops.accessors();
            if (keys.length === 0) throw notFound();
            return { data: { keys } };
          },
        },
      },
      {
        pattern: 'tidy',
        summary: 'Clean up the token store: expired tokens, dangling child and lease-holder records.',
        operations: {
          update: async () => {
            await ops.tidy();
            return { warnings: ['Tidy operation successfully started. Any information from the operation will be printed to the server\'s logs.'] };
          },
        },
      },
    ],
  };
}
