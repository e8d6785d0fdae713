// The control API's shapes (server.ts), shared by the server and its fetch client (client.ts).

/** POST /_emulator/service-accounts: a service account and one key, made by the emulator. */
export interface ServiceAccountSpec {
  /** The project the account belongs to (and may use, unless `projects` says otherwise). */
  project: string;
  /** The account id (before @): default "coffer-<random>". */
  name?: string;
  /** The projects whose Cloud KMS the account may use (default: [project]). */
  projects?: string[];
  /** The Cloud KMS permissions it holds (default: all), e.g. ["cloudkms.cryptoKeyVersions.useToSign"]. */
  permissions?: string[];
  /** Seconds an access token lives (default 3599, as Google). */
  tokenLifetime?: number;
}

/** A service-account key file, as the Cloud console downloads it. */
export interface ServiceAccountKeyFile {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

/** POST /_emulator/projects/<p>/reset */
export interface ResetBody {
  /** How long a new version stays PENDING_GENERATION at least (default 200 ms). */
  generationDelayMs?: number;
}

/** One scripted failure: a call of `rpc` (after `after` of them) answered with an error or a corrupted checksum, `times` times. */
export interface FaultSpec {
  /** An RPC name (AsymmetricSign, GetPublicKey, CreateCryptoKey, ...), "Token" for the token endpoint, or "*". */
  rpc: string;
  /** HTTP status of the error (e.g. 503); absent with `corrupt`. */
  status?: number;
  /** Google's status name (UNAVAILABLE, RESOURCE_EXHAUSTED, ...). */
  code?: string;
  message?: string;
  /** Answer normally, but with a wrong CRC32C of the payload (GetPublicKey, AsymmetricSign, AsymmetricDecrypt). */
  corrupt?: boolean;
  after?: number;
  times?: number;
}

export interface FaultsBody {
  faults: FaultSpec[];
}

/** One request as the emulator saw it (calls of the token endpoint under the account's project). */
export interface CallRecord {
  rpc: string;
  /** The resource the call names. */
  name: string;
  /** The caller: a service account's email, or null when unauthenticated. */
  principal: string | null;
  /** How the caller authenticated: an access token, a self-signed JWT, or neither. */
  auth: 'token' | 'jwt' | 'none';
  /** Whether the request asked for numeric enums ($alt=json;enum-encoding=int, as the Node SDK does). */
  numericEnums: boolean;
  status: number;
  code?: string;
  /** The query string (cryptoKeyId=..., pageSize=...), when there is one. */
  query?: string;
  /** The request body (POST). */
  body?: unknown;
}

export interface VersionState {
  name: string;
  state: string;
  algorithm: string;
  protectionLevel: string;
  /** SPKI PEM, once generated. */
  publicKeyPem: string | null;
}

export interface CryptoKeyState {
  name: string;
  purpose: string;
  algorithm: string;
  protectionLevel: string;
  versions: VersionState[];
}

export interface ProjectState {
  keyRings: { name: string; cryptoKeys: CryptoKeyState[] }[];
}
