// Making a new key: the creation rules shared by keys/:name, encrypt's upsert and import.

import type { RsaPairSource } from '../../crypto/rsa-keygen';
import { badRequest } from '../../framework/errors';
import { isKeyType, supportsDerivation, unsupportedTypeMessage, type KeyType } from './key-types';
import { DEFAULT_HMAC_KEY_SIZE, newVersion } from './material';
import { DEFAULT_VERSION_TEMPLATE, type KeyPolicy, type KeyVersion } from './policy';

export const MIN_AUTO_ROTATE_PERIOD = 3600;
export const HMAC_KEY_SIZE_MIN = 16;
export const HMAC_KEY_SIZE_MAX = 512;

export interface CreateOptions {
  type: string;
  derived: boolean;
  convergent: boolean;
  exportable: boolean;
  allowPlaintextBackup: boolean;
  keySize: number;
  autoRotatePeriod: number;
}

export function checkAutoRotatePeriod(seconds: number): void {
  if (seconds !== 0 && seconds < MIN_AUTO_ROTATE_PERIOD) throw badRequest('auto rotate period must be 0 to disable or at least an hour');
}

export const MANAGED_KEY_CREATED_BY_KEYS = 'keys of type managed_key are created only with keys/:name and a managed_key_name or managed_key_id';

/** Validates creation options; returns the key type. */
export function checkCreateOptions(o: CreateOptions): KeyType {
  const problem = unsupportedTypeMessage(o.type);
  if (problem || !isKeyType(o.type)) throw badRequest(problem ?? `unknown key type ${o.type}`);
  const type = o.type;
  // A managed_key key needs its managed key resolved and its backend asked (./managed/create.ts).
  if (type === 'managed_key') throw badRequest(MANAGED_KEY_CREATED_BY_KEYS);
  checkTypeOptions(type, o);
  return type;
}

/** The option rules that depend on the type (derivation, convergence, key_size, rotation period). */
export function checkTypeOptions(type: KeyType, o: CreateOptions): void {
  if (o.derived && !supportsDerivation(type)) throw badRequest(`key derivation not supported for keys of type ${type}`);
  if (o.convergent && !o.derived) throw badRequest('convergent encryption requires derivation to be enabled');
  if (o.convergent && type === 'ed25519') throw badRequest(`convergent encryption not supported for keys of type ${type}`);
  if (o.keySize !== 0) {
    if (type !== 'hmac') throw badRequest(`key_size is not valid for algorithm ${type}`);
    if (o.keySize < HMAC_KEY_SIZE_MIN || o.keySize > HMAC_KEY_SIZE_MAX) {
      throw badRequest(`invalid key_size ${o.keySize}: HMAC keys are ${HMAC_KEY_SIZE_MIN} to ${HMAC_KEY_SIZE_MAX} bytes`);
    }
  }
  checkAutoRotatePeriod(o.autoRotatePeriod);
}

/** A new policy with version 1 (generated, or the given material for imports). */
export async function buildPolicy(name: string, o: CreateOptions, now: number, first?: KeyVersion, rsa?: RsaPairSource): Promise<KeyPolicy> {
  const type = checkCreateOptions(o);
  const keySize = type === 'hmac' ? o.keySize || DEFAULT_HMAC_KEY_SIZE : 0;
  const v1 = first ?? (await newVersion(type, keySize, now, rsa));
  return policyWith(name, type, o, keySize, v1);
}

/** A policy of `type` whose only version is `v1` (options already checked). */
export function policyWith(name: string, type: KeyType, o: CreateOptions, keySize: number, v1: KeyVersion): KeyPolicy {
  return {
    name,
    type,
    derived: o.derived,
    kdf: 'hkdf_sha256',
    convergent: o.convergent,
    convergentVersion: o.convergent ? -1 : 0,
    exportable: o.exportable,
    allowPlaintextBackup: o.allowPlaintextBackup,
    deletionAllowed: false,
    minDecryptionVersion: 1,
    minEncryptionVersion: 0,
    minAvailableVersion: 0,
    latestVersion: 1,
    autoRotatePeriod: o.autoRotatePeriod,
    keySize,
    imported: false,
    allowRotation: false,
    rotatedHere: false,
    versionTemplate: DEFAULT_VERSION_TEMPLATE,
    versions: new Map([[1, v1]]),
  };
}
