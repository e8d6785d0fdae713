// The IAM actions: users, access keys, user and group policies, group membership, tags. Each
// handler reads its parameters, changes the account, and answers the <OpResult> content (or
// undefined for the actions that answer with ResponseMetadata only). List actions page with
// MaxItems (1..1000, default 100) and an opaque Marker, answering IsTruncated.
import { AwsError, invalidInput, limitExceeded, validation } from './errors';
import { isoSeconds } from './ids';
import { memberList, memberStructs, type Params } from './query';
import { identity, type Account, type Caller, type Group, type User } from './state';
import { checkPath, checkPolicyArn, checkPolicyDocument, checkTags, mergeTags, NAME, policyName, Reader } from './validate';
import { members, type XmlValue } from './xml';

export interface ActionContext {
  account: Account;
  caller: Caller;
  r: Reader;
  params: Params;
}

export type Result = { [element: string]: XmlValue } | undefined;
export type Handler = (ctx: ActionContext) => Result;

const MAX_MANAGED_POLICIES = 10;
const MAX_GROUPS_PER_USER = 10;
const MAX_INLINE_POLICY_CHARS = 2048;

const userName = (r: Reader) => r.text('UserName', { min: 1, max: 64, pattern: NAME, required: true });
const optionalUserName = (r: Reader) => r.text('UserName', { min: 1, max: 128, pattern: NAME });
const groupName = (r: Reader) => r.text('GroupName', { min: 1, max: 128, pattern: NAME, required: true });
const policyNameParam = (r: Reader) => r.text('PolicyName', { min: 1, max: 128, pattern: NAME, required: true });
const pathPrefix = (r: Reader) => r.text('PathPrefix', { min: 1, max: 512, pattern: /^\u002F[\u0021-\u007F]*$/, patternText: '\\u002F[\\u0021-\\u007F]*' });

/** The user named by UserName, or else the caller's own (the root is null). */
function targetUser({ account, caller, r }: ActionContext): User | null {
  const name = optionalUserName(r);
  if (name !== undefined) return account.user(name);
  const p = caller.principal;
  if (p.type === 'root') return null;
  if (p.type === 'user') return account.user(p.userName);
  throw new AwsError(400, 'ValidationError', 'Must specify userName when calling with non-User credentials');
}

/** One page of `items` from the Marker on, answered as `<listName>` + IsTruncated (+ Marker). */
function page<T>(r: Reader, items: T[], listName: string, render: (item: T) => XmlValue): { [element: string]: XmlValue } {
  const { maxItems, marker } = r.paging();
  let start = 0;
  if (marker !== undefined) {
    const m = /^m(\d+)$/.exec(Buffer.from(marker, 'base64url').toString());
    if (!m) throw invalidInput('Invalid Marker.');
    start = Number(m[1]);
  }
  const slice = items.slice(start, start + maxItems);
  const truncated = start + maxItems < items.length;
  return {
    [listName]: members(slice.map(render)),
    IsTruncated: truncated,
    Marker: truncated ? Buffer.from(`m${start + maxItems}`).toString('base64url') : undefined,
  };
}

const byName = (a: string, b: string) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0);

const policyPath = (arn: string) => {
  const rest = arn.slice(arn.indexOf(':policy/') + ':policy'.length);
  return rest.slice(0, rest.lastIndexOf('/') + 1);
};

function userXml(u: User, full: boolean): XmlValue {
  return {
    Path: u.path,
    UserName: u.userName,
    UserId: u.userId,
    Arn: u.arn,
    CreateDate: isoSeconds(u.createDate),
    PermissionsBoundary: full && u.permissionsBoundary ? { PermissionsBoundaryType: 'PermissionsBoundaryPolicy', PermissionsBoundaryArn: u.permissionsBoundary } : undefined,
    Tags: full && u.tags.length ? members(u.tags.map((t) => ({ Key: t.Key, Value: t.Value }))) : undefined,
  };
}

const groupXml = (g: Group): XmlValue => ({ Path: g.path, GroupName: g.groupName, GroupId: g.groupId, Arn: g.arn, CreateDate: isoSeconds(g.createDate) });

function attachedPolicies(r: Reader, arns: string[]) {
  const prefix = pathPrefix(r);
  const listed = arns.filter((arn) => prefix === undefined || policyPath(arn).startsWith(prefix));
  return page(r, listed, 'AttachedPolicies', (arn) => ({ PolicyName: policyName(arn), PolicyArn: arn }));
}

