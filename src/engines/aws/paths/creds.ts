// creds/:name (GET and POST): credentials for a role; iam_user roles answer here.

import type { PathDef } from '../../../framework/backend';
import { CREDENTIAL_FIELDS, issueCredentials } from '../credentials';
import { ROLE_NAME } from '../role';
import type { AwsHost } from '../config';

export function credsPaths(host: AwsHost): PathDef[] {
  const handler: NonNullable<PathDef['operations']['read']> = async (req, f) => await issueCredentials(req, f, host, 'creds');
  return [
    {
      pattern: `creds/${ROLE_NAME}`,
      fields: CREDENTIAL_FIELDS,
      summary: 'Generate AWS credentials from a role.',
      operations: { read: handler, update: handler },
    },
  ];
}
