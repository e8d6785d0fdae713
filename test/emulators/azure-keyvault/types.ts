// The JSON of the Azure emulator's control API (/_emulator/…): what a test registers, and what it
// reads back. No Node imports, so that tests running inside workerd can use these types and client.ts.

/** Key Vault's key permissions (access policies). */
export const KEY_PERMISSIONS = ['get', 'list', 'create', 'update', 'import', 'delete', 'sign', 'verify', 'encrypt', 'decrypt', 'wrapKey', 'unwrapKey'] as const;
export type KeyPermission = (typeof KEY_PERMISSIONS)[number];

export interface ClientSpec {
  client_id: string;
  client_secret: string;
}

export interface VaultSpec {
  /** The vault's name (globally unique, as Azure's DNS names are). */
  name: string;
  /** The key store DNS suffix the vault lives under (default vault.azure.net): tokens must be for https://<resource>. */
  resource?: string;
  /** client_id → key permissions; absent: every client of the tenant may do everything. */
  access?: Record<string, KeyPermission[]>;
}

export interface TenantSpec {
  clients?: ClientSpec[];
  vaults?: VaultSpec[];
  /** expires_in of the access tokens issued (default 3599). */
  token_lifetime_s?: number;
}

/** A key made through the control API (as another tool would make it): the REST create's fields. */
export interface KeySpec {
  kty: 'RSA' | 'RSA-HSM' | 'EC' | 'EC-HSM';
  key_size?: number;
  crv?: 'P-256' | 'P-384' | 'P-521';
  key_ops?: string[];
  enabled?: boolean;
}

/**
 * A scripted failure of one operation (token, get, create, sign, verify, encrypt, decrypt, or "*"):
 * answered with Key Vault's (or Entra ID's) error document, or with the connection dropped.
 */
export interface FaultSpec {
  op: string;
  status?: number;
  /** Key Vault's error code (default Throttled for 429, else InternalServerError), or the token endpoint's OAuth error (default server_error). */
  code?: string;
  message?: string;
  /** Token endpoint faults: the AADSTS number in error_codes (default 50000). */
  aadsts?: number;
  /** Retry-After header (seconds). */
  retry_after?: number;
  /** Close the connection without an answer (an unreachable endpoint). */
  drop?: boolean;
  /** Let this many matching calls through first (default 0). */
  after?: number;
  /** How many calls fail (default 1). */
  times?: number;
}

export interface CallRecord {
  api: 'aad' | 'keyvault';
  /** token, openid-configuration, get, create, sign, verify, encrypt, decrypt, … */
  op: string;
  client_id?: string;
  scope?: string;
  vault?: string;
  key?: string;
  version?: string;
  alg?: string;
  /** create: what was asked for. */
  kty?: string;
  key_size?: number;
  crv?: string;
  key_ops?: string[];
  api_version?: string;
  status: number;
  code?: string;
}

export interface KeyVersionView {
  version: string;
  kid: string;
  kty: string;
  key_size?: number;
  crv?: string;
  key_ops: string[];
  enabled: boolean;
  /** Epoch seconds. */
  created: number;
  /** The public key, SPKI PEM. */
  public_key: string;
}

export interface VaultView {
  name: string;
  resource: string;
  /** Key name → its versions, oldest first. */
  keys: Record<string, KeyVersionView[]>;
}

export interface TenantState {
  tenant_id: string;
  client_ids: string[];
  /** Access tokens issued so far, per client. */
  tokens_issued: Record<string, number>;
  vaults: VaultView[];
}
