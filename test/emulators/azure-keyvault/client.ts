// A fetch client for the Azure emulator's control API, usable from Node and from tests inside
// workerd (no Node imports): azureEmulator(inject('azureKeyVaultUrl'), '<tenant id>') scripts that
// tenant (its app registrations, vaults, keys, faults) and reads back its calls.
import type { CallRecord, FaultSpec, KeySpec, KeyVersionView, TenantSpec, TenantState } from './types';

export * from './types';

async function call<T>(url: string, method: 'GET' | 'POST' | 'DELETE', body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`Azure emulator ${method} ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

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
