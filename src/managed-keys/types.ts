// Managed keys: external keys held by a backend (an HSM through the PKCS#11 bridge, AWS KMS,
// Azure Key Vault, Google Cloud KMS). This file is what engines see: the one interface every
// backend implements, the stored model of a key's configuration, and the error they throw.
// Layer: imports only src/framework/ and src/crypto/; engines, sys/ and the objects import it.

import type { HashName } from '../crypto/transit/hashes';
import { CofferError } from '../framework/errors';

/** The spec's backend types: what a key is stored under. */
export const MANAGED_KEY_TYPES = ['pkcs11', 'cloudakms', 'cloudbkeyvault', 'cloudckms'] as const;
export type ManagedKeyType = (typeof MANAGED_KEY_TYPES)[number];

/** What a key may be used for (Vault's `usages`). */
export const KEY_USAGES = ['encrypt', 'decrypt', 'sign', 'verify', 'wrap', 'unwrap', 'mac', 'random'] as const;
export type KeyUsage = (typeof KEY_USAGES)[number];

/** pkcs11: the HSM key behind the bridge. Stored with Vault's wire names. */
export interface Pkcs11Config {
  /** Name of a kms_library the bridge knows. */
  library: string;
  /** Decimal slot number (up to 2^64-1, so kept as text); "" when token_label is used. */
  slot: string;
  token_label: string;
  pin: string;
  key_label: string;
  key_id: string;
  /** CKM_* value (given as "0x…"). */
  mechanism: number;
  /** '' or P256 / P384 / P521 (ECDSA). */
  curve: string;
  /** 0 or 2048 / 3072 / 4096 (RSA mechanisms). */
  key_bits: number;
  force_rw_session: boolean;
  max_parallel: number;
}

/** cloudakms (Vault: awskms). */
export interface AwsKmsConfig {
  access_key: string;
  secret_key: string;
  /** '' or P256 / P384 / P521 (key_type ECDSA). */
  curve: string;
  /** '' for the regional default. */
  endpoint: string;
  /** '' or "2048" / "3072" / "4096" (key_type RSA): Vault documents it as a string. */
  key_bits: string;
  /** RSA or ECDSA. */
  key_type: string;
  /** Key id, ARN or alias/…; an alias when the key may be generated. */
  kms_key: string;
  region: string;
}

/** cloudbkeyvault (Vault: azurekeyvault). */
export interface AzureKeyVaultConfig {
  tenant_id: string;
  client_id: string;
  client_secret: string;
  /** AZUREPUBLICCLOUD, AZURECHINACLOUD, AZUREUSGOVERNMENTCLOUD or AZUREGERMANCLOUD. */
  environment: string;
  vault_name: string;
  key_name: string;
  /** The key store's DNS suffix. */
  resource: string;
  /** '' or "2048" / "3072" / "4096". */
  key_bits: string;
  /** RSA-HSM (the only type Vault supports). */
  key_type: string;
}

/** cloudckms (Vault: gcpckms). */
export interface GcpCkmsConfig {
  /** The JSON of a service-account key (there is no file system to read a path from). */
  credentials: string;
  project: string;
  key_ring: string;
  region: string;
  crypto_key: string;
  /** Positive integer, as text. */
  crypto_key_version: string;
  /** EC_SIGN_P256_SHA256, RSA_SIGN_PSS_2048_SHA256, ... */
  algorithm: string;
}

export interface BackendConfigs {
  pkcs11: Pkcs11Config;
  cloudakms: AwsKmsConfig;
  cloudbkeyvault: AzureKeyVaultConfig;
  cloudckms: GcpCkmsConfig;
}

interface EntryOf<T extends ManagedKeyType> {
  uuid: string;
  /** Unique across types; lowercase. */
  name: string;
  type: T;
  allowGenerateKey: boolean;
  allowReplaceKey: boolean;
  allowStoreKey: boolean;
  anyMount: boolean;
  usages: KeyUsage[];
  config: BackendConfigs[T];
}

