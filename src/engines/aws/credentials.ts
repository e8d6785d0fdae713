// What creds/:name and sts/:name share (reference §3.3): the role's credential type decides
// between an IAM user and the three STS calls; ttl, role_arn and role_session_name apply to the
// STS types. Both paths answer GET and POST, as Vault's do.

import type { LogicalRequest, LogicalResponse } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import type { Storage } from '../../framework/storage';
import type { AwsHost } from './config';
import { createIamUser } from './iam-user';
import { loadRole, type CredentialType, type Role } from './role';
import { assumeRole, getFederationToken, getSessionToken } from './sts-calls';

export const CREDENTIAL_FIELDS: FieldSchemas = {
  name: { type: 'string', description: 'Name of the role.' },
  role_arn: { type: 'string', description: 'ARN of the role to assume (assumed_role).' },
  ttl: { type: 'duration', default: 3600, description: 'Lifetime of STS credentials in seconds.' },
  role_session_name: { type: 'string', description: 'Session name when assuming a role (at most 64 characters).' },
  mfa_code: { type: 'string', description: 'MFA code for session_token roles with an mfa_serial_number.' },
};

const MAX_SESSION_NAME = 64;

/** The type a request on `via` gets: the role's one, or for an upgraded legacy role (iam_user and federation_token) the path's. */
export function credentialTypeFor(role: Role, via: 'creds' | 'sts'): CredentialType {
  if (role.credentialTypes.length === 1) return role.credentialTypes[0];
  return via === 'creds' ? 'iam_user' : 'federation_token';
}

/**
 * Credentials write nothing but their lease (and an IAM user its own write-ahead entry, which the
 * periodic work leaves alone while the request runs), so they are issued beside the mount's write
 * order (Backend.leaseOnly): a request waiting on AWS does not hold up the mount's other writes,
 * nor another request's credentials.
 */
export async function issuesOnlyLease(relPath: string, storage: Storage): Promise<boolean> {
  const m = /^(creds|sts)\/(.+)$/.exec(relPath);
  if (!m) return false;
  const loaded = await loadRole(storage, m[2]);
  return !!loaded && !loaded.invalidData;
}

export async function issueCredentials(req: LogicalRequest, f: FieldData, host: AwsHost, via: 'creds' | 'sts'): Promise<LogicalResponse> {
  const roleName = f.get<string>('name');
  const loaded = await loadRole(req.storage, roleName);
  if (!loaded) throw badRequest(`Role ${JSON.stringify(roleName)} not found`);
  if (loaded.invalidData) throw badRequest(`role ${JSON.stringify(roleName)} holds data that cannot be upgraded: ${loaded.invalidData}`);
  const role = loaded.role;

  // ttl: given, else the role's default, else 3600; capped by the role's max or the mount's.
  let ttl = f.has('ttl') ? f.get<number>('ttl') : role.defaultStsTtl > 0 ? role.defaultStsTtl : f.get<number>('ttl');
  const maxTtl = role.maxStsTtl > 0 ? role.maxStsTtl : req.mountConfig.maxLeaseTTL;
  if (ttl > maxTtl) ttl = maxTtl;

  const type = credentialTypeFor(role, via);
  if (!role.credentialTypes.includes(type)) {
    throw badRequest(`requested credential type ${JSON.stringify(type)} not in allowed credential types ${JSON.stringify(role.credentialTypes)}`);
  }
  if (role.prohibitFlexibleCredPath) {
    if (type === 'iam_user' && via === 'sts') throw badRequest('attempted to retrieve iam_user credentials through the sts path; this is not allowed for legacy roles');
    if (type !== 'iam_user' && via === 'creds') throw badRequest(`attempted to retrieve ${type} credentials through the creds path; this is not allowed for legacy roles`);
  }

  switch (type) {
    case 'iam_user':
      return createIamUser(req, host, roleName, role);
    case 'assumed_role': {
      let roleArn = f.get<string>('role_arn');
      if (!roleArn) {
        if (role.roleArns.length !== 1) throw badRequest('did not supply a role_arn parameter and unable to determine one');
        roleArn = role.roleArns[0];
      } else if (!role.roleArns.includes(roleArn)) {
        throw badRequest(`role_arn ${JSON.stringify(roleArn)} not in allowed role arns for Vault role ${JSON.stringify(roleName)}`);
      }
      const sessionName = f.get<string>('role_session_name');
      return assumeRole(req, host, { roleName, role, roleArn, ttl, sessionName: sessionName ? sessionName.slice(0, MAX_SESSION_NAME) : '' });
    }
    case 'federation_token':
      return getFederationToken(req, host, { roleName, role, ttl });
    case 'session_token':
      return getSessionToken(req, host, { role, ttl, mfaCode: f.get<string>('mfa_code') });
  }
}
