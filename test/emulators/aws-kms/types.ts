// The JSON of the KMS emulator's control API (/_emulator/…): what a test seeds, and what it reads
// back. No Node imports, so that tests running inside workerd can use these types and client.ts.
export type { DelaySpec, FaultSpec, FaultsBody } from '../aws-iam-sts/types';

/** The emulated account (every tenant's, unless a reset names another). */
export const KMS_ACCOUNT_ID = '111122223333';

/** The access key every tenant starts with (a reset without `credentials` keeps it). */
export const DEFAULT_KMS_CREDENTIALS = {
  accessKeyId: 'AKIAKMSEMULATOR00001',
  secretAccessKey: 'kmsEmulator/Secret/Key/EXAMPLE0000000001',
} as const;

export interface SeedCredential {
  accessKeyId: string;
  secretAccessKey: string;
  /** The IAM user the key belongs to (named in AccessDeniedException messages); default "kms-user". */
  userName?: string;
  /** The operations the key may call (e.g. ["DescribeKey", "Sign"]); every operation when absent. */
  allow?: string[];
}

/** POST /_emulator/reset: replaces all state, and clears faults, delays and the call log. */
export interface ResetBody {
  accountId?: string;
  /** Default: [DEFAULT_KMS_CREDENTIALS]. */
  credentials?: SeedCredential[];
}

/** POST /_emulator/keys: a key made directly (what an operator made in the console, say). */
export interface SeedKey {
  /** Default us-east-1. */
  region?: string;
  /** RSA_2048 / RSA_3072 / RSA_4096 / ECC_NIST_P256 / ECC_NIST_P384 / ECC_NIST_P521. */
  keySpec: string;
  /** SIGN_VERIFY, ENCRYPT_DECRYPT (RSA) or KEY_AGREEMENT (ECC). */
  keyUsage: string;
  /** An alias ("alias/<name>") to point at the key. */
  alias?: string;
  description?: string;
}

export type KeyState = 'Enabled' | 'Disabled' | 'PendingDeletion';

/** POST /_emulator/key-state: moves a key (by id or ARN) to a state. */
export interface KeyStateBody {
  keyId: string;
  state: KeyState;
}

/** A key as the control API shows it (never its private half). */
export interface KeyView {
  KeyId: string;
  Arn: string;
  Region: string;
  KeySpec: string;
  KeyUsage: string;
  KeyState: KeyState;
  Description: string;
  /** ISO 8601. */
  CreationDate: string;
  /** The names ("alias/…") of the aliases pointing at it. */
  Aliases: string[];
  /** Base64 DER SubjectPublicKeyInfo. */
  PublicKey: string;
}

export interface EmulatorState {
  accountId: string;
  credentials: { accessKeyId: string; userName: string; allow: string[] | null }[];
  keys: KeyView[];
}

/** One API request as the emulator answered it. */
export interface CallRecord {
  /** The X-Amz-Target operation (without "TrentService."); null when there was none. */
  operation: string | null;
  region: string | null;
  accessKeyId: string | null;
  status: number;
  code?: string;
  /** The request's text parameters (KeyId, KeySpec, SigningAlgorithm, …); binary ones as their length. */
  params: Record<string, string | number | boolean>;
}
