// The AWS secrets engine (reference §3): root credentials for IAM and STS, roles, and dynamic
// credentials — IAM users behind renewable leases, or STS credentials that expire on their own.
// Every call to AWS is a signed Query API request (client.ts); IAM users are created under a
// write-ahead entry so that no failure, not even a reset object, leaves one behind (wal.ts).

import type { Backend } from '../../framework/backend';
import { configPaths } from './paths/config';
import { issuesOnlyLease } from './credentials';
import { credsPaths } from './paths/creds';
import { rolePaths } from './paths/roles';
import { stsPaths } from './paths/sts';
import { SigningKeys } from './client';
import type { AwsHost } from './config';
import { accessKeys } from './iam-user';
import { settleWriteAhead } from './wal';

export type { AwsHost } from './config';

export function awsBackend(given: AwsHost): Backend {
  // The backend lives as long as its mount's keys: the root key's signing keys live with it.
  const host: AwsHost = { signingKeys: new SigningKeys(), ...given };
  return {
    type: 'aws',
    paths: [...configPaths(host), ...rolePaths(), ...credsPaths(host), ...stsPaths(host)],
    secretTypes: { access_keys: accessKeys(host) },
    // Reading creds or sts issues an IAM user or STS credentials, and a lease; STS credentials
    // write nothing else, so they need not wait for the mount's other writes.
    writingReadPaths: ['creds/*', 'sts/*'],
    leaseOnly: issuesOnlyLease,
    periodic: (storage, now, mount) => settleWriteAhead(host, storage, now, mount),
  };
}
