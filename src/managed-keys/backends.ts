// The backend of each managed key type: a factory that makes the ManagedKey for an entry.
// Backends arrive one by one: until a type has its factory, using a key of that type answers a
// 400 saying so (configuration, listing and reading work for every type already).

import { typeLabel } from './entry';
import { pkcs11Backend } from './pkcs11';
import { ManagedKeyError, type BackendDeps, type ManagedKey, type ManagedKeyEntry, type ManagedKeyType } from './types';

export type BackendFactory = (entry: ManagedKeyEntry, deps: BackendDeps) => ManagedKey;

const notAvailable =
  (type: ManagedKeyType): BackendFactory =>
  () => {
    throw new ManagedKeyError(400, `the ${typeLabel(type)} backend is not available yet`);
  };

/** The factories by type: pkcs11 through the HSM bridge (env.HSM_BRIDGE); the cloud KMS backends are still to come. */
const factories: Record<ManagedKeyType, BackendFactory> = {
  pkcs11: pkcs11Backend,
  cloudakms: notAvailable('cloudakms'),
  cloudbkeyvault: notAvailable('cloudbkeyvault'),
  cloudckms: notAvailable('cloudckms'),
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
