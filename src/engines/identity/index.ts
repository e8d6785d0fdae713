// Vault's identity secrets engine (the identity/ mount): entities, entity aliases, groups, group
// aliases and lookups, plus what the hosting object offers the rest of the cluster: entity views
// for identity-aware ACLs, and entity resolution for auth methods at login.

import type { Backend } from '../../framework/backend';
import type { Storage } from '../../framework/storage';
import { loginEntity } from './login';
import { aliasPaths } from './paths/entity-alias';
import { entityPaths } from './paths/entity';
import { groupAliasPaths } from './paths/group-alias';
import { groupPaths } from './paths/group';
import { lookupPaths } from './paths/lookup';
import { IdentityStore } from './store';
import type { IdentityLoginInput, IdentityLoginResult, IdentityView, MountDirectory } from '../../core/identity/types';
import { entityViews } from './views';

export type { AuthMountInfo, IdentityLoginInput, IdentityLoginResult, IdentityView, MountDirectory } from '../../core/identity/types';
export { clearNotice, pendingNotice } from './store';

/** Merging hands one entity's logins and groups to another: sudo, as in Vault. */
export const IDENTITY_SUDO_PATHS = ['entity/merge', 'entity/merge/'];

export function identityBackend(mounts: MountDirectory): Backend {
  return {
    type: 'identity',
    sudoPaths: IDENTITY_SUDO_PATHS,
    paths: [...entityPaths(mounts), ...aliasPaths(mounts), ...groupPaths(mounts), ...groupAliasPaths(mounts), ...lookupPaths(mounts)],
  };
}

/** Views of entities (null for ids with no entity), read from the identity mount's storage. */
export function identityViews(storage: Storage, ids: string[]): Promise<Record<string, IdentityView | null>> {
  return entityViews(new IdentityStore(storage), ids);
}

/** Finds or creates the entity behind a login; `storage` should be a transaction the caller commits. */
export function identityLogin(storage: Storage, input: IdentityLoginInput, now = Date.now()): Promise<IdentityLoginResult> {
  return loginEntity(new IdentityStore(storage), input, now);
}
