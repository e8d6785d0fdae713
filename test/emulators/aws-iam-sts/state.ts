// The emulated account (123456789012): IAM users with their access keys, policies, groups and
// tags; groups; roles; the root's keys; and the temporary credentials STS issued. Names of users
// and groups are unique and looked up case-insensitively, as IAM does. The clock is real time
// plus an offset tests can move (POST /_emulator/clock), so expiry is testable without waiting.
import { AwsError, limitExceeded, noSuchGroup, noSuchUser } from './errors';
import * as ids from './ids';
import { checkPath, checkPolicyArn, checkPolicyDocument, checkTags, checkText, NAME } from './validate';
import type { EmulatorState, ResetBody, StateAccessKey, Tag, TempAction } from './types';
import { ACCOUNT_ID, DEFAULT_ROOT_KEY } from './types';

export interface AccessKey {
  accessKeyId: string;
  secretAccessKey: string;
  status: 'Active' | 'Inactive';
  createDate: number;
  /** null: the account root's key. */
  owner: User | null;
}

export interface User {
  userName: string;
  path: string;
  userId: string;
  arn: string;
  createDate: number;
  permissionsBoundary: string | null;
  tags: Tag[];
  accessKeys: AccessKey[];
  attachedPolicies: string[];
  inlinePolicies: Map<string, string>;
  groups: Group[];
}

export interface Group {
  groupName: string;
  path: string;
  groupId: string;
  arn: string;
  createDate: number;
  attachedPolicies: string[];
  inlinePolicies: Map<string, string>;
}

export interface Role {
  roleName: string;
  path: string;
  roleId: string;
  arn: string;
  createDate: number;
  maxSessionDuration: number;
  externalId: string | null;
}

/** Who a set of credentials acts as. */
export type Principal =
  | { type: 'root' }
  | { type: 'user'; userName: string; userId: string; arn: string }
  | { type: 'assumed-role'; roleName: string; roleId: string; roleArn: string; sessionName: string }
  | { type: 'federated'; name: string };

export interface TempCredential {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  action: TempAction;
  issuedTo: string;
  principal: Principal;
  roleArn: string | null;
  roleSessionName: string | null;
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
  issued: number;
  expiration: number;
}

/** The caller of one request, once its signature checked out. */
export interface Caller {
  accessKeyId: string;
  principal: Principal;
  /** Set when the request was signed with temporary credentials. */
  temporary: TempCredential | null;
}

export const MAX_KEYS_PER_USER = 2;

export const userArn = (path: string, name: string) => `arn:aws:iam::${ACCOUNT_ID}:user${path}${name}`;
export const groupArn = (path: string, name: string) => `arn:aws:iam::${ACCOUNT_ID}:group${path}${name}`;
export const roleArn = (path: string, name: string) => `arn:aws:iam::${ACCOUNT_ID}:role${path}${name}`;

/** GetCallerIdentity's UserId and Arn for a principal. */
export function identity(p: Principal): { userId: string; arn: string } {
  switch (p.type) {
    case 'root':
      return { userId: ACCOUNT_ID, arn: `arn:aws:iam::${ACCOUNT_ID}:root` };
    case 'user':
      return { userId: p.userId, arn: p.arn };
    case 'assumed-role':
      return { userId: `${p.roleId}:${p.sessionName}`, arn: `arn:aws:sts::${ACCOUNT_ID}:assumed-role/${p.roleName}/${p.sessionName}` };
    case 'federated':
      return { userId: `${ACCOUNT_ID}:${p.name}`, arn: `arn:aws:sts::${ACCOUNT_ID}:federated-user/${p.name}` };
  }
}

const raise = (e: Error): never => {
  throw e;
};
const fail = (message: string) => raise(new Error(message));

export class Account {
  /** By lower-case name. */
  readonly users = new Map<string, User>();
  readonly groups = new Map<string, Group>();
  /** By ARN. */
  readonly roles = new Map<string, Role>();
  /** Long-term keys (users' and the root's) by id. */
  readonly keys = new Map<string, AccessKey>();
  readonly temps = new Map<string, TempCredential>();
  rootKeys: AccessKey[] = [];
  clockOffset = 0;

  constructor() {
    this.reset({});
  }

