// The PKI secrets engine: a certificate authority per mount (reference §1). Issuers, keys, roles,
// issued and revoked certificates live in the mount's storage; every change (serial allocation,
// revocation, CRL rebuilds, tidy) runs inside its Mount DO, so none of them interleave.

import type { Backend } from '../../framework/backend';
import { configPaths } from './paths/config';
import { crlConfigPaths } from './crl-config';
import { crlPaths } from './paths/crl';
import { fetchPaths } from './paths/fetch';
import { generatePaths } from './paths/generate';
import { importPaths } from './paths/import';
import { issuePaths } from './paths/issue';
import { issuerPaths } from './paths/issuers';
import { keyPaths } from './paths/keys';
import { ocspPaths } from './paths/ocsp';
import { pkiSecretType, revokePaths } from './paths/revoke';
import { rolePaths } from './paths/roles';
import { selfIssuedPaths } from './paths/sign-self-issued';
import { signIntermediatePaths } from './paths/sign-intermediate';
import { signVerbatimPaths } from './paths/sign-verbatim';
import { pkiPeriodic } from './tidy';
import type { ManagedKeyAccess } from '../../managed-keys/access';
import { backgroundKeyAccess } from './signers';
import { tidyPaths } from './paths/tidy';

/** Authority information anyone may read (Vault's PKI unauthenticated special paths). */
const PKI_UNAUTHENTICATED_PATHS = [
  'cert/*',
  'ca/pem',
  'ca_chain',
  'ca',
  'crl',
  'crl/pem',
  'crl/delta',
  'crl/delta/pem',
  'unified-crl',
  'unified-crl/pem',
  'unified-crl/delta',
  'unified-crl/delta/pem',
  'issuer/+/pem',
  'issuer/+/der',
  'issuer/+/json',
  'issuer/+/crl',
  'issuer/+/crl/der',
  'issuer/+/crl/pem',
  'issuer/+/crl/delta',
  'issuer/+/crl/delta/der',
  'issuer/+/crl/delta/pem',
  'issuer/+/unified-crl',
  'issuer/+/unified-crl/der',
  'issuer/+/unified-crl/pem',
  'issuer/+/unified-crl/delta',
  'issuer/+/unified-crl/delta/der',
  'issuer/+/unified-crl/delta/pem',
  'issuers/',
  'ocsp',
  'ocsp/*',
  'unified-ocsp',
  'unified-ocsp/*',
];

/** What the hosting object gives the engine. */
export interface PkiSettings {
  /** Managed keys (sys/managed-keys): keys made by root|intermediate|keys/generate/kms sign through them. */
  managedKeys?: ManagedKeyAccess;
}

export function pkiBackend(settings: PkiSettings = {}): Backend {
  const { managedKeys } = settings;
  return {
    type: 'pki',
    // First match wins: the CRL and OCSP paths come before fetch's catch-all cert/:serial.
    paths: [
      ...crlPaths(managedKeys),
      ...ocspPaths(managedKeys),
      ...fetchPaths(),
      ...generatePaths(managedKeys),
      ...importPaths(),
      ...issuerPaths(),
      ...keyPaths(managedKeys),
      ...configPaths(),
      ...crlConfigPaths(),
      ...rolePaths(),
      ...issuePaths(managedKeys),
      ...signVerbatimPaths(managedKeys),
      ...signIntermediatePaths(managedKeys),
      ...selfIssuedPaths(managedKeys),
      ...revokePaths(managedKeys),
      ...tidyPaths(),
    ],
    // CRL reads first rebuild a CRL a revocation left stale.
    writingReadPaths: ['crl', 'crl/*', 'cert/crl*', 'cert/delta-crl*', 'cert/unified-crl*', 'cert/unified-delta-crl*', 'unified-crl', 'unified-crl/*', 'issuer/+/crl*', 'issuer/+/unified-crl*'],
    // Key generation and signing run in the Worker under the role and issuer the mount's object
    // confirms; a role that stores its certificates (or leases them) is finished in the object.
    offloadPaths: ['issue/*', 'issuer/+/issue/*', 'sign/*', 'issuer/+/sign/*'],
    // Issued and revoked certificates, CRLs and tidy state: issuing reads none of them.
    offloadVolatile: ['certs/', 'revoked/', 'crls/', 'tidy/'],
    secretTypes: { pki: pkiSecretType },
    periodic: (storage, now, mount) => pkiPeriodic(storage, now, backgroundKeyAccess(managedKeys, mount?.mountAllowedManagedKeys)),
    unauthenticatedPaths: PKI_UNAUTHENTICATED_PATHS,
    sudoPaths: ['root', 'root/sign-self-issued'],
  };
}
