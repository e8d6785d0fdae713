// A fetch client for the Azure emulator's control API, usable from Node and from tests inside
// workerd (no Node imports): azureEmulator(inject('azureKeyVaultUrl'), '<tenant id>') scripts that
// tenant (its app registrations, vaults, keys, faults) and reads back its calls.
import type { CallRecord, FaultSpec, KeySpec, KeyVersionView, TenantSpec, TenantState } from './types';
import { controlCall } from '../control';

export * from './types';

const call = <T>(url: string, method: 'GET' | 'POST' | 'DELETE', body?: unknown): Promise<T> => controlCall<T>('Azure emulator', url, method, body);

export function azureEmulator(base: string, tenantId: string) {
  const at = `${base}/_emulator/tenants/${encodeURIComponent(tenantId)}`;
  return {
    base,
    tenantId,
    register: (spec: TenantSpec) => call<TenantState>(at, 'POST', spec),
    state: () => call<TenantState>(at, 'GET'),
    remove: () => call<void>(at, 'DELETE'),
    calls: () => call<CallRecord[]>(`${at}/calls`, 'GET'),
    faults: (faults: FaultSpec[]) => call<{ faults: FaultSpec[] }>(`${at}/faults`, 'POST', { faults }),
    pendingFaults: () => call<{ faults: FaultSpec[] }>(`${at}/faults`, 'GET'),
    revokeTokens: () => call<{ revoked: number }>(`${at}/revoke`, 'POST'),
    createKey: (vault: string, name: string, spec: KeySpec) => call<KeyVersionView>(`${at}/vaults/${vault}/keys/${name}`, 'POST', spec),
    setEnabled: (vault: string, name: string, enabled: boolean) => call<{ enabled: boolean }>(`${at}/vaults/${vault}/keys/${name}/enabled`, 'POST', { enabled }),
  };
}

export type AzureEmulatorControl = ReturnType<typeof azureEmulator>;
