// Where managed keys live: in the SystemObject's storage (behind the barrier), under
//   core/managed-keys/entry/<uuid>          the entry (JSON)
//   core/managed-keys/name/<name>           its uuid: names are unique across types
//   core/managed-keys/type/<type>/<name>    its uuid: LIST per (canonical) type
// Writes go through whatever Storage the caller gives (sys/ handlers: the request's transaction,
// so an entry and its indexes are committed together or not at all).

import { fromUtf8, utf8 } from '../crypto/encoding';
import { getJSON, putJSON, type Storage } from '../framework/storage';
import type { ManagedKeyEntry, ManagedKeyType } from './types';

export const MANAGED_KEYS_PREFIX = 'core/managed-keys/';
const ENTRY = `${MANAGED_KEYS_PREFIX}entry/`;
const NAME = `${MANAGED_KEYS_PREFIX}name/`;
const TYPE = `${MANAGED_KEYS_PREFIX}type/`;

export class ManagedKeyStore {
  constructor(private readonly storage: Storage) {}

  async byId(uuid: string): Promise<ManagedKeyEntry | null> {
    if (!/^[0-9a-f-]{36}$/.test(uuid)) return null;
    return await getJSON<ManagedKeyEntry>(this.storage, ENTRY + uuid);
  }

  async byName(name: string): Promise<ManagedKeyEntry | null> {
    if (name === '' || name.includes('/')) return null;
    const id = await this.storage.get(NAME + name);
    return id === null ? null : await this.byId(fromUtf8(id));
  }

  /** Names of the keys of one type, sorted. */
  async names(type: ManagedKeyType): Promise<string[]> {
    return (await this.storage.list(`${TYPE}${type}/`)).filter((k) => !k.endsWith('/'));
  }

  /** Every entry (engines resolve keys among them: ./resolve). */
  async all(): Promise<ManagedKeyEntry[]> {
    const out: ManagedKeyEntry[] = [];
    for (const id of await this.storage.list(ENTRY)) {
      const e = await this.byId(id);
      if (e) out.push(e);
    }
    return out;
  }

  /** Creates or replaces an entry (same uuid, name and type when replacing). */
  async put(entry: ManagedKeyEntry): Promise<void> {
    await putJSON(this.storage, ENTRY + entry.uuid, entry);
    await this.storage.put(NAME + entry.name, utf8(entry.uuid));
    await this.storage.put(`${TYPE}${entry.type}/${entry.name}`, utf8(entry.uuid));
  }

  async delete(entry: ManagedKeyEntry): Promise<void> {
    await this.storage.delete(`${TYPE}${entry.type}/${entry.name}`);
    await this.storage.delete(NAME + entry.name);
    await this.storage.delete(ENTRY + entry.uuid);
  }
}
