// Runs requests through the KV v2 backend with the real pipeline (dispatch) over in-memory storage.
import { dispatch, type Authorizer, type MountContext } from '../../../../../src/pipeline/dispatch';
import type { AuthContext, LogicalResponse, WireOperation } from '../../../../../src/framework/backend';
import { CofferError } from '../../../../../src/framework/errors';
import { MemoryStorage, StorageTransaction } from '../../../../../src/framework/storage';
import { kvV2Backend } from '../../../../../src/engines/kv/v2';

const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
const allowAll: Authorizer = { authorize: () => ({ sudo: true }), grantsCreateAndUpdate: () => true };
const mount: MountContext = {
  mountPoint: 'kv/',
  mountType: 'kv',
  mountAccessor: 'kv_1',
  mountConfig: { defaultLeaseTTL: 60, maxLeaseTTL: 120 },
  mountOptions: { version: '2' },
};

export interface Result {
  status: number;
  response?: LogicalResponse;
  errors?: string[];
}

/** `authorizer` defaults to allowing everything (and skipping existence checks, as for root). */
export function kv2(authorizer: Authorizer = allowAll) {
  const storage = new MemoryStorage();
  const backend = kvV2Backend();
  const call = async (operation: WireOperation, path: string, data: Record<string, unknown> = {}): Promise<Result> => {
    try {
      const response = await dispatch(
        backend,
        { id: 'req', operation, path: `kv/${path}`, data, auth: root, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 },
        mount,
        new StorageTransaction(storage),
        authorizer,
      );
      return { status: response.raw?.status ?? 200, response };
    } catch (e) {
      if (e instanceof CofferError) return { status: e.status, errors: e.errors };
      throw e;
    }
  };
  return { storage, backend, call };
}
