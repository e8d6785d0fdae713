// A fetch client for the KMS emulator's control API, usable from Node and from tests inside
// workerd (no Node imports): kmsEmulator(`${inject('awsKmsUrl')}/t/<tenant>`) scripts that
// tenant's account (the same URL is the KMS endpoint a key's `endpoint` names); without
// /t/<tenant>, the default one.
import type { CallRecord, EmulatorState, FaultsBody, KeyStateBody, KeyView, ResetBody, SeedKey } from './types';
import { controlCall } from '../control';

export * from './types';

const call = <T>(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => controlCall<T>('KMS emulator', `${base}/_emulator/${path}`, method, body);

export function kmsEmulator(base: string) {
  return {
    base,
    reset: (body: ResetBody = {}) => call<EmulatorState>(base, 'POST', 'reset', body),
    state: () => call<EmulatorState>(base, 'GET', 'state'),
    calls: () => call<CallRecord[]>(base, 'GET', 'calls'),
    faults: (body: FaultsBody) => call<Required<FaultsBody>>(base, 'POST', 'faults', body),
    pendingFaults: () => call<Required<FaultsBody>>(base, 'GET', 'faults'),
    createKey: (seed: SeedKey) => call<KeyView>(base, 'POST', 'keys', seed),
    setKeyState: (body: KeyStateBody) => call<KeyView>(base, 'POST', 'key-state', body),
  };
}

export type KmsEmulatorControl = ReturnType<typeof kmsEmulator>;
