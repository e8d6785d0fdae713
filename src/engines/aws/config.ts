// The engine's root configuration (config/root) and lease settings (config/lease), and the IAM
// and STS clients they describe. Credentials and the region fall back to the Worker's AWS_*
// variables, as the AWS SDK's environment provider does; a Worker has no shared credentials
// file and no instance role, so the chain ends there.

import { getJSON } from '../../framework/storage';
import { QueryClient, AwsError, type AwsCredentials, type Endpoint, type SigningKeys } from './client';

export const ROOT_KEY = 'config/root';
export const LEASE_KEY = 'config/lease';

/** Vault's default: `vault-<display>-<role>-<time>-<random>` for IAM users, `vault-<time>-<random>` for STS. */
export const DEFAULT_USERNAME_TEMPLATE =
  '{{ if (eq .Type "STS") }}{{ printf "vault-%s-%s"  (unix_time) (random 20) | truncate 32 }}{{ else }}{{ printf "vault-%s-%s-%s" (printf "%s-%s" (.DisplayName) (.PolicyName) | truncate 42) (unix_time) (random 20) | truncate 64 }}{{ end }}';

export interface RootConfig {
  accessKey: string;
  secretKey: string;
  region: string;
  iamEndpoint: string;
  stsEndpoint: string;
  stsRegion: string;
  stsFallbackEndpoints: string[];
  stsFallbackRegions: string[];
  /** −1: the SDK's default. */
  maxRetries: number;
  usernameTemplate: string;
}

export interface LeaseConfig {
  /** Seconds (0: the mount's default). */
  lease: number;
  leaseMax: number;
}

export const emptyRootConfig = (): RootConfig => ({
  accessKey: '',
  secretKey: '',
  region: '',
  iamEndpoint: '',
  stsEndpoint: '',
  stsRegion: '',
  stsFallbackEndpoints: [],
  stsFallbackRegions: [],
  maxRetries: -1,
  usernameTemplate: DEFAULT_USERNAME_TEMPLATE,
});

export const loadRootConfig = (storage: Parameters<typeof getJSON>[0]): Promise<RootConfig | null> => getJSON<RootConfig>(storage, ROOT_KEY);
export const loadLeaseConfig = (storage: Parameters<typeof getJSON>[0]): Promise<LeaseConfig | null> => getJSON<LeaseConfig>(storage, LEASE_KEY);

/** The Worker's AWS_* variables. */
export type AwsEnv = Record<string, string | undefined>;

/** What the engine is given by its mount. */
export interface AwsHost {
  env: AwsEnv;
  /**
   * Signing keys of the mount's root credentials, kept by its backend (dropped with it when the
   * object forgets its keys). Keys given for one call (a new user's, a rotation's) are not kept.
   */
  signingKeys?: SigningKeys;
}

/** Region order: config, AWS_REGION, AWS_DEFAULT_REGION, us-east-1. */
export const regionOf = (config: RootConfig | null, env: AwsEnv): string => config?.region || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';

/** The configured keys, else the environment's; none is the SDK's NoCredentialProviders at call time. */
function credentialsOf(config: RootConfig | null, env: AwsEnv): AwsCredentials {
  if (config?.accessKey && config.secretKey) return { accessKeyId: config.accessKey, secretAccessKey: config.secretKey };
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    return { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, sessionToken: env.AWS_SESSION_TOKEN || undefined };
  }
  throw new AwsError(0, 'NoCredentialProviders', 'no valid providers in chain. Deprecated.\n\tFor verbose messaging see aws.Config.CredentialsChainVerboseErrors', '');
}

/**
 * IAM is global: its public endpoint is signed for us-east-1; a custom one for the configured region.
 * Without `credentials`, the mount's root credentials, signed with the host's kept signing keys.
 */
export function iamClient(config: RootConfig | null, host: AwsHost, credentials?: AwsCredentials): QueryClient {
  const endpoint: Endpoint = config?.iamEndpoint ? { url: config.iamEndpoint, region: regionOf(config, host.env) } : { url: 'https://iam.amazonaws.com', region: 'us-east-1' };
  return new QueryClient(credentials ?? credentialsOf(config, host.env), 'iam', [endpoint], config?.maxRetries ?? -1, credentials ? undefined : host.signingKeys);
}

/** STS at sts_endpoint (or the region's endpoint), then each fallback endpoint with its region (credentials: as iamClient). */
export function stsClient(config: RootConfig | null, host: AwsHost, credentials?: AwsCredentials): QueryClient {
  const region = config?.stsRegion || regionOf(config, host.env);
  const endpoints: Endpoint[] = [{ url: config?.stsEndpoint || `https://sts.${region}.amazonaws.com`, region }];
  config?.stsFallbackEndpoints.forEach((url, i) => endpoints.push({ url, region: config.stsFallbackRegions[i] }));
  return new QueryClient(credentials ?? credentialsOf(config, host.env), 'sts', endpoints, config?.maxRetries ?? -1, credentials ? undefined : host.signingKeys);
}
