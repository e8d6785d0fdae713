// A write to roles/:name as Vault's AWS engine takes it (reference §3.2): the fields given replace
// the stored ones and the others stay; the legacy `policy`/`arn` parameters replace the whole role
// with its upgraded form and mix with none of the newer ones; then the role as a whole is checked,
// and every problem found is reported at once, in one 400, as Vault's multierror.

import { CofferError, badRequest, multierror } from '../../framework/errors';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import { compactJSON, goQuote, parseArn } from './go-format';
import { CREDENTIAL_TYPES, NULLABLE_FIELDS, emptyRole, upgradeLegacyEntry, type CredentialType, type LoadedRole, type NullableField, type Role } from './role';

const STS_TYPES = 'assumed_role, federation_token, and session_token';

export const ROLE_FIELDS: FieldSchemas = {
  credential_type: { type: 'string', description: 'What the role issues: iam_user, assumed_role, federation_token or session_token.' },
  role_arns: { type: 'comma-string-list', description: 'The AWS roles that assumed_role credentials may assume.' },
  policy_arns: {
    type: 'comma-string-list',
    description: 'Managed policies: attached to iam_user users, or limiting what assumed_role and federation_token credentials may do.',
  },
  policy_document: {
    type: 'string',
    description: 'An IAM policy (JSON): put on iam_user users, or limiting what assumed_role and federation_token credentials may do.',
  },
  iam_groups: { type: 'comma-string-list', description: 'IAM groups: iam_user users join them; the STS types take on their policies.' },
  iam_tags: { type: 'string-map', description: 'Tags for the IAM users the role creates: a map, or a list of "key=value".' },
  session_tags: { type: 'string-map', description: 'Session tags passed when assumed_role credentials are made: a map, or a list of "key=value".' },
  external_id: { type: 'string', description: 'The external ID passed when assumed_role credentials are made.' },
  default_sts_ttl: { type: 'duration', description: `TTL of STS credentials when none is asked for (${STS_TYPES}).` },
  max_sts_ttl: { type: 'duration', description: `Longest TTL of STS credentials (${STS_TYPES}).` },
  permissions_boundary_arn: { type: 'string', description: 'A managed policy set as the permissions boundary of iam_user users.' },
  arn: { type: 'string', description: 'Deprecated: use role_arns or policy_arns.' },
  policy: { type: 'string', description: 'Deprecated: use policy_document.' },
  user_path: { type: 'string', default: '/', description: 'The path iam_user users are created under.' },
  mfa_serial_number: { type: 'string', description: 'The MFA device of the root credentials, for session_token credentials.' },
  wait_for_usable: {
    type: 'bool',
    description: 'Coffer: iam_user credentials are returned only once AWS accepts the new access key (for a bounded time).',
  },
};

/** What a write makes: the role to store, and Vault's warnings about it. */
export interface RoleWrite {
  entry: LoadedRole;
  warnings: string[];
}

/** The newer parameters a legacy write may not carry, in the order Vault checks them (wait_for_usable: Coffer's). */
const NEWER_PARAMS = ['credential_type', 'role_arns', 'policy_arns', 'policy_document', 'default_sts_ttl', 'max_sts_ttl', 'user_path', 'permissions_boundary_arn'];

/** IAM user paths: "/" or "/…/" of printable ASCII without spaces, 512 characters at most. */
const USER_PATH = /^\/([\x21-\x7F]{0,510}\/)?$/;
/** The expression as Vault's message shows it (Go's syntax, which this one shares). */
const USER_PATH_SOURCE = '^\\/([\\x21-\\x7F]{0,510}\\/)?$';

/** The legacy parameter's text ("" when neither is given); giving both is an internal error in Vault. */
function legacyParam(f: FieldData): string {
  const policy = f.get<string>('policy');
  const arn = f.get<string>('arn');
  if (policy !== '' && arn !== '') throw new CofferError(500, [multierror(['only one of policy or arn should be provided'])]);
  return policy !== '' ? policy : arn;
}

/**
 * The role a write to roles/:name makes of `existing` (null: a new role). Throws Vault's 400s:
 * a legacy parameter mixed with a newer one, a policy document that is not JSON, legacy data that
 * cannot be upgraded, and the combined validation errors.
 */
