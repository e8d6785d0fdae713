// The AWS engine's role: what kind of credentials it issues and with which policies (reference
// §3.2). Stored at `role/<name>`; roles written by the legacy `policy`/`arn` form are upgraded
// to this shape when written and when read (role-legacy.ts). Here: the model, its storage and
// its read shape; role-write.ts turns a write into a role and validates it.

import { fromUtf8 } from '../../crypto/encoding';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { LEGACY_PREFIX, parseLegacyEntry } from './role-legacy';

export type CredentialType = 'iam_user' | 'assumed_role' | 'federation_token' | 'session_token';

export const CREDENTIAL_TYPES: readonly CredentialType[] = ['iam_user', 'assumed_role', 'federation_token', 'session_token'];

export interface Role {
  /** Usually one; a role upgraded from a legacy inline policy allows iam_user and federation_token. */
  credentialTypes: CredentialType[];
  policyArns: string[];
  roleArns: string[];
  /** Compacted JSON ("" when none). */
  policyDocument: string;
  iamGroups: string[];
  iamTags: Record<string, string>;
  /** Values may be identity templates ({{identity.entity.name}}), resolved per caller. */
  sessionTags: Record<string, string>;
  externalId: string;
  /** Seconds (0: unset). */
  defaultStsTtl: number;
  maxStsTtl: number;
  /** "" means "/". */
  userPath: string;
  permissionsBoundaryArn: string;
  mfaSerialNumber: string;
  /**
   * Upgraded from a legacy entry: creds serves only iam_user, sts only the STS types
   * ("attempted to retrieve iam_user credentials through the sts path; ...").
   */
  prohibitFlexibleCredPath: boolean;
  /** Coffer's own: iam_user creds wait until STS accepts the new key (bounded) before answering. */
  waitForUsable: boolean;
}

/** A stored role as a handler sees it: the role, or why an old entry could not be upgraded. */
export interface LoadedRole {
  role: Role;
  /** Set when a legacy entry could not be upgraded (Vault's invalid_data); role is then empty. */
  invalidData?: string;
  /**
   * The lists and maps never given a value (role holds them empty): Vault keeps those as Go nil,
   * which it reads back as null where an empty one reads back as [] or {}. Absent: none.
   */
  nullFields?: NullableField[];
}

/** The Role fields that may be null (never set) rather than empty on read. */
export type NullableField = 'policyArns' | 'roleArns' | 'iamGroups' | 'iamTags' | 'sessionTags';

export const NULLABLE_FIELDS: readonly NullableField[] = ['policyArns', 'roleArns', 'iamGroups', 'iamTags', 'sessionTags'];

export const ROLE_PREFIX = 'role/';

/** Vault's GenericNameWithAtRegex: word characters, '-', '.' and '@', starting and ending in a word character. */
export const ROLE_NAME = '(?<name>\\w(?:[\\w.@-]*\\w)?)';

/** A role with nothing set: where a write to a new name starts, and what an invalid legacy entry holds. */
export function emptyRole(): Role {
  return {
    credentialTypes: [],
    policyArns: [],
    roleArns: [],
    policyDocument: '',
    iamGroups: [],
    iamTags: {},
    sessionTags: {},
    externalId: '',
    defaultStsTtl: 0,
    maxStsTtl: 0,
    userPath: '',
    permissionsBoundaryArn: '',
    mfaSerialNumber: '',
    prohibitFlexibleCredPath: false,
    waitForUsable: false,
  };
}

/**
 * The role `name`: its entry at `role/<name>`, else a legacy `policy/<name>` entry upgraded in
 * memory (it is stored in the new form by the next write of the role), else null. Reads nothing
 * else and writes nothing, so any path may call it.
 */
