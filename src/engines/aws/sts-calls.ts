// STS credentials (reference §3.4): AssumeRole, GetFederationToken and GetSessionToken. Their
// leases carry the credentials' own expiry and are not renewable; revoking one does nothing
// (STS credentials cannot be withdrawn). A role's iam_groups take part as policies: the groups'
// managed policy ARNs join the role's, their inline documents are merged into the role's.

import type { LogicalRequest, LogicalResponse } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { child, members, text, type QueryClient } from './client';
import { iamClient, loadRootConfig, stsClient, type AwsHost, type RootConfig } from './config';
import { awsFailure, withPrefix } from './failures';
import type { Role } from './role';
import { resolveSessionTags } from './session-tags';
import { generateUsername, normaliseName } from './username';

/** Seconds until an ISO 8601 expiration (at least 1). */
const secondsUntil = (expiration: string): number => Math.max(1, Math.floor((Date.parse(expiration) - Date.now()) / 1000));

/** The credentials of an STS answer as a leased secret. */
function stsSecret(result: Record<string, unknown>, data: Record<string, unknown>, internal: Record<string, unknown>): LogicalResponse {
  const credentials = child(result, 'Credentials');
  return {
    data: {
      access_key: text(credentials, 'AccessKeyId'),
      secret_key: text(credentials, 'SecretAccessKey'),
      security_token: text(credentials, 'SessionToken'),
      ...data,
    },
    secret: { type: 'access_keys', ttl: secondsUntil(text(credentials, 'Expiration')), renewable: false, internal: { ...internal, is_sts: true } },
  };
}

/** The clients of the mount's configuration; missing credentials fail like a call would. */
async function clients(req: LogicalRequest, host: AwsHost, prefix: string): Promise<{ config: RootConfig | null; sts: QueryClient }> {
  const config = await loadRootConfig(req.storage);
  return { config, sts: await withPrefix(prefix, () => stsClient(config, host)) };
}

/**
 * The role's policies with its groups': managed policy ARNs appended, inline documents merged
 * with the role's document into one (their statements concatenated, groups' first).
 */
async function withGroupPolicies(config: RootConfig | null, host: AwsHost, role: Role): Promise<{ policy: string; policyArns: string[] }> {
  if (role.iamGroups.length === 0) return { policy: role.policyDocument, policyArns: role.policyArns };
  const iam = iamClient(config, host);
  const documents: string[] = [];
  const arns = [...role.policyArns];
  try {
    for (const group of role.iamGroups) {
      for (const p of members(await iam.call('ListAttachedGroupPolicies', { GroupName: group }), 'AttachedPolicies')) {
        const arn = text(p, 'PolicyArn');
        if (!arns.includes(arn)) arns.push(arn);
      }
      for (const name of members(await iam.call('ListGroupPolicies', { GroupName: group }), 'PolicyNames')) {
        const doc = await iam.call('GetGroupPolicy', { GroupName: group, PolicyName: String(name) });
        documents.push(decodeURIComponent(text(doc, 'PolicyDocument').replace(/\+/g, ' ')));
      }
    }
  } catch (e) {
    throw awsFailure('unable to read the policies of the role\'s iam_groups', e);
  }
  if (documents.length === 0) return { policy: role.policyDocument, policyArns: arns };
  return { policy: combinePolicyDocuments([...documents, role.policyDocument]), policyArns: arns };
}

/** One policy document holding every statement of `documents` (empty ones skipped). */
export function combinePolicyDocuments(documents: string[]): string {
  let version = '';
  const statements: unknown[] = [];
  for (const doc of documents) {
    if (!doc) continue;
    let parsed: { Version?: unknown; Statement?: unknown };
    try {
      parsed = JSON.parse(doc) as typeof parsed;
    } catch (e) {
      throw badRequest(`unable to parse a group or role policy document: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!version && typeof parsed.Version === 'string') version = parsed.Version;
    if (Array.isArray(parsed.Statement)) statements.push(...(parsed.Statement as unknown[]));
    else if (parsed.Statement !== undefined) statements.push(parsed.Statement);
  }
  if (statements.length === 0) return '';
  return JSON.stringify({ Version: version || '2012-10-17', Statement: statements });
}

const policyArnParams = (arns: string[]) => (arns.length > 0 ? arns.map((arn) => ({ arn })) : undefined);

export async function assumeRole(
  req: LogicalRequest,
  host: AwsHost,
  p: { roleName: string; role: Role; roleArn: string; ttl: number; sessionName: string },
): Promise<LogicalResponse> {
  const prefix = 'Error assuming role';
  const { config, sts } = await clients(req, host, prefix);
  const { policy, policyArns } = await withGroupPolicies(config, host, p.role);
  // A generated session name follows the IAM form of the template (64 characters), as in Vault.
  const sessionName = p.sessionName
    ? normaliseName(p.sessionName)
    : generateUsername(config, 'IAM', req.auth?.displayName ?? '', p.roleName);
  const tags = await resolveSessionTags(req, p.role.sessionTags);
  const result = await withPrefix(prefix, () =>
    sts.call('AssumeRole', {
      RoleArn: p.roleArn,
      RoleSessionName: sessionName,
      DurationSeconds: p.ttl,
      Policy: policy || undefined,
      PolicyArns: policyArnParams(policyArns),
      Tags: tags.length > 0 ? tags : undefined,
      ExternalId: p.role.externalId || undefined,
    }),
  );
  return stsSecret(result, { arn: text(child(result, 'AssumedRoleUser'), 'Arn') }, { username: sessionName, policy: p.roleArn });
}

export async function getFederationToken(req: LogicalRequest, host: AwsHost, p: { roleName: string; role: Role; ttl: number }): Promise<LogicalResponse> {
  const prefix = 'Error generating STS keys';
  const { config, sts } = await clients(req, host, prefix);
  const { policy, policyArns } = await withGroupPolicies(config, host, p.role);
  const name = generateUsername(config, 'STS', req.auth?.displayName ?? '', p.roleName);
  // Without a policy the token would carry the root credentials' own permissions.
  if (!policy && policyArns.length === 0) throw badRequest('must specify at least one of policy_arns or policy_document with federation_token credential type');
  const result = await withPrefix(prefix, () => sts.call('GetFederationToken', { Name: name, DurationSeconds: p.ttl, Policy: policy || undefined, PolicyArns: policyArnParams(policyArns) }));
  return stsSecret(result, {}, { username: name, policy });
}

export async function getSessionToken(req: LogicalRequest, host: AwsHost, p: { role: Role; ttl: number; mfaCode: string }): Promise<LogicalResponse> {
  const prefix = 'Error generating STS keys';
  const { sts } = await clients(req, host, prefix);
  const result = await withPrefix(prefix, () =>
    sts.call('GetSessionToken', { DurationSeconds: p.ttl, SerialNumber: p.role.mfaSerialNumber || undefined, TokenCode: p.role.mfaSerialNumber ? p.mfaCode : undefined }),
  );
  return stsSecret(result, {}, { username: '', policy: '' });
}