export function parseRoleWrite(f: FieldData, existing: LoadedRole | null): RoleWrite {
  const warnings: string[] = [];
  const role: Role = existing ? structuredClone(existing.role) : emptyRole();
  // Unchecked until validation: any text the client sent.
  let credentialTypes: string[] = role.credentialTypes;
  const nulls = new Set<NullableField>(existing ? (existing.nullFields ?? []) : NULLABLE_FIELDS);
  if (existing?.invalidData) warnings.push(`Invalid data of ${goQuote(existing.invalidData)} cleared out of role`);

  const legacy = legacyParam(f);
  const given = (name: string): boolean => {
    if (!f.has(name)) return false;
    if (legacy !== '' && NEWER_PARAMS.includes(name)) {
      throw badRequest(`cannot supply deprecated role or policy parameters with ${name === 'credential_type' ? 'an explicit credential_type' : name}`);
    }
    return true;
  };
  /** A list or map given as JSON null is Go's nil: it reads back as null, not empty. */
  const setNullable = <K extends NullableField>(name: string, field: K): void => {
    if (!given(name)) return;
    role[field] = f.get<Role[K]>(name);
    if (f.raw[name] === null) nulls.add(field);
    else nulls.delete(field);
  };

  if (given('credential_type')) credentialTypes = [f.get<string>('credential_type')];
  setNullable('role_arns', 'roleArns');
  setNullable('policy_arns', 'policyArns');
  if (given('policy_document')) {
    const text = f.get<string>('policy_document');
    const compacted = text === '' ? '' : compactJSON(text);
    if (compacted === null) throw badRequest(`cannot parse policy document: ${goQuote(text)}`);
    role.policyDocument = compacted;
  }
  if (given('default_sts_ttl')) role.defaultStsTtl = f.get<number>('default_sts_ttl');
  if (given('max_sts_ttl')) role.maxStsTtl = f.get<number>('max_sts_ttl');
  if (given('user_path')) role.userPath = f.get<string>('user_path');
  if (given('permissions_boundary_arn')) role.permissionsBoundaryArn = f.get<string>('permissions_boundary_arn');
  setNullable('iam_groups', 'iamGroups');
  setNullable('iam_tags', 'iamTags');
  if (given('mfa_serial_number')) role.mfaSerialNumber = f.get<string>('mfa_serial_number');
  setNullable('session_tags', 'sessionTags');
  if (given('external_id')) role.externalId = f.get<string>('external_id');
  if (f.has('wait_for_usable')) {
    if (legacy !== '') throw badRequest('cannot supply deprecated role or policy parameters with wait_for_usable');
    role.waitForUsable = f.get<boolean>('wait_for_usable');
  }

  let entry: LoadedRole;
  if (legacy !== '') {
    entry = upgradeLegacyEntry(legacy);
    if (entry.invalidData) throw badRequest(`unable to parse supplied data: ${goQuote(entry.invalidData)}`);
    warnings.push('Detected use of legacy role or policy parameter. Please upgrade to use the new parameters.');
  } else {
    role.prohibitFlexibleCredPath = false;
    role.credentialTypes = credentialTypes as CredentialType[];
    entry = { role, nullFields: NULLABLE_FIELDS.filter((field) => nulls.has(field)) };
  }

  const errors = roleErrors(entry.role);
  if (errors.length > 0) throw badRequest(`error(s) validating supplied role data: ${goQuote(multierror(errors))}`);
  return { entry, warnings };
}

/** Vault's checks of a whole role, in its order, each problem a message. */
export function roleErrors(role: Role): string[] {
  let errors: string[] = [];
  // A write may carry any text as its credential type: checked here.
  const credentialTypes: readonly string[] = role.credentialTypes;
  const has = (type: CredentialType) => credentialTypes.includes(type);
  const stsType = has('assumed_role') || has('federation_token') || has('session_token');

  if (credentialTypes.length === 0) errors.push('did not supply credential_type');
  for (const type of credentialTypes) {
    if (!CREDENTIAL_TYPES.includes(type as CredentialType)) errors.push(`unrecognized credential type: ${type}`);
  }
  if (role.defaultStsTtl !== 0 && !stsType) errors.push(`default_sts_ttl parameter only valid for ${STS_TYPES} credential types`);
  if (role.maxStsTtl !== 0 && !stsType) errors.push(`max_sts_ttl parameter only valid for ${STS_TYPES} credential types`);
  if (role.maxStsTtl > 0 && role.defaultStsTtl > 0 && role.defaultStsTtl > role.maxStsTtl) {
    errors.push('"default_sts_ttl" value must be less than or equal to "max_sts_ttl" value');
  }
  if (role.userPath !== '') {
    if (!has('iam_user')) errors.push('user_path parameter only valid for iam_user credential type');
    if (!USER_PATH.test(role.userPath)) errors.push(`the specified value for user_path is invalid. It must match ${goQuote(USER_PATH_SOURCE)} regexp`);
  }
  if (role.permissionsBoundaryArn !== '') {
    if (!has('iam_user')) errors.push("cannot supply permissions_boundary_arn when credential_type isn't iam_user");
    const problem = managedPolicyProblem(role.permissionsBoundaryArn);
    // Vault starts a new list with this error: whatever was found before it is not reported.
    if (problem !== null) errors = [`invalid permissions_boundary_arn parameter: ${problem}`];
  }
  if ((role.policyDocument !== '' || role.policyArns.length > 0) && has('session_token')) {
    errors.push('cannot supply a policy or role when using credential_type session_token');
  }
  if (role.roleArns.length > 0 && !has('assumed_role')) errors.push("cannot supply role_arns when credential_type isn't assumed_role");
  if (Object.keys(role.sessionTags).length > 0 && !has('assumed_role')) errors.push("cannot supply session_tags when credential_type isn't assumed_role");
  if (role.externalId !== '' && !has('assumed_role')) errors.push("cannot supply external_id when credential_type isn't assumed_role");
  if (role.waitForUsable && !has('iam_user')) errors.push('wait_for_usable parameter only valid for iam_user credential type');
  return errors;
}

/** Why `arn` is not the ARN of an IAM managed policy (null: it is). */
function managedPolicyProblem(arn: string): string | null {
  const parsed = parseArn(arn);
  if (typeof parsed === 'string') return parsed;
  if (parsed.service !== 'iam') return `expected a service of iam but got ${parsed.service}`;
  if (!parsed.resource.startsWith('policy/')) return `expected a resource type of policy but got ${parsed.resource}`;
  return null;
}
