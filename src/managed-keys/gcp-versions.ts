// The crypto key version a cloudckms managed key names, in Cloud KMS: why it is missing, waiting
// while it is generated, and making it. Version 1 comes with its crypto key (created in an
// existing key ring); a later version is made when it is exactly the key's next one. Versions are
// never replaced: rotating means pointing crypto_key_version at a new one.

import type { GcpAlgorithm } from './gcp-algorithms';
import { isKmsError, type KmsClient } from './gcp-rest';
import { ManagedKeyError, ManagedKeyMissing, type GcpCkmsConfig } from './types';

/**
 * How long a request waits for a new version to leave PENDING_GENERATION (RSA 4096 may take a
 * while, HSM keys longer); past it, a 502 says to try again, and the next use waits again.
 */
const GENERATION_WAIT_MS = 30_000;
/** New keys are software keys (the configuration has no protection level field yet). */
const PROTECTION_LEVEL = 'SOFTWARE';

export interface VersionDoc {
  name?: string;
  state?: string;
  generationFailureReason?: string;
}
interface CryptoKeyDoc {
  purpose?: string;
  versionTemplate?: { algorithm?: string };
}

/** The resource names of a configuration's key ring, crypto key and version. */
export interface VersionRef {
  kms: KmsClient;
  alg: GcpAlgorithm;
  ring: string;
  key: string;
  cryptoKeyId: string;
  version: string;
  name: string;
  /** The name from "/locations/" on: answers may name the project by number. */
  tail: string;
}

export function versionRef(c: GcpCkmsConfig, kms: KmsClient, alg: GcpAlgorithm): VersionRef {
  const seg = encodeURIComponent;
  const ring = `projects/${seg(c.project)}/locations/${seg(c.region)}/keyRings/${seg(c.key_ring)}`;
  const key = `${ring}/cryptoKeys/${seg(c.crypto_key)}`;
  const name = `${key}/cryptoKeyVersions/${c.crypto_key_version}`;
  return { kms, alg, ring, key, cryptoKeyId: c.crypto_key, version: c.crypto_key_version, name, tail: name.slice(name.indexOf('/locations/')) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Why the version was not found: no crypto key (or key ring), or no such version of it. */
export async function missing(ref: VersionRef): Promise<never> {
  if (!(await exists(ref, ref.key))) throw new ManagedKeyMissing(`Google Cloud KMS has no crypto key ${ref.key}`);
  throw new ManagedKeyMissing(`Google Cloud KMS crypto key ${ref.key} has no version ${ref.version}`);
}

/** Waits while the version is PENDING_GENERATION; a 400 for any state but ENABLED. */
export async function untilEnabled(ref: VersionRef): Promise<void> {
  const deadline = Date.now() + GENERATION_WAIT_MS;
  for (let pause = 100; ; pause = Math.min(pause * 2, 1000)) {
    const v = await ref.kms.call<VersionDoc>('GET', ref.name);
    if (v.state === 'ENABLED') return;
    if (v.state === 'GENERATION_FAILED') throw new ManagedKeyError(400, `Google Cloud KMS failed to generate ${ref.name}: ${v.generationFailureReason ?? 'no reason given'}`);
    if (v.state !== 'PENDING_GENERATION') throw new ManagedKeyError(400, `Google Cloud KMS key version ${ref.name} is ${v.state ?? 'in an unknown state'}: only ENABLED versions can be used`);
    if (Date.now() + pause > deadline) throw new ManagedKeyError(502, `Google Cloud KMS key version ${ref.name} is still being generated after ${GENERATION_WAIT_MS / 1000} s: try again later`);
    await sleep(pause);
  }
}

/** Makes the version (the caller then waits for it: untilEnabled); a 400 when it exists already. */
export async function createVersion(ref: VersionRef): Promise<void> {
  if (await exists(ref, ref.name)) {
    throw new ManagedKeyError(
      400,
      `Google Cloud KMS key versions cannot be replaced: ${ref.name} exists. To rotate, set crypto_key_version to the next version number (allow_generate_key creates it)`,
    );
  }
  if (ref.version === '1' && (await createCryptoKey(ref))) return;
  await createNextVersion(ref);
}

async function exists(ref: VersionRef, name: string): Promise<boolean> {
  try {
    await ref.kms.call('GET', name);
    return true;
  } catch (e) {
    if (isKmsError(e, 'NOT_FOUND')) return false;
    throw e;
  }
}

/** False when the crypto key exists already (its version 1 is then made as a new version). */
async function createCryptoKey(ref: VersionRef): Promise<boolean> {
  const body = { purpose: ref.alg.purpose, versionTemplate: { algorithm: ref.alg.name, protectionLevel: PROTECTION_LEVEL } };
  try {
    await ref.kms.call('POST', `${ref.ring}/cryptoKeys?cryptoKeyId=${encodeURIComponent(ref.cryptoKeyId)}`, body);
    return true;
  } catch (e) {
    if (isKmsError(e, 'ALREADY_EXISTS')) return false;
    if (isKmsError(e, 'NOT_FOUND')) {
      throw new ManagedKeyError(400, `Google Cloud KMS key ring ${ref.ring} does not exist: create the key ring first (this server creates crypto keys, not key rings)`);
    }
    throw e;
  }
}

async function createNextVersion(ref: VersionRef): Promise<void> {
  let key: CryptoKeyDoc;
  try {
    key = await ref.kms.call<CryptoKeyDoc>('GET', ref.key);
  } catch (e) {
    if (isKmsError(e, 'NOT_FOUND')) throw new ManagedKeyError(400, `Google Cloud KMS has no crypto key ${ref.key}: set crypto_key_version to 1 to create it`);
    throw e;
  }
  const template = key.versionTemplate?.algorithm;
  if (key.purpose !== ref.alg.purpose || template !== ref.alg.name) {
    throw new ManagedKeyError(400, `Google Cloud KMS crypto key ${ref.key} makes ${template ?? 'unknown'} versions (${key.purpose ?? 'unknown purpose'}), but the managed key's algorithm is ${ref.alg.name}`);
  }
  const next = (await lastVersion(ref)) + 1;
  if (String(next) !== ref.version) {
    throw new ManagedKeyError(400, `Google Cloud KMS crypto key ${ref.key} can get version ${next} next, not ${ref.version}: set crypto_key_version to ${next} to generate a new version`);
  }
  const made = await ref.kms.call<VersionDoc>('POST', `${ref.key}/cryptoKeyVersions`, {});
  if (!made.name?.endsWith(ref.tail)) throw new ManagedKeyError(502, `Google Cloud KMS created ${made.name ?? 'a version'} instead of ${ref.name} (another client created one meanwhile?)`);
}

/** The highest version number of the crypto key (0 when it has none). */
async function lastVersion(ref: VersionRef): Promise<number> {
  let last = 0;
  let page = '';
  do {
    const query = `pageSize=1000${page ? `&pageToken=${encodeURIComponent(page)}` : ''}`;
    const list = await ref.kms.call<{ cryptoKeyVersions?: VersionDoc[]; nextPageToken?: string }>('GET', `${ref.key}/cryptoKeyVersions?${query}`);
    for (const v of list.cryptoKeyVersions ?? []) last = Math.max(last, Number(/\/cryptoKeyVersions\/(\d+)$/.exec(v.name ?? '')?.[1] ?? 0));
    page = list.nextPageToken ?? '';
  } while (page);
  return last;
}
