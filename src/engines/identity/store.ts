// Where identity records and their indexes live in storage. Every writer goes through here, so
// records and indexes change together, inside the request's one transaction.
//
//   entity/<id>                        entity-alias/<id>        group/<id>      group-alias/<id>
//   index/entity-name/<lower name>     -> entity id
//   index/group-name/<lower name>      -> group id
//   index/entity-alias/<accessor>/<lower name>  -> alias id
//   index/group-alias/<accessor>/<lower name>   -> group alias id
//   index/entity-groups/<entity id>/<group id>  (the groups an entity is a direct member of)
//   notice/identity-changed            (a change existing tokens must hear about; see notice())
//
// Every key component is URI-encoded: names may contain '/', and ids come from requests.

import { badRequest } from '../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { fromUtf8, utf8 } from '../../crypto/encoding';
import { randomUUID } from '../../crypto/random';
import type { AliasRecord, EntityRecord, GroupAliasRecord, GroupRecord } from '../../core/identity/types';

const ENTITY = 'entity/';
const ALIAS = 'entity-alias/';
const GROUP = 'group/';
const GROUP_ALIAS = 'group-alias/';
const ENTITY_NAME = 'index/entity-name/';
const GROUP_NAME = 'index/group-name/';
const ALIAS_FACTORS = 'index/entity-alias/';
const GROUP_ALIAS_FACTORS = 'index/group-alias/';
const ENTITY_GROUPS = 'index/entity-groups/';
const NOTICE = 'notice/identity-changed';

/** Lone surrogates cannot be encoded (nor stored faithfully): such names and ids are bad input. */
function enc(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    throw badRequest(`invalid text ${JSON.stringify(text)}: not valid Unicode`);
  }
}
const dec = decodeURIComponent;
/** Names are case-insensitive (Vault's default); records keep the case they were given. */
export const nameKey = (name: string): string => enc(name.toLowerCase());
const factorsKey = (accessor: string, name: string): string => `${enc(accessor)}/${nameKey(name)}`;

interface IndexEntry {
  id: string;
}

export class IdentityStore {
  constructor(readonly storage: Storage) {}

  private async indexed(key: string): Promise<string | null> {
    return (await getJSON<IndexEntry>(this.storage, key))?.id ?? null;
  }

  private async ids(prefix: string): Promise<string[]> {
    return (await this.storage.list(prefix)).filter((k) => !k.endsWith('/')).map(dec);
  }

  // ---- entities ----

  async entity(id: string): Promise<EntityRecord | null> {
    return id ? getJSON<EntityRecord>(this.storage, ENTITY + enc(id)) : null;
  }

  async entityByName(name: string): Promise<EntityRecord | null> {
    const id = name ? await this.indexed(ENTITY_NAME + nameKey(name)) : null;
    return id ? this.entity(id) : null;
  }

  /** Writes an entity; `previous` (the stored version) keeps the name index in step. */
  async putEntity(entity: EntityRecord, previous: EntityRecord | null): Promise<void> {
    if (previous && nameKey(previous.name) !== nameKey(entity.name)) await this.storage.delete(ENTITY_NAME + nameKey(previous.name));
    await putJSON(this.storage, ENTITY_NAME + nameKey(entity.name), { id: entity.id } satisfies IndexEntry);
    await putJSON(this.storage, ENTITY + enc(entity.id), entity);
  }

  async removeEntity(entity: EntityRecord): Promise<void> {
    await this.storage.delete(ENTITY_NAME + nameKey(entity.name));
    await this.storage.delete(ENTITY + enc(entity.id));
  }

  entityIds(): Promise<string[]> {
    return this.ids(ENTITY);
  }

  // ---- entity aliases ----

  async alias(id: string): Promise<AliasRecord | null> {
    return id ? getJSON<AliasRecord>(this.storage, ALIAS + enc(id)) : null;
  }

  async aliasByFactors(accessor: string, name: string): Promise<AliasRecord | null> {
    const id = accessor && name ? await this.indexed(ALIAS_FACTORS + factorsKey(accessor, name)) : null;
    return id ? this.alias(id) : null;
  }

  async putAlias(alias: AliasRecord, previous: AliasRecord | null): Promise<void> {
    if (previous && factorsKey(previous.mountAccessor, previous.name) !== factorsKey(alias.mountAccessor, alias.name)) {
      await this.storage.delete(ALIAS_FACTORS + factorsKey(previous.mountAccessor, previous.name));
    }
    await putJSON(this.storage, ALIAS_FACTORS + factorsKey(alias.mountAccessor, alias.name), { id: alias.id } satisfies IndexEntry);
    await putJSON(this.storage, ALIAS + enc(alias.id), alias);
  }

  async removeAlias(alias: AliasRecord): Promise<void> {
    await this.storage.delete(ALIAS_FACTORS + factorsKey(alias.mountAccessor, alias.name));
    await this.storage.delete(ALIAS + enc(alias.id));
  }