/** One managed key's configuration as stored (secrets included: it lives behind the barrier). */
export type ManagedKeyEntry = { [T in ManagedKeyType]: EntryOf<T> }[ManagedKeyType];

/** The public half of the backend's key. */
export interface PublicKeyInfo {
  /** PEM "PUBLIC KEY" (SubjectPublicKeyInfo). */
  pem: string;
  keyType: 'rsa' | 'ec';
  /** RSA modulus size. */
  bits?: number;
  /** ECDSA curve. */
  curve?: 'P-256' | 'P-384' | 'P-521';
}

export interface SignOptions {
  /** The hash `digest` was made with (Vault's names: sha2-256, sha3-384, ...). */
  hash: HashName;
  /** RSA: PSS instead of PKCS#1 v1.5. */
  pss?: boolean;
  /** RSA-PSS salt length in bytes (default: the hash's length). */
  saltLength?: number;
}

/**
 * What every backend implements, and all an engine ever sees of a managed key. Methods throw
 * ManagedKeyError: 400 when the configuration (or the key found) cannot do what is asked, 502
 * when the backend cannot be reached or answers with something unexpected.
 */
export interface ManagedKey {
  /** The key's public half; throws ManagedKeyMissing when the backend holds no such key yet. */
  publicKey(): Promise<PublicKeyInfo>;
  /** Signs a digest: RSA PKCS#1 v1.5 (DigestInfo added by the backend) or PSS; ECDSA as ASN.1 DER. */
  sign(digest: Uint8Array, opts: SignOptions): Promise<Uint8Array>;
  /** False for a signature that does not verify. */
  verify(digest: Uint8Array, signature: Uint8Array, opts: SignOptions): Promise<boolean>;
  /** RSA-OAEP with `hash` for OAEP and MGF1. */
  encrypt(plaintext: Uint8Array, opts: { hash: HashName }): Promise<Uint8Array>;
  decrypt(ciphertext: Uint8Array, opts: { hash: HashName }): Promise<Uint8Array>;
  /** Creates the key in the backend (callers check allow_generate_key/allow_replace_key first: ./guard). */
  generate(): Promise<PublicKeyInfo>;
}

/** A managed-key failure, answered with its status and message. */
export class ManagedKeyError extends CofferError {
  constructor(status: number, message: string) {
    super(status, [message]);
    this.name = 'ManagedKeyError';
  }
}

/** The backend holds no key matching the configuration (it may be generated: ./guard ensureKey). */
export class ManagedKeyMissing extends ManagedKeyError {
  constructor(message = 'no key matching the configuration was found in the backend') {
    super(400, message);
    this.name = 'ManagedKeyMissing';
  }
}

/** What a backend factory may use to reach its backend. */
export interface BackendDeps {
  /** Outbound HTTP (cloud APIs; tests point it at emulators). */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
  /** The on-premises PKCS#11 bridge (env.HSM_BRIDGE), when the deployment binds one. */
  hsmBridge?: { fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> };
  /** The bridge's base URL (HSM_BRIDGE_URL): what requests through the binding are addressed to. */
  hsmBridgeUrl?: string;
  /** The bridge's bearer secret (HSM_BRIDGE_TOKEN), when it checks one (auth.bearer_token_file). */
  hsmBridgeToken?: string;
  /** Cloud endpoints other than the public ones (the Worker's env; tests point them at emulators). */
  endpoints?: CloudEndpoints;
}

/** Overrides of the cloud KMS endpoints; each absent one is the cloud's public endpoint. */
export interface CloudEndpoints {
  /** AZURE_AUTHORITY_HOST: replaces https://login.microsoftonline.com (token endpoint's host). */
  azureAuthority?: string;
  /** AZURE_KEYVAULT_URL: replaces https://<vault_name>.<resource> (key operations' base URL); "{vault_name}" in it is replaced by the key's vault_name. */
  azureKeyVault?: string;
  /** GOOGLE_CLOUDKMS_URL: replaces https://cloudkms.googleapis.com. */
  googleCloudKms?: string;
}
