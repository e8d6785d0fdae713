// Shared setup for the identity unit tests: an in-memory store and a fixed auth mount table.
import { pendingNotice } from '../../../../src/engines/identity/store';
import { IdentityStore } from '../../../../src/engines/identity/store';
import type { AuthMountInfo, MountDirectory } from '../../../../src/core/identity/types';
import { CofferError } from '../../../../src/framework/errors';
import { MemoryStorage } from '../../../../src/framework/storage';

export const USERPASS = 'auth_userpass_0a1b2c3d';
export const JWT = 'auth_jwt_4e5f6a7b';
export const LOCAL = 'auth_userpass_local_99';

export const MOUNTS: AuthMountInfo[] = [
  { accessor: USERPASS, path: 'auth/userpass/', type: 'userpass', local: false },
  { accessor: JWT, path: 'auth/jwt/', type: 'jwt', local: false },
  { accessor: LOCAL, path: 'auth/local/', type: 'userpass', local: true },
];

export const dir: MountDirectory = { byAccessor: async (accessor) => MOUNTS.find((m) => m.accessor === accessor) ?? null };

export function fresh(): { mem: MemoryStorage; store: IdentityStore } {
  const mem = new MemoryStorage();
  return { mem, store: new IdentityStore(mem) };
}

/** Whether a change notice is pending, and clears it (so each step can be checked on its own). */
export async function takeNotice(mem: MemoryStorage): Promise<boolean> {
  const pending = (await pendingNotice(mem)) !== null;
  await mem.delete('notice/identity-changed');
  return pending;
}

/** A snapshot of every key and value, to show that a failed operation changed nothing. */
export function snapshot(mem: MemoryStorage): Record<string, string> {
  return Object.fromEntries([...mem.data].map(([k, v]) => [k, new TextDecoder().decode(v)]).sort());
}

/** The message of the 400 a promise rejects with (fails the test if it resolves or rejects otherwise). */
export async function refusal(p: Promise<unknown>, status = 400): Promise<string> {
  let error: unknown = null;
  try {
    await p;
  } catch (e) {
    error = e;
  }
  if (!(error instanceof CofferError)) throw new Error(`expected a CofferError, got ${String(error)}`);
  if (error.status !== status) throw new Error(`expected status ${status}, got ${error.status}: ${error.errors.join('; ')}`);
  return error.errors[0];
}
