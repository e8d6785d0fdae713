// The STS actions: AssumeRole, GetFederationToken, GetSessionToken, GetCallerIdentity. Issued
// credentials (ASIA… key, secret, session token, expiration) are remembered with what they were
// issued from, and sign later calls until they expire. The rules AWS applies that matter to a
// client: the root cannot assume roles; session credentials cannot call GetFederationToken or
// GetSessionToken; a chained AssumeRole lasts at most an hour; credentials the root gets from
// GetFederationToken/GetSessionToken last at most an hour (longer requests are cut to that).
//
// PackedPolicySize is the emulator's own measure: the session policy (without whitespace), policy
// ARNs and tag keys and values, as a percentage of 4096 characters; over 100 is PackedPolicyTooLarge.
import { accessDenied, AwsError, validation } from './errors';
import * as ids from './ids';
import type { ActionContext, Handler } from './iam';
import { memberList, memberStructs } from './query';
import { identity, type Caller, type Principal, type TempCredential } from './state';
import type { Tag, TempAction } from './types';
import { ACCOUNT_ID } from './types';
import { checkPolicyArn, checkPolicyDocument, checkTags, NAME, type Reader } from './validate';
import type { XmlValue } from './xml';

const HOUR = 3600;
const PACKED_LIMIT_CHARS = 4096;

interface SessionPolicy {
  policy: string | null;
  policyArns: string[];
  tags: Tag[];
  packedPolicySize: number | undefined;
}

/** Policy, PolicyArns.member.N.arn and Tags.member.N.{Key,Value}, checked and measured. */
function sessionPolicy({ r, params }: ActionContext): SessionPolicy {
  const policyText = r.text('Policy', { min: 1, max: 2048 });
  const policy = policyText === undefined ? null : checkPolicyDocument(policyText);
  const policyArns = memberStructs(params, 'PolicyArns', ['arn'] as const).map((p) => p.arn ?? '');
  if (policyArns.length > 10) throw validation('policyArns', null, 'Member must have length less than or equal to 10');
  for (const arn of policyArns) checkPolicyArn(arn);
  const tags = checkTags(memberStructs(params, 'Tags', ['Key', 'Value'] as const));
  const given = policy !== null || policyArns.length > 0 || tags.length > 0;
  const chars = (policy?.replace(/\s+/g, '').length ?? 0) + policyArns.join('').length + tags.reduce((n, t) => n + t.Key.length + t.Value.length, 0);
  const packedPolicySize = given ? Math.ceil((100 * chars) / PACKED_LIMIT_CHARS) : undefined;
  if (packedPolicySize !== undefined && packedPolicySize > 100) {
    throw new AwsError(400, 'PackedPolicyTooLarge', `Packed policy consumes ${packedPolicySize}% of allotted space, please use smaller policy.`);
  }
  return { policy, policyArns, tags, packedPolicySize };
}

/** SerialNumber and TokenCode (six digits), given together or not at all. */
function mfa(r: Reader): { serialNumber: string | null; tokenCode: string | null } {
  const serialNumber = r.text('SerialNumber', { min: 9, max: 256, pattern: /^[\w+=/:,.@-]*$/ }) ?? null;
  const tokenCode = r.text('TokenCode', { min: 6, max: 6, pattern: /^\d*$/, patternText: '[\\d]*' }) ?? null;
  if ((serialNumber === null) !== (tokenCode === null)) {
    throw accessDenied('MultiFactorAuthentication failed, unable to validate MFA code: SerialNumber and TokenCode must be given together');
  }
  return { serialNumber, tokenCode };
}

function issue(ctx: ActionContext, action: TempAction, principal: Principal, durationSeconds: number, details: Partial<TempCredential>): TempCredential {
  const now = ctx.account.now();
  const cred: TempCredential = {
    accessKeyId: ctx.account.newTempKeyId(),
    secretAccessKey: ids.secretAccessKey(),
    sessionToken: ids.sessionToken(),
    action,
    issuedTo: ctx.caller.accessKeyId,
    principal,
    roleArn: null,
    roleSessionName: null,
    name: null,
    policy: null,
    policyArns: [],
    tags: [],
    transitiveTagKeys: [],
    externalId: null,
    serialNumber: null,
    tokenCode: null,
    sourceIdentity: null,
    ...details,
    durationSeconds,
    issued: now,
    expiration: now + durationSeconds * 1000,
  };
  ctx.account.temps.set(cred.accessKeyId, cred);
  return cred;
}

const credentialsXml = (c: TempCredential): XmlValue => ({
  AccessKeyId: c.accessKeyId,
  SecretAccessKey: c.secretAccessKey,
  SessionToken: c.sessionToken,
  Expiration: ids.isoSeconds(c.expiration),
});

