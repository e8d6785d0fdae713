// config/root, config/rotate-root and config/lease (reference §3.1).

import type { PathDef } from '../../../framework/backend';
import { parseGoDuration, formatGoDuration, DurationError } from '../../../framework/duration';
import { badRequest, CofferError, notFound } from '../../../framework/errors';
import { putJSON } from '../../../framework/storage';
import { compileTemplate, TemplateError } from '../../../framework/template';
import { DEFAULT_USERNAME_TEMPLATE, emptyRootConfig, LEASE_KEY, loadLeaseConfig, loadRootConfig, ROOT_KEY, type AwsHost, type RootConfig } from '../config';
import { rotateRoot } from '../rotate-root';

/** config/root in its read shape: never the secret key. */
function rootView(c: RootConfig): Record<string, unknown> {
  return {
    access_key: c.accessKey,
    region: c.region,
    iam_endpoint: c.iamEndpoint,
    sts_endpoint: c.stsEndpoint,
    sts_region: c.stsRegion,
    sts_fallback_endpoints: c.stsFallbackEndpoints,
    sts_fallback_regions: c.stsFallbackRegions,
    max_retries: c.maxRetries,
    username_template: c.usernameTemplate,
    // Vault Enterprise's workload identity and automated rotation: not offered (refused on write).
    role_arn: '',
    identity_token_audience: '',
    identity_token_ttl: 0,
    rotation_period: 0,
    rotation_schedule: '',
    rotation_window: 0,
    disable_automated_rotation: false,
  };
}

/** A config/lease value: Go's time.ParseDuration, as Vault parses it. */
function leaseDuration(name: string, raw: string): number {
  try {
    return Math.round(parseGoDuration(raw) / 1e9);
  } catch (e) {
    if (e instanceof DurationError) throw badRequest(`Invalid ${name}: ${e.message}`);
    throw e;
  }
}