  aliasIds(): Promise<string[]> {
    return this.ids(ALIAS);
  }

  /** The aliases of an entity, in attachment order (ids that do not resolve are skipped). */
  async aliasesOf(entity: EntityRecord): Promise<AliasRecord[]> {
    const out: AliasRecord[] = [];
    for (const id of entity.aliasIds) {
      const alias = await this.alias(id);
      if (alias) out.push(alias);
    }
    return out;
  }

  // ---- groups ----

  async group(id: string): Promise<GroupRecord | null> {
    return id ? getJSON<GroupRecord>(this.storage, GROUP + enc(id)) : null;
  }

  async groupByName(name: string): Promise<GroupRecord | null> {
    const id = name ? await this.indexed(GROUP_NAME + nameKey(name)) : null;
    return id ? this.group(id) : null;
  }

  /** Writes a group (bumping its modify index); entity membership indexes follow memberEntityIds. */
  async putGroup(group: GroupRecord, previous: GroupRecord | null): Promise<void> {
    if (previous && nameKey(previous.name) !== nameKey(group.name)) await this.storage.delete(GROUP_NAME + nameKey(previous.name));
    const before = new Set(previous?.memberEntityIds ?? []);
    const after = new Set(group.memberEntityIds);
    for (const id of before) if (!after.has(id)) await this.storage.delete(`${ENTITY_GROUPS}${enc(id)}/${enc(group.id)}`);
    for (const id of after) if (!before.has(id)) await this.storage.put(`${ENTITY_GROUPS}${enc(id)}/${enc(group.id)}`, utf8(''));
    group.modifyIndex = (previous?.modifyIndex ?? 0) + 1;
    await putJSON(this.storage, GROUP_NAME + nameKey(group.name), { id: group.id } satisfies IndexEntry);
    await putJSON(this.storage, GROUP + enc(group.id), group);
  }

  async removeGroup(group: GroupRecord): Promise<void> {
    for (const id of group.memberEntityIds) await this.storage.delete(`${ENTITY_GROUPS}${enc(id)}/${enc(group.id)}`);
    await this.storage.delete(GROUP_NAME + nameKey(group.name));
    await this.storage.delete(GROUP + enc(group.id));
  }

  groupIds(): Promise<string[]> {
    return this.ids(GROUP);
  }

  /** Ids of the groups an entity is a direct member of, sorted. */
  directGroupIds(entityId: string): Promise<string[]> {
    return this.ids(`${ENTITY_GROUPS}${enc(entityId)}/`);
  }

  // ---- group aliases ----

  async groupAlias(id: string): Promise<GroupAliasRecord | null> {
    return id ? getJSON<GroupAliasRecord>(this.storage, GROUP_ALIAS + enc(id)) : null;
  }

  async groupAliasByFactors(accessor: string, name: string): Promise<GroupAliasRecord | null> {
    const id = accessor && name ? await this.indexed(GROUP_ALIAS_FACTORS + factorsKey(accessor, name)) : null;
    return id ? this.groupAlias(id) : null;
  }

  async putGroupAlias(alias: GroupAliasRecord, previous: GroupAliasRecord | null): Promise<void> {
    if (previous && factorsKey(previous.mountAccessor, previous.name) !== factorsKey(alias.mountAccessor, alias.name)) {
      await this.storage.delete(GROUP_ALIAS_FACTORS + factorsKey(previous.mountAccessor, previous.name));
    }
    await putJSON(this.storage, GROUP_ALIAS_FACTORS + factorsKey(alias.mountAccessor, alias.name), { id: alias.id } satisfies IndexEntry);
    await putJSON(this.storage, GROUP_ALIAS + enc(alias.id), alias);
  }

  async removeGroupAlias(alias: GroupAliasRecord): Promise<void> {
    await this.storage.delete(GROUP_ALIAS_FACTORS + factorsKey(alias.mountAccessor, alias.name));
    await this.storage.delete(GROUP_ALIAS + enc(alias.id));
  }

  groupAliasIds(): Promise<string[]> {
    return this.ids(GROUP_ALIAS);
  }

  // ---- change notices ----

  /**
   * Records, in the same transaction as the change, that tokens already issued may now be allowed
   * something else. The hosting object passes it on after the commit (and retries until it could).
   */
  async notice(): Promise<void> {
    await this.storage.put(NOTICE, utf8(randomUUID()));
  }
}

/** The pending change notice, if any (a nonce, so a newer one is not cleared by mistake). */
export async function pendingNotice(storage: Storage): Promise<string | null> {
  const raw = await storage.get(NOTICE);
  return raw === null ? null : fromUtf8(raw);
}

/** Clears the notice if it is still the one that was passed on. */
export async function clearNotice(storage: Storage, nonce: string): Promise<void> {
  if ((await pendingNotice(storage)) === nonce) await storage.delete(NOTICE);
}