function refuseSessionCredentials(caller: Caller, action: TempAction): void {
  if (caller.temporary) throw accessDenied(`Cannot call ${action} with session credentials`);
}

/** DurationSeconds within [900, max] (default `fallback`); for the root, longer requests are cut to an hour. */
function duration(ctx: ActionContext, max: number, fallback: number): number {
  const seconds = ctx.r.int('DurationSeconds', 900, max) ?? fallback;
  return ctx.caller.principal.type === 'root' ? Math.min(seconds, HOUR) : seconds;
}

export const STS_ACTIONS: Record<string, Handler> = {
  AssumeRole(ctx) {
    const { account, caller, r, params } = ctx;
    const roleArnText = r.text('RoleArn', { min: 20, max: 2048, required: true });
    const sessionName = r.text('RoleSessionName', { min: 2, max: 64, pattern: NAME, patternText: '[\\w+=,.@-]*', required: true });
    const seconds = r.int('DurationSeconds', 900, 43200);
    const policy = sessionPolicy(ctx);
    const transitiveTagKeys = memberList(params, 'TransitiveTagKeys');
    const externalId = r.text('ExternalId', { min: 2, max: 1224, pattern: /^[\w+=,.@:/-]*$/, patternText: '[\\w+=,.@:\\/-]*' }) ?? null;
    const { serialNumber, tokenCode } = mfa(r);
    const sourceIdentity = r.text('SourceIdentity', { min: 2, max: 64, pattern: NAME, patternText: '[\\w+=,.@-]*' }) ?? null;
    if (caller.principal.type === 'root') throw accessDenied('Roles may not be assumed by root accounts.');
    const role = account.roles.get(roleArnText);
    const denied = () => accessDenied(`User: ${identity(caller.principal).arn} is not authorized to perform: sts:AssumeRole on resource: ${roleArnText}`);
    if (!role) throw denied();
    if (role.externalId !== null && externalId !== role.externalId) throw denied();
    const chained = caller.principal.type === 'assumed-role';
    const durationSeconds = seconds ?? HOUR;
    if (chained && durationSeconds > HOUR) throw new AwsError(400, 'ValidationError', 'The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.');
    if (durationSeconds > role.maxSessionDuration) throw new AwsError(400, 'ValidationError', 'The requested DurationSeconds exceeds the MaxSessionDuration set for this role.');
    const principal: Principal = { type: 'assumed-role', roleName: role.roleName, roleId: role.roleId, roleArn: role.arn, sessionName };
    const cred = issue(ctx, 'AssumeRole', principal, durationSeconds, {
      roleArn: role.arn,
      roleSessionName: sessionName,
      policy: policy.policy,
      policyArns: policy.policyArns,
      tags: policy.tags,
      transitiveTagKeys,
      externalId,
      serialNumber,
      tokenCode,
      sourceIdentity,
    });
    const id = identity(principal);
    return {
      Credentials: credentialsXml(cred),
      AssumedRoleUser: { AssumedRoleId: id.userId, Arn: id.arn },
      PackedPolicySize: policy.packedPolicySize,
      SourceIdentity: sourceIdentity ?? undefined,
    };
  },

  GetFederationToken(ctx) {
    const name = ctx.r.text('Name', { min: 2, max: 32, pattern: NAME, patternText: '[\\w+=,.@-]*', required: true });
    const durationSeconds = duration(ctx, 129600, 43200);
    const policy = sessionPolicy(ctx);
    refuseSessionCredentials(ctx.caller, 'GetFederationToken');
    const principal: Principal = { type: 'federated', name };
    const cred = issue(ctx, 'GetFederationToken', principal, durationSeconds, { name, policy: policy.policy, policyArns: policy.policyArns, tags: policy.tags });
    const id = identity(principal);
    return { Credentials: credentialsXml(cred), FederatedUser: { FederatedUserId: id.userId, Arn: id.arn }, PackedPolicySize: policy.packedPolicySize };
  },

  GetSessionToken(ctx) {
    const durationSeconds = duration(ctx, 129600, 43200);
    const { serialNumber, tokenCode } = mfa(ctx.r);
    refuseSessionCredentials(ctx.caller, 'GetSessionToken');
    const cred = issue(ctx, 'GetSessionToken', ctx.caller.principal, durationSeconds, { serialNumber, tokenCode });
    return { Credentials: credentialsXml(cred) };
  },

  GetCallerIdentity({ caller }) {
    const id = identity(caller.principal);
    return { UserId: id.userId, Account: ACCOUNT_ID, Arn: id.arn };
  },
};