export function configPaths(host: AwsHost): PathDef[] {
  return [
    {
      pattern: 'config/root',
      summary: 'Configure the root credentials used to make IAM and STS calls.',
      fields: {
        access_key: { type: 'string', description: 'Access key with permission to create new keys.' },
        secret_key: { type: 'string', description: 'Secret key with permission to create new keys (never returned).' },
        region: { type: 'string', description: 'Region for API calls.' },
        iam_endpoint: { type: 'string', description: 'Endpoint to use for IAM calls.' },
        sts_endpoint: { type: 'string', description: 'Endpoint to use for STS calls.' },
        sts_region: { type: 'string', description: 'Region for STS calls (defaults to region).' },
        sts_fallback_endpoints: { type: 'comma-string-list', description: 'STS endpoints tried in order when the first fails.' },
        sts_fallback_regions: { type: 'comma-string-list', description: 'The regions of the fallback endpoints, in the same order.' },
        max_retries: { type: 'int', default: -1, description: 'Retries for recoverable errors (-1: the SDK default).' },
        username_template: { type: 'string', description: 'Template for dynamic usernames.' },
        role_arn: { type: 'string', description: 'Role to assume with a plugin identity token (not offered).' },
        identity_token_audience: { type: 'string', description: 'Audience of plugin identity tokens (not offered).' },
        identity_token_ttl: { type: 'duration', description: 'TTL of plugin identity tokens (not offered).' },
        rotation_period: { type: 'duration', description: 'Automated root rotation (not offered).' },
        rotation_schedule: { type: 'string', description: 'Automated root rotation (not offered).' },
        rotation_window: { type: 'duration', description: 'Automated root rotation (not offered).' },
        disable_automated_rotation: { type: 'bool', description: 'Automated root rotation (not offered).' },
      },
      operations: {
        read: async (req) => {
          const config = await loadRootConfig(req.storage);
          if (!config) throw notFound();
          return { data: rootView(config) };
        },
        update: async (req, f) => {
          const c: RootConfig = (await loadRootConfig(req.storage)) ?? emptyRootConfig();
          const given = (name: string) => f.has(name);
          if (given('access_key')) c.accessKey = f.get('access_key');
          if (given('secret_key')) c.secretKey = f.get('secret_key');
          if (given('region')) c.region = f.get('region');
          if (given('iam_endpoint')) c.iamEndpoint = f.get('iam_endpoint');
          if (given('sts_endpoint')) c.stsEndpoint = f.get('sts_endpoint');
          if (given('sts_region')) c.stsRegion = f.get('sts_region');
          if (given('sts_fallback_endpoints')) c.stsFallbackEndpoints = f.get('sts_fallback_endpoints');
          if (given('sts_fallback_regions')) c.stsFallbackRegions = f.get('sts_fallback_regions');
          if (given('max_retries')) c.maxRetries = f.get('max_retries');
          // As in Vault, every write sets the template: left out, it is the default again.
          c.usernameTemplate = f.get<string>('username_template') || DEFAULT_USERNAME_TEMPLATE;

          const problems: string[] = [];
          if (c.stsFallbackEndpoints.length !== c.stsFallbackRegions.length) problems.push('fallback endpoints and fallback regions must be the same length');
          if (c.maxRetries < -1) problems.push('max_retries must be -1 (the SDK default) or more');
          for (const url of [c.iamEndpoint, c.stsEndpoint, ...c.stsFallbackEndpoints]) {
            if (url && !/^https?:\/\/[^/\s]+/i.test(url)) problems.push(`invalid endpoint ${JSON.stringify(url)}: expected an http(s) URL`);
          }
          const audience = f.get<string>('identity_token_audience');
          if (audience && c.accessKey) problems.push("only one of 'access_key' or 'identity_token_audience' can be set");
          if (audience && !f.get<string>('role_arn')) problems.push("missing required 'role_arn' when 'identity_token_audience' is set");
          if (problems.length > 0) throw new CofferError(400, problems);
          if (audience || f.get<string>('role_arn')) {
            throw badRequest('plugin workload identity federation (role_arn, identity_token_audience) is not available in Coffer: configure access_key and secret_key');
          }
          if (f.get<number>('rotation_period') || f.get<string>('rotation_schedule') || f.get<number>('rotation_window')) {
            throw badRequest('automated root rotation (rotation_period, rotation_schedule, rotation_window) is not available in Coffer: call config/rotate-root');
          }
          try {
            compileTemplate(c.usernameTemplate);
          } catch (e) {
            if (e instanceof TemplateError) throw badRequest(`unable to initialize username template: ${e.message}`);
            throw e;
          }
          await putJSON(req.storage, ROOT_KEY, c);
          return null;
        },
      },
    },
    {
      pattern: 'config/rotate-root',
      summary: 'Replace the root access key with a new one and delete the old one.',
      operations: {
        update: async (req) => ({ data: { access_key: await rotateRoot(req, host) } }),
      },
    },
    {
      pattern: 'config/lease',
      summary: 'The TTL and maximum TTL of the leases of IAM user credentials.',
      fields: {
        lease: { type: 'string', description: 'Default lease of IAM user credentials (a duration such as "30m").' },
        lease_max: { type: 'string', description: 'Maximum lease of IAM user credentials.' },
      },
      operations: {
        read: async (req) => {
          const lease = await loadLeaseConfig(req.storage);
          if (!lease) throw notFound();
          return { data: { lease: formatGoDuration(lease.lease), lease_max: formatGoDuration(lease.leaseMax) } };
        },
        update: async (req, f) => {
          const leaseRaw = f.get<string>('lease');
          const maxRaw = f.get<string>('lease_max');
          if (!leaseRaw) throw badRequest("'lease' is a required parameter");
          if (!maxRaw) throw badRequest("'lease_max' is a required parameter");
          const lease = leaseDuration('lease', leaseRaw);
          const leaseMax = leaseDuration('lease_max', maxRaw);
          if (lease < 0 || leaseMax < 0) throw badRequest('lease and lease_max cannot be negative');
          await putJSON(req.storage, LEASE_KEY, { lease, leaseMax });
          return null;
        },
      },
    },
  ];
}