const inlineNames = (r: Reader, policies: Map<string, string>) => page(r, [...policies.keys()].sort(byName), 'PolicyNames', (n) => n);

function findPolicy(policies: Map<string, string>, name: string): [string, string] | undefined {
  for (const entry of policies) if (entry[0].toLowerCase() === name.toLowerCase()) return entry;
  return undefined;
}

/** Inline policy sizes count without whitespace, summed over the user's policies. */
const policyChars = (doc: string) => doc.replace(/\s+/g, '').length;

function keyOf(ctx: ActionContext) {
  const owner = targetUser(ctx);
  const id = ctx.r.text('AccessKeyId', { min: 16, max: 128, pattern: /^[\w]+$/, required: true });
  const key = ctx.account.keys.get(id);
  if (!key || key.owner !== owner) throw new AwsError(404, 'NoSuchEntity', `The Access Key with id ${id} cannot be found.`);
  return key;
}

export const IAM_ACTIONS: Record<string, Handler> = {
  CreateUser({ account, r, params }) {
    const name = userName(r);
    const path = checkPath(r.optional('Path') ?? '/');
    const boundary = r.optional('PermissionsBoundary');
    if (boundary !== undefined) checkPolicyArn(boundary);
    const tags = checkTags(memberStructs(params, 'Tags', ['Key', 'Value'] as const));
    return { User: userXml(account.createUser(name, path, boundary ?? null, tags), true) };
  },

  GetUser(ctx) {
    const user = targetUser(ctx);
    if (user) return { User: userXml(user, true) };
    const root = identity({ type: 'root' });
    return { User: { UserId: root.userId, Arn: root.arn, CreateDate: isoSeconds(ctx.account.rootKeys[0]?.createDate ?? ctx.account.now()) } };
  },

  DeleteUser({ account, r }) {
    const user = account.user(userName(r));
    const conflict = (what: string) => new AwsError(409, 'DeleteConflict', `Cannot delete entity, must ${what} first.`);
    if (user.accessKeys.length) throw conflict('delete access keys');
    if (user.inlinePolicies.size) throw conflict('delete policies');
    if (user.attachedPolicies.length) throw conflict('detach all policies');
    if (user.groups.length) throw conflict('remove users from group');
    account.deleteUser(user);
    return undefined;
  },

  ListUsers({ account, r }) {
    const prefix = pathPrefix(r);
    const users = [...account.users.values()].filter((u) => prefix === undefined || u.path.startsWith(prefix)).sort((a, b) => byName(a.userName, b.userName));
    return page(r, users, 'Users', (u) => userXml(u, false));
  },

  CreateAccessKey(ctx) {
    const owner = targetUser(ctx);
    const key = ctx.account.addKey(owner);
    return { AccessKey: { UserName: owner?.userName, AccessKeyId: key.accessKeyId, Status: key.status, SecretAccessKey: key.secretAccessKey, CreateDate: isoSeconds(key.createDate) } };
  },

  DeleteAccessKey(ctx) {
    ctx.account.removeKey(keyOf(ctx));
    return undefined;
  },

  UpdateAccessKey(ctx) {
    const status = ctx.r.required('Status');
    if (status !== 'Active' && status !== 'Inactive') throw validation('status', status, 'Member must satisfy enum value set: [Active, Inactive]');
    keyOf(ctx).status = status;
    return undefined;
  },

  ListAccessKeys(ctx) {
    const owner = targetUser(ctx);
    const keys = owner ? owner.accessKeys : ctx.account.rootKeys;
    return page(ctx.r, keys, 'AccessKeyMetadata', (k) => ({ UserName: owner?.userName, AccessKeyId: k.accessKeyId, Status: k.status, CreateDate: isoSeconds(k.createDate) }));
  },

  AttachUserPolicy({ account, r }) {
    const user = account.user(userName(r));
    const arn = r.required('PolicyArn');
    checkPolicyArn(arn);
    if (user.attachedPolicies.includes(arn)) return undefined;
    if (user.attachedPolicies.length >= MAX_MANAGED_POLICIES) throw limitExceeded(`Cannot exceed quota for PoliciesPerUser: ${MAX_MANAGED_POLICIES}`);
    user.attachedPolicies.push(arn);
    return undefined;
  },

  DetachUserPolicy({ account, r }) {
    const user = account.user(userName(r));
    const arn = r.required('PolicyArn');
    checkPolicyArn(arn);
    const i = user.attachedPolicies.indexOf(arn);
    if (i < 0) throw new AwsError(404, 'NoSuchEntity', `Policy ${arn} was not found.`);
    user.attachedPolicies.splice(i, 1);
    return undefined;
  },

  ListAttachedUserPolicies({ account, r }) {
    return attachedPolicies(r, account.user(userName(r)).attachedPolicies);
  },

  PutUserPolicy({ account, r }) {
    const user = account.user(userName(r));
    const name = policyNameParam(r);
    const doc = checkPolicyDocument(r.text('PolicyDocument', { min: 1, max: 131072, required: true }));
    const existing = findPolicy(user.inlinePolicies, name);
    let total = policyChars(doc);
    for (const [n, d] of user.inlinePolicies) if (n !== existing?.[0]) total += policyChars(d);
    if (total > MAX_INLINE_POLICY_CHARS) throw limitExceeded(`Maximum policy size of ${MAX_INLINE_POLICY_CHARS} bytes exceeded for user ${user.userName}`);
    if (existing) user.inlinePolicies.delete(existing[0]);
    user.inlinePolicies.set(existing?.[0] ?? name, doc);
    return undefined;
  },

  DeleteUserPolicy({ account, r }) {
    const user = account.user(userName(r));
    const name = policyNameParam(r);
    const existing = findPolicy(user.inlinePolicies, name);
    if (!existing) throw new AwsError(404, 'NoSuchEntity', `The user policy with name ${name} cannot be found.`);
    user.inlinePolicies.delete(existing[0]);
    return undefined;
  },

  ListUserPolicies({ account, r }) {
    return inlineNames(r, account.user(userName(r)).inlinePolicies);
  },

  GetUserPolicy({ account, r }) {
    const user = account.user(userName(r));
    const name = policyNameParam(r);
    const existing = findPolicy(user.inlinePolicies, name);
    if (!existing) throw new AwsError(404, 'NoSuchEntity', `The user policy with name ${name} cannot be found.`);
    return { UserName: user.userName, PolicyName: existing[0], PolicyDocument: encodeURIComponent(existing[1]) };
  },

  AddUserToGroup({ account, r }) {
    const group = account.group(groupName(r));
    const user = account.user(userName(r));
    if (user.groups.includes(group)) return undefined;
    if (user.groups.length >= MAX_GROUPS_PER_USER) throw limitExceeded(`Cannot exceed quota for GroupsPerUser: ${MAX_GROUPS_PER_USER}`);
    user.groups.push(group);
    return undefined;
  },

  RemoveUserFromGroup({ account, r }) {
    const group = account.group(groupName(r));
    const user = account.user(userName(r));
    const i = user.groups.indexOf(group);
    if (i < 0) throw new AwsError(404, 'NoSuchEntity', `User ${user.userName} is not in group ${group.groupName}.`);
    user.groups.splice(i, 1);
    return undefined;
  },

  ListGroupsForUser({ account, r }) {
    return page(r, account.user(userName(r)).groups, 'Groups', groupXml);
  },

  TagUser({ account, r, params }) {
    const user = account.user(userName(r));
    const tags = checkTags(memberStructs(params, 'Tags', ['Key', 'Value'] as const));
    user.tags = mergeTags(user.tags, tags, 'TagsPerUser');
    return undefined;
  },

  UntagUser({ account, r, params }) {
    const user = account.user(userName(r));
    const keys = new Set(memberList(params, 'TagKeys').map((k) => k.toLowerCase()));
    user.tags = user.tags.filter((t) => !keys.has(t.Key.toLowerCase()));
    return undefined;
  },

  ListUserTags({ account, r }) {
    return page(r, account.user(userName(r)).tags, 'Tags', (t) => ({ Key: t.Key, Value: t.Value }));
  },

  CreateGroup({ account, r }) {
    const name = groupName(r);
    return { Group: groupXml(account.createGroup(name, checkPath(r.optional('Path') ?? '/'))) };
  },

  ListAttachedGroupPolicies({ account, r }) {
    return attachedPolicies(r, account.group(groupName(r)).attachedPolicies);
  },

  ListGroupPolicies({ account, r }) {
    return inlineNames(r, account.group(groupName(r)).inlinePolicies);
  },

  GetGroupPolicy({ account, r }) {
    const group = account.group(groupName(r));
    const name = policyNameParam(r);
    const existing = findPolicy(group.inlinePolicies, name);
    if (!existing) throw new AwsError(404, 'NoSuchEntity', `The group policy with name ${name} cannot be found.`);
    return { GroupName: group.groupName, PolicyName: existing[0], PolicyDocument: encodeURIComponent(existing[1]) };
  },
};
