// The backend of each managed key type: a factory that makes the ManagedKey for an entry.

import { awsKmsBackend } from './awskms';
import { azureKeyVaultBackend } from './azurekeyvault';
import { gcpCkmsBackend } from './gcpckms';
import { pkcs11Backend } from './pkcs11';
import type { BackendDeps, ManagedKey, ManagedKeyEntry, ManagedKeyType } from './types';

export type BackendFactory = (entry: ManagedKeyEntry, deps: BackendDeps) => ManagedKey;

/** The factories by type: pkcs11 through the HSM bridge (env.HSM_BRIDGE), the clouds' KMS over HTTPS. */
const factories: Record<ManagedKeyType, BackendFactory> = {
  pkcs11: pkcs11Backend,
  cloudakms: awsKmsBackend,
  cloudbkeyvault: azureKeyVaultBackend,
  cloudckms: gcpCkmsBackend,
};

/** Installs the factory of a type (a backend module, or a test's software backend). Returns the previous one. */
export function registerBackend(type: ManagedKeyType, factory: BackendFactory): BackendFactory {
  const previous = factories[type];
  factories[type] = factory;
  return previous;
}

/** The ManagedKey behind an entry; throws the type's ManagedKeyError when it cannot be made. */
export function createBackend(entry: ManagedKeyEntry, deps: BackendDeps): ManagedKey {
  return factories[entry.type](entry, deps);
}
