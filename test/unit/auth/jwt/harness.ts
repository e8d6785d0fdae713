// The JWT auth method at engine level: its backend over MemoryStorage through dispatch (no Durable
// Object). Keys and tokens come from test/helpers/jwt.ts.
import { dispatch, type Authorizer, type MountContext } from '../../../../src/pipeline/dispatch';
import type { AuthContext, LogicalResponse, WireOperation } from '../../../../src/framework/backend';
import { MemoryStorage, StorageTransaction } from '../../../../src/framework/storage';
import { jwtBackend } from '../../../../src/auth/jwt';

const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
const allowAll: Authorizer = { authorize: () => ({ sudo: true }), grantsCreateAndUpdate: () => false };
/** The mount's max lease TTL is 24h, for the role warnings. */
export const MOUNT_MAX_TTL = 86400;
const mount: MountContext = { mountPoint: 'auth/jwt/', mountType: 'jwt', mountAccessor: 'auth_jwt_1', mountConfig: { defaultLeaseTTL: 3600, maxLeaseTTL: MOUNT_MAX_TTL }, mountOptions: {} };

export interface Engine {
  call(operation: WireOperation, path: string, data?: Record<string, unknown>, opts?: { clientIP?: string }): Promise<LogicalResponse>;
  storage: MemoryStorage;
}

/** `apis`: where providers find the APIs they call (the emulators' URLs). */
export function engine(apis: { googleAdminApi?: string; microsoftGraph?: string } = {}): Engine {
  const storage = new MemoryStorage();
  const backend = jwtBackend(null, apis);
  return {
    storage,
    call: (operation, path, data = {}, opts = {}) => {
      const wire = { id: 'r', operation, path: `auth/jwt/${path}`, data, auth: operation === 'write' && path === 'login' ? null : root, clientIP: opts.clientIP ?? '10.0.0.5', headers: {}, wrapTTL: 0 };
      return dispatch(backend, wire, mount, new StorageTransaction(storage), allowAll);
    },
  };
}

export { expectError } from '../../../helpers/errors';
export * from '../../../helpers/jwt';