  now(): number {
    return Date.now() + this.clockOffset;
  }

  findUser(name: string): User | undefined {
    return this.users.get(name.toLowerCase());
  }

  user(name: string): User {
    return this.findUser(name) ?? raise(noSuchUser(name));
  }

  group(name: string): Group {
    return this.groups.get(name.toLowerCase()) ?? raise(noSuchGroup(name));
  }

  createUser(userName: string, path: string, permissionsBoundary: string | null, tags: Tag[]): User {
    if (this.findUser(userName)) throw new AwsError(409, 'EntityAlreadyExists', `User with name ${userName} already exists.`);
    const user: User = {
      userName,
      path,
      userId: ids.uniqueId('AIDA'),
      arn: userArn(path, userName),
      createDate: this.now(),
      permissionsBoundary,
      tags,
      accessKeys: [],
      attachedPolicies: [],
      inlinePolicies: new Map(),
      groups: [],
    };
    this.users.set(userName.toLowerCase(), user);
    return user;
  }

  deleteUser(user: User): void {
    this.users.delete(user.userName.toLowerCase());
  }

  createGroup(groupName: string, path: string): Group {
    if (this.groups.has(groupName.toLowerCase())) throw new AwsError(409, 'EntityAlreadyExists', `Group with name ${groupName} already exists.`);
    const group: Group = { groupName, path, groupId: ids.uniqueId('AGPA'), arn: groupArn(path, groupName), createDate: this.now(), attachedPolicies: [], inlinePolicies: new Map() };
    this.groups.set(groupName.toLowerCase(), group);
    return group;
  }

  /** A new long-term key for a user (or the root, owner null); at most two each. */
  addKey(owner: User | null, given?: { accessKeyId: string; secretAccessKey: string; status?: 'Active' | 'Inactive' }): AccessKey {
    const list = owner ? owner.accessKeys : this.rootKeys;
    if (list.length >= MAX_KEYS_PER_USER) throw limitExceeded(`Cannot exceed quota for AccessKeysPerUser: ${MAX_KEYS_PER_USER}`);
    let accessKeyId = given?.accessKeyId ?? ids.accessKeyId('AKIA');
    while (!given && this.keys.has(accessKeyId)) accessKeyId = ids.accessKeyId('AKIA');
    if (this.keys.has(accessKeyId) || this.temps.has(accessKeyId)) fail(`access key ${accessKeyId} exists already`);
    const key: AccessKey = { accessKeyId, secretAccessKey: given?.secretAccessKey ?? ids.secretAccessKey(), status: given?.status ?? 'Active', createDate: this.now(), owner };
    list.push(key);
    this.keys.set(accessKeyId, key);
    return key;
  }

  removeKey(key: AccessKey): void {
    const list = key.owner ? key.owner.accessKeys : this.rootKeys;
    list.splice(list.indexOf(key), 1);
    this.keys.delete(key.accessKeyId);
  }

  newTempKeyId(): string {
    let id = ids.accessKeyId('ASIA');
    while (this.temps.has(id) || this.keys.has(id)) id = ids.accessKeyId('ASIA');
    return id;
  }

