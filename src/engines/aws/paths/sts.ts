// sts/:name (GET and POST): STS credentials for a role (assumed_role, federation_token, session_token).

import type { PathDef } from '../../../framework/backend';
import { CREDENTIAL_FIELDS, issueCredentials } from '../credentials';
import { ROLE_NAME } from '../role';
import type { AwsHost } from '../config';

export function stsPaths(host: AwsHost): PathDef[] {
  const handler: NonNullable<PathDef['operations']['read']> = async (req, f) => await issueCredentials(req, f, host, 'sts');
  return [
    {
      pattern: `sts/${ROLE_NAME}`,
      fields: CREDENTIAL_FIELDS,
      summary: 'Generate STS credentials from a role.',
      operations: { read: handler, update: handler },
    },
  ];
}
