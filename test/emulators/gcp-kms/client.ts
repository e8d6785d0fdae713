// A fetch client for the Cloud KMS emulator's control API, usable from Node and from tests inside
// workerd (no Node imports): gcpKmsEmulator(inject('gcpKmsUrl')).
import type { CallRecord, FaultSpec, ProjectState, ResetBody, ServiceAccountKeyFile, ServiceAccountSpec } from './types';
import { controlCall } from '../control';

export * from './types';

const call = <T>(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => controlCall<T>('Cloud KMS emulator', `${base}/_emulator/${path}`, method, body);

export function gcpKmsEmulator(base: string) {
  const project = (p: string) => `projects/${encodeURIComponent(p)}`;
  return {
    base,
    /** A new service account (or a new key of an existing one) and its key file. */
    serviceAccount: (spec: ServiceAccountSpec) => call<ServiceAccountKeyFile>(base, 'POST', 'service-accounts', spec),
    revokeTokens: (email: string) => call<{ revoked: number }>(base, 'POST', `service-accounts/${encodeURIComponent(email)}/revoke-tokens`, {}),
    reset: (p: string, body: ResetBody = {}) => call<Record<string, never>>(base, 'POST', `${project(p)}/reset`, body),
    state: (p: string) => call<ProjectState>(base, 'GET', `${project(p)}/state`),
    calls: (p: string) => call<CallRecord[]>(base, 'GET', `${project(p)}/calls`),
    faults: (p: string, faults: FaultSpec[]) => call<{ faults: FaultSpec[] }>(base, 'POST', `${project(p)}/faults`, { faults }),
    pendingFaults: (p: string) => call<{ faults: FaultSpec[] }>(base, 'GET', `${project(p)}/faults`),
    keyRing: (p: string, location: string, keyRingId: string) => call<{ name: string }>(base, 'POST', `${project(p)}/key-rings`, { location, keyRingId }),
    versionState: (p: string, name: string, state: string) => call<Record<string, never>>(base, 'POST', `${project(p)}/version-state`, { name, state }),
  };
}

export type GcpKmsEmulatorControl = ReturnType<typeof gcpKmsEmulator>;
