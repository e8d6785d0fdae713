// Every mount type Coffer knows: which table it belongs to, where it runs, and how to build it.

import { identityBackend } from './engines/identity';
import type { MountDirectory } from './core/identity/types';
import type { MountTypeInfo } from './core/mounts/service';
import type { Backend } from './framework/backend';
import type { ManagedKeyAccess } from './managed-keys/access';
import { cubbyholeBackend } from './engines/cubbyhole';
import { kvBackend, validateKvOptions } from './engines/kv';
import { testLeasesBackend } from './engines/test-leases';
import { transitBackend } from './engines/transit';
import { pkiBackend } from './engines/pki';
import { awsBackend } from './engines/aws';
import { testLoginBackend } from './auth/test-login';
import { jwtBackend } from './auth/jwt';

export type Host = 'system' | 'token' | 'mount';

/** What the hosting object offers a backend beyond storage (the identity engine needs the auth mounts). */
export interface MountHost {
  authMounts: MountDirectory;
  /** The Google Admin SDK's base URL when not the public one (GOOGLE_ADMIN_API_URL: an emulator). */
  googleAdminApi?: string;
  /** Microsoft Graph's base URL when not the public one (MICROSOFT_GRAPH_URL: an emulator). */
  microsoftGraph?: string;
  /** Estimated CPU one transit batch may take (TRANSIT_BATCH_CPU_BUDGET_MS), when set. */
  transitBatchBudgetMs?: number;
  /** The Worker's AWS_* variables (region and credential fallbacks of the aws engine). */
  awsEnv?: Record<string, string | undefined>;
  /** The managed keys (sys/managed-keys) engines resolve by name or id. Absent: none can be used. */
  managedKeys?: ManagedKeyAccess;
}

export interface BackendType extends MountTypeInfo {
  host: Host;
  /** For host 'mount': builds the backend for a mount's options. */
  create?(options: Record<string, string> | null, host: MountHost): Backend;
  /** Mountable only when the Worker runs with COFFER_TEST_ENGINES=1. */
  testOnly?: boolean;
}

const TYPES: BackendType[] = [
  { type: 'system', table: 'mounts', host: 'system', mountable: false, ownObject: false },
  { type: 'cubbyhole', table: 'mounts', host: 'mount', mountable: false, ownObject: true, create: cubbyholeBackend },
  { type: 'identity', table: 'mounts', host: 'mount', mountable: false, ownObject: true, create: (_options, host) => identityBackend(host.authMounts) },
  {
    type: 'kv',
    table: 'mounts',
    host: 'mount',
    mountable: true,
    ownObject: true,
    create: kvBackend,
    validateOptions: validateKvOptions,
  },
  { type: 'transit', table: 'mounts', host: 'mount', mountable: true, ownObject: true, create: (o, host) => transitBackend(o, { batchBudgetMs: host.transitBatchBudgetMs, managedKeys: host.managedKeys }) },
  { type: 'pki', table: 'mounts', host: 'mount', mountable: true, ownObject: true, create: (_options, host) => pkiBackend({ managedKeys: host.managedKeys }) },
  { type: 'aws', table: 'mounts', host: 'mount', mountable: true, ownObject: true, create: (_options, host) => awsBackend({ env: host.awsEnv ?? {} }) },
  { type: 'token', table: 'auth', host: 'token', mountable: false, ownObject: false },
  {
    type: 'coffer-test-leases',
    table: 'mounts',
    host: 'mount',
    mountable: true,
    ownObject: true,
    create: testLeasesBackend,
    testOnly: true,
  },
  // One method under both of Vault's names.
  { type: 'jwt', table: 'auth', host: 'mount', mountable: true, ownObject: true, create: jwtBackend },
  { type: 'oidc', table: 'auth', host: 'mount', mountable: true, ownObject: true, create: jwtBackend },
  {
    type: 'coffer-test-login',
    table: 'auth',
    host: 'mount',
    mountable: true,
    ownObject: true,
    create: testLoginBackend,
    testOnly: true,
  },
];

const BY_TYPE = new Map(TYPES.map((t) => [t.type, t]));

export const backendType = (type: string): BackendType | undefined => BY_TYPE.get(type);

/** The types this deployment offers (test-only ones only when enabled). */
export function availableType(type: string, testEngines: boolean): BackendType | undefined {
  const info = BY_TYPE.get(type);
  return info?.testOnly && !testEngines ? undefined : info;
}

/**
 * Coffer's own engines and auth methods as the plugin catalog lists them (Vault's builtin plugins):
 * the mountable types, test-only ones left out.
 */
export function builtinPlugins(): Array<{ type: 'auth' | 'secret'; name: string }> {
  return TYPES.filter((t) => t.mountable && !t.testOnly).map((t) => ({ type: t.table === 'auth' ? 'auth' : 'secret', name: t.type }));
}

/** Names a catalog plugin may not take: every type here, and the names sys/mounts treats specially. */
export const isReservedMountType = (name: string): boolean => BY_TYPE.has(name) || name === 'plugin' || /^kv-v[12]$/.test(name);
