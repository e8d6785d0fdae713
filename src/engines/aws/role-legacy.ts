// Roles in the form of Vault's first AWS engine: a bare string at `policy/<name>`, either an inline
// IAM policy (compacted JSON) or the ARN of a managed policy or of a role to assume. Such entries
// are read as roles of the current form (reference §3.2), and the legacy `policy`/`arn` write
// parameters go through the same conversion. A converted role may serve only the path its old
// form served (Role.prohibitFlexibleCredPath): creds for iam_user, sts for the STS types.

import { compactJSON, parseArn } from './go-format';

export const LEGACY_PREFIX = 'policy/';

/** What a legacy entry stands for; role.ts makes the role of it. */
export type LegacyRole =
  | { credentialTypes: ['assumed_role']; roleArn: string }
  | { credentialTypes: ['iam_user']; policyArn: string }
  | { credentialTypes: ['iam_user', 'federation_token']; policyDocument: string };

/**
 * A role ARN → assumed_role; a policy ARN → iam_user; JSON → iam_user or federation_token with the
 * compacted document (the old form did not say which). Null for anything else (Vault's invalid_data).
 */
export function parseLegacyEntry(text: string): LegacyRole | null {
  if (!text.startsWith('arn:')) {
    const document = compactJSON(text);
    return document === null ? null : { credentialTypes: ['iam_user', 'federation_token'], policyDocument: document };
  }
  const arn = parseArn(text);
  if (typeof arn === 'string') return null;
  const resourceType = arn.resource.split('/')[0];
  if (resourceType === 'role') return { credentialTypes: ['assumed_role'], roleArn: text };
  if (resourceType === 'policy') return { credentialTypes: ['iam_user'], policyArn: text };
  return null;
}
