// The identity store's records as persisted, and what the rest of the system sees of them.
// Field names follow Vault's identity protobufs; times are RFC 3339 strings with nanoseconds.

import type { IdentityContext } from '../../framework/identity-templates';

export interface EntityRecord {
  id: string;
  /** As given; the name index holds it lower-cased (names are case-insensitive). */
  name: string;
  /** null until set, as Vault leaves it. */
  metadata: Record<string, string> | null;
  policies: string[];
  disabled: boolean;
  creationTime: string;
  lastUpdateTime: string;
  /** Entities merged into this one (null until the first merge). */
  mergedEntityIds: string[] | null;
  /** Ids of this entity's aliases, in the order they were attached. */
  aliasIds: string[];
}

/** An entity alias (Vault's Alias with an entity as canonical object). */
export interface AliasRecord {
  id: string;
  canonicalId: string;
  mountAccessor: string;
  name: string;
  /** Set by auth methods at login (null until then). */
  metadata: Record<string, string> | null;
  customMetadata: Record<string, string>;
  creationTime: string;
  lastUpdateTime: string;
  mergedFromCanonicalIds: string[] | null;
  local: boolean;
}

export type GroupType = 'internal' | 'external';

export interface GroupRecord {
  id: string;
  name: string;
  type: GroupType;
  metadata: Record<string, string> | null;
  policies: string[];
  memberEntityIds: string[];
  /** Groups that are members of this one (mirrored by parentGroupIds on each of them). */
  memberGroupIds: string[];
  /** Groups this one is a member of. */
  parentGroupIds: string[];
  creationTime: string;
  lastUpdateTime: string;
  /** Bumped on every write of the group, as Vault does. */
  modifyIndex: number;
  /** The group's alias (external groups only), or null. */
  aliasId: string | null;
}

export interface GroupAliasRecord {
  id: string;
  canonicalId: string;
  mountAccessor: string;
  name: string;
  creationTime: string;
  lastUpdateTime: string;
  mergedFromCanonicalIds: string[] | null;
}

/** An auth mount as the identity store needs it: aliases live on auth mounts. */
export interface AuthMountInfo {
  accessor: string;
  /** Route prefix, e.g. "auth/userpass/" (Vault's mount_path for auth mounts). */
  path: string;
  type: string;
  local: boolean;
}

/** Finds auth mounts by accessor (the identity object asks the SystemObject, with a short cache). */
export interface MountDirectory {
  byAccessor(accessor: string): Promise<AuthMountInfo | null>;
}

/**
 * An entity and its groups as Sentinel's `identity` import shows them (Vault's field names). Plain
 * JSON: it crosses Durable Object RPC inside IdentityView. Aliases carry no mount_path/mount_type:
 * the view is built without the mount directory (identityView has no cheap way to reach it).
 */
export interface SentinelIdentity {
  entity: {
    id: string;
    name: string;
    metadata: Record<string, string>;
    policies: string[];
    disabled: boolean;
    creation_time: string;
    last_update_time: string;
    merged_entity_ids: string[];
    aliases: {
      id: string;
      name: string;
      mount_accessor: string;
      mount_path?: string;
      mount_type?: string;
      metadata: Record<string, string>;
      custom_metadata: Record<string, string>;
      creation_time: string;
      last_update_time: string;
      merged_from_entity_ids: string[];
    }[];
  };
  /** Direct and inherited groups. */
  groups: {
    id: string;
    name: string;
    metadata: Record<string, string>;
    policies: string[];
    member_entity_ids: string[];
    parent_group_ids: string[];
    creation_time: string;
    last_update_time: string;
  }[];
}

/** What authorisation needs of an entity: its policies (entity and groups), state and template values. */
export interface IdentityView {
  /** Entity and group policies, deduplicated and sorted; never "root". */
  policies: string[];
  disabled: boolean;
  context: IdentityContext;
  /** What RGPs and EGPs see of the entity (the `identity` import). */
  sentinel: SentinelIdentity;
}

/** What an auth method hands the identity store when someone logs in. */
export interface IdentityLoginInput {
  mountAccessor: string;
  mountPath: string;
  mountType: string;
  aliasName: string;
  /** Replaces the alias's metadata when given. */
  aliasMetadata?: Record<string, string>;
  /**
   * Names of the group aliases (on this mount) the user belongs to, when the method knows them:
   * the entity's external groups for this mount become exactly those. Absent: left alone.
   */
  groupAliasNames?: string[];
}

export interface IdentityLoginResult {
  entityId: string;
  disabled: boolean;
  /** The entity's identity policies (entity and groups). */
  policies: string[];
}
