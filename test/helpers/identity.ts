// Shared by the identity tests: a snapshot of the whole identity store, to show that a refused
// request left it untouched.
import { api } from './api';

/** Every entity, alias, group and group alias as `token` (root) reads them. */
export async function identityState(token: string): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  for (const kind of ['entity', 'entity-alias', 'group', 'group-alias']) {
    const keys: string[] = (await api('GET', `identity/${kind}/id?list=true`, { token })).body?.data?.keys ?? [];
    for (const id of keys) state[`identity/${kind}/id/${id}`] = (await api('GET', `identity/${kind}/id/${id}`, { token })).body.data;
  }
  return state;
}