export async function loadRole(storage: Storage, name: string): Promise<LoadedRole | null> {
  const stored = await getJSON<LoadedRole>(storage, ROLE_PREFIX + name);
  if (stored) {
    // Fields added to Role since the entry was written take their zero values.
    const loaded: LoadedRole = { role: { ...emptyRole(), ...stored.role } };
    if (stored.invalidData) loaded.invalidData = stored.invalidData;
    if (stored.nullFields?.length) loaded.nullFields = stored.nullFields;
    return loaded;
  }
  const legacy = await storage.get(LEGACY_PREFIX + name);
  return legacy === null ? null : upgradeLegacyEntry(fromUtf8(legacy));
}

/**
 * The role a legacy entry (or the legacy write parameters) stand for: only the one list it names
 * is set, the others read as null; text that is neither JSON nor a role or policy ARN gives an
 * empty role carrying it as invalidData.
 */
export function upgradeLegacyEntry(text: string): LoadedRole {
  const legacy = parseLegacyEntry(text);
  if (!legacy) return { role: emptyRole(), invalidData: text, nullFields: [...NULLABLE_FIELDS] };
  const role: Role = { ...emptyRole(), credentialTypes: [...legacy.credentialTypes], prohibitFlexibleCredPath: true };
  let set: NullableField | null = null;
  if ('roleArn' in legacy) [role.roleArns, set] = [[legacy.roleArn], 'roleArns'];
  else if ('policyArn' in legacy) [role.policyArns, set] = [[legacy.policyArn], 'policyArns'];
  else role.policyDocument = legacy.policyDocument;
  return { role, nullFields: NULLABLE_FIELDS.filter((f) => f !== set) };
}

/** Stores the role in the current form; a legacy entry of the same name goes (Vault's upgrade). */
export async function saveRole(storage: Storage, name: string, loaded: LoadedRole): Promise<void> {
  const entry: LoadedRole = { role: loaded.role };
  if (loaded.invalidData) entry.invalidData = loaded.invalidData;
  if (loaded.nullFields?.length) entry.nullFields = loaded.nullFields;
  await putJSON(storage, ROLE_PREFIX + name, entry);
  await storage.delete(LEGACY_PREFIX + name);
}

/** Deletes the role in either form; false when there was none. */
export async function deleteRole(storage: Storage, name: string): Promise<boolean> {
  let found = false;
  for (const key of [LEGACY_PREFIX + name, ROLE_PREFIX + name]) {
    if ((await storage.get(key)) === null) continue;
    found = true;
    await storage.delete(key);
  }
  return found;
}

/** Every role name: those in the current form, then the legacy entries not yet upgraded (as Vault lists them). */
export async function listRoleNames(storage: Storage): Promise<string[]> {
  return [...(await storage.list(ROLE_PREFIX)), ...(await storage.list(LEGACY_PREFIX))];
}

/** The read shape of a role (reference §3.2), plus Coffer's wait_for_usable. */
export function roleView(loaded: LoadedRole): Record<string, unknown> {
  const { role } = loaded;
  const nulls = new Set(loaded.nullFields ?? []);
  const orNull = <T>(field: NullableField, value: T): T | null => (nulls.has(field) ? null : value);
  const view: Record<string, unknown> = {
    credential_type: role.credentialTypes.join(','),
    policy_arns: orNull('policyArns', role.policyArns),
    role_arns: orNull('roleArns', role.roleArns),
    policy_document: role.policyDocument,
    iam_groups: orNull('iamGroups', role.iamGroups),
    iam_tags: orNull('iamTags', role.iamTags),
    session_tags: orNull('sessionTags', role.sessionTags),
    external_id: role.externalId,
    default_sts_ttl: role.defaultStsTtl,
    max_sts_ttl: role.maxStsTtl,
    user_path: role.userPath,
    permissions_boundary_arn: role.permissionsBoundaryArn,
    mfa_serial_number: role.mfaSerialNumber,
  };
  if (loaded.invalidData) view.invalid_data = loaded.invalidData;
  view.wait_for_usable = role.waitForUsable;
  return view;
}