  /** Replaces everything with the seed; throws a plain Error (the control API's 400) if it is inconsistent. */
  reset(seed: ResetBody): void {
    this.users.clear();
    this.groups.clear();
    this.roles.clear();
    this.keys.clear();
    this.temps.clear();
    this.rootKeys = [];
    this.clockOffset = 0;
    try {
      this.addKey(null, seed.root ?? DEFAULT_ROOT_KEY);
      for (const g of seed.groups ?? []) {
        const group = this.createGroup(checkText('groupName', g.groupName, { min: 1, max: 128, pattern: NAME }), checkPath(g.path ?? '/'));
        group.attachedPolicies = (g.attachedPolicies ?? []).map((arn) => (checkPolicyArn(arn), arn));
        for (const [name, doc] of Object.entries(g.inlinePolicies ?? {})) group.inlinePolicies.set(name, checkPolicyDocument(doc));
      }
      for (const u of seed.users ?? []) {
        const tags = checkTags(Object.entries(u.tags ?? {}).map(([Key, Value]) => ({ Key, Value })));
        if (u.permissionsBoundary) checkPolicyArn(u.permissionsBoundary);
        const user = this.createUser(checkText('userName', u.userName, { min: 1, max: 64, pattern: NAME }), checkPath(u.path ?? '/'), u.permissionsBoundary ?? null, tags);
        for (const k of u.accessKeys ?? []) this.addKey(user, k);
        user.attachedPolicies = (u.attachedPolicies ?? []).map((arn) => (checkPolicyArn(arn), arn));
        for (const [name, doc] of Object.entries(u.inlinePolicies ?? {})) user.inlinePolicies.set(name, checkPolicyDocument(doc));
        user.groups = [...new Set((u.groups ?? []).map((name) => this.group(name)))];
      }
      for (const r of seed.roles ?? []) {
        const path = checkPath(r.path ?? '/');
        const roleName = checkText('roleName', r.roleName, { min: 1, max: 64, pattern: NAME });
        const maxSessionDuration = r.maxSessionDuration ?? 3600;
        if (!Number.isInteger(maxSessionDuration) || maxSessionDuration < 3600 || maxSessionDuration > 43200) fail(`maxSessionDuration of ${roleName} must be 3600..43200`);
        const arn = roleArn(path, roleName);
        if ([...this.roles.values()].some((x) => x.roleName.toLowerCase() === roleName.toLowerCase())) fail(`role ${roleName} is seeded twice`);
        this.roles.set(arn, { roleName, path, roleId: ids.uniqueId('AROA'), arn, createDate: this.now(), maxSessionDuration, externalId: r.externalId ?? null });
      }
    } catch (e) {
      const message = e instanceof AwsError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
      this.reset({});
      throw new Error(`bad seed: ${message}`);
    }
  }

  snapshot(): EmulatorState {
    const iso = ids.isoSeconds;
    const key = (k: AccessKey): StateAccessKey => ({ accessKeyId: k.accessKeyId, secretAccessKey: k.secretAccessKey, status: k.status, createDate: iso(k.createDate) });
    const users = [...this.users.values()];
    const now = this.now();
    return {
      account: ACCOUNT_ID,
      now: new Date(now).toISOString(),
      root: { accessKeys: this.rootKeys.map(key) },
      users: users.map((u) => ({
        userName: u.userName,
        path: u.path,
        userId: u.userId,
        arn: u.arn,
        createDate: iso(u.createDate),
        permissionsBoundary: u.permissionsBoundary,
        tags: u.tags.map((t) => ({ ...t })),
        accessKeys: u.accessKeys.map(key),
        attachedPolicies: [...u.attachedPolicies],
        inlinePolicies: Object.fromEntries(u.inlinePolicies),
        groups: u.groups.map((g) => g.groupName),
      })),
      groups: [...this.groups.values()].map((g) => ({
        groupName: g.groupName,
        path: g.path,
        groupId: g.groupId,
        arn: g.arn,
        createDate: iso(g.createDate),
        attachedPolicies: [...g.attachedPolicies],
        inlinePolicies: Object.fromEntries(g.inlinePolicies),
        members: users.filter((u) => u.groups.includes(g)).map((u) => u.userName),
      })),
      roles: [...this.roles.values()].map((r) => ({ ...r, createDate: iso(r.createDate) })),
      tempCredentials: [...this.temps.values()].map((t) => ({
        accessKeyId: t.accessKeyId,
        secretAccessKey: t.secretAccessKey,
        sessionToken: t.sessionToken,
        action: t.action,
        issuedTo: t.issuedTo,
        ...identity(t.principal),
        roleArn: t.roleArn,
        roleSessionName: t.roleSessionName,
        name: t.name,
        policy: t.policy,
        policyArns: [...t.policyArns],
        tags: t.tags.map((x) => ({ ...x })),
        transitiveTagKeys: [...t.transitiveTagKeys],
        externalId: t.externalId,
        serialNumber: t.serialNumber,
        tokenCode: t.tokenCode,
        sourceIdentity: t.sourceIdentity,
        durationSeconds: t.durationSeconds,
        issued: iso(t.issued),
        expiration: iso(t.expiration),
        expired: t.expiration <= now,
      })),
    };
  }
}
