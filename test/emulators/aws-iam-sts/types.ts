// The JSON of the emulator's control API (/_emulator/…): what a test seeds, and what it reads back.
// No Node imports, so that tests running inside workerd can use these types and client.ts.

export const ACCOUNT_ID = '123456789012';

/** AWS's documented example key pair: the account root's key unless a reset names another. */
export const DEFAULT_ROOT_KEY = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } as const;

export interface Tag {
  Key: string;
  Value: string;
}

export interface SeedAccessKey {
  accessKeyId: string;
  secretAccessKey: string;
  status?: 'Active' | 'Inactive';
}

export interface SeedUser {
  userName: string;
  /** Default "/". */
  path?: string;
  accessKeys?: SeedAccessKey[];
  /** Managed policy ARNs. */
  attachedPolicies?: string[];
  /** Inline policies: name → JSON document. */
  inlinePolicies?: Record<string, string>;
  /** Names of groups (seeded in `groups`) the user is a member of. */
  groups?: string[];
  tags?: Record<string, string>;
  permissionsBoundary?: string;
}

export interface SeedGroup {
  groupName: string;
  path?: string;
  attachedPolicies?: string[];
  inlinePolicies?: Record<string, string>;
}

export interface SeedRole {
  roleName: string;
  path?: string;
  /** Seconds, 3600..43200 (default 3600). */
  maxSessionDuration?: number;
  /** AssumeRole must present exactly this ExternalId. */
  externalId?: string;
}

/** POST /_emulator/reset: replaces all state, and clears faults, delays, the call log and the clock offset. */
export interface ResetBody {
  /** The account root's long-term key (default DEFAULT_ROOT_KEY). */
  root?: { accessKeyId: string; secretAccessKey: string };
  users?: SeedUser[];
  groups?: SeedGroup[];
  roles?: SeedRole[];
}

export interface StateAccessKey {
  accessKeyId: string;
  secretAccessKey: string;
  status: 'Active' | 'Inactive';
  createDate: string;
}

export interface StateUser {
  userName: string;
  path: string;
  userId: string;
  arn: string;
  createDate: string;
  permissionsBoundary: string | null;
  tags: Tag[];
  accessKeys: StateAccessKey[];
  attachedPolicies: string[];
  inlinePolicies: Record<string, string>;
  groups: string[];
}

export interface StateGroup {
  groupName: string;
  path: string;
  groupId: string;
  arn: string;
  createDate: string;
  attachedPolicies: string[];
  inlinePolicies: Record<string, string>;
  members: string[];
}

export interface StateRole {
  roleName: string;
  path: string;
  roleId: string;
  arn: string;
  createDate: string;
  maxSessionDuration: number;
  externalId: string | null;
}

export type TempAction = 'AssumeRole' | 'GetFederationToken' | 'GetSessionToken';

/** Temporary credentials STS issued, with what they were issued from. */
export interface StateTempCredential {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  action: TempAction;
  /** The key id that signed the issuing call. */
  issuedTo: string;
  /** Who the credentials act as (GetCallerIdentity's UserId and Arn). */
  userId: string;
  arn: string;
  roleArn: string | null;
  roleSessionName: string | null;
  /** GetFederationToken's Name. */
  name: string | null;
  policy: string | null;
  policyArns: string[];
  tags: Tag[];
  transitiveTagKeys: string[];
  externalId: string | null;
  serialNumber: string | null;
  tokenCode: string | null;
  sourceIdentity: string | null;
  durationSeconds: number;
  issued: string;
  expiration: string;
  expired: boolean;
}

/** GET /_emulator/state. */
export interface EmulatorState {
  account: string;
  /** The emulator's clock (real time plus the offset set with /_emulator/clock). */
  now: string;
  root: { accessKeys: StateAccessKey[] };
  users: StateUser[];
  groups: StateGroup[];
  roles: StateRole[];
  tempCredentials: StateTempCredential[];
}

/** One entry of GET /_emulator/calls: every request to the API, in arrival order. */
export interface CallRecord {
  /** From the credential scope (or the action, for an unsigned request). */
  service: 'iam' | 'sts' | null;
  action: string | null;
  /** The region of the credential scope (null if unsigned). */
  region: string | null;
  /** The decoded form (Action and Version included). */
  params: Record<string, string>;
  accessKeyId: string | null;
  status: number;
  code?: string;
}

export interface FaultSpec {
  /** The Query API action ("CreateUser"), or "*" for any. */
  action: string;
  /** Let this many calls of the action through first (default 0). */
  after?: number;
  /** Answer this many calls with the error (default 1). */
  times?: number;
  status: number;
  code: string;
  message?: string;
}

export interface DelaySpec {
  action: string;
  /** Hold the call this long before performing it. */
  ms: number;
  after?: number;
  /** Default 1. */
  times?: number;
}

/** POST /_emulator/faults: replaces the pending faults and delays. GET answers the pending ones. */
export interface FaultsBody {
  faults?: FaultSpec[];
  delays?: DelaySpec[];
}

/** POST /_emulator/clock: moves the emulator's clock (credential expiry, create dates), not the signature-freshness check. */
export interface ClockBody {
  /** Add to the current offset. */
  advanceMs?: number;
  /** Set the offset. */
  offsetMs?: number;
}
