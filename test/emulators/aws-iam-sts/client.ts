// A fetch client for the AWS emulator's control API, usable from Node and from tests inside
// workerd (no Node imports): awsEmulator(`http://127.0.0.1:${inject('awsPort')}/t/<tenant>`)
// scripts that tenant's account (the same URL is the IAM and STS endpoint); without /t/<tenant>,
// the default one.
import type { CallRecord, ClockBody, EmulatorState, FaultsBody, ResetBody } from './types';
import { controlCall } from '../control';

export * from './types';

const call = <T>(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => controlCall<T>('AWS emulator', `${base}/_emulator/${path}`, method, body);

export function awsEmulator(base: string) {
  return {
    base,
    reset: (body: ResetBody = {}) => call<EmulatorState>(base, 'POST', 'reset', body),
    state: () => call<EmulatorState>(base, 'GET', 'state'),
    calls: () => call<CallRecord[]>(base, 'GET', 'calls'),
    faults: (body: FaultsBody) => call<Required<FaultsBody>>(base, 'POST', 'faults', body),
    pendingFaults: () => call<Required<FaultsBody>>(base, 'GET', 'faults'),
    clock: (body: ClockBody) => call<{ offsetMs: number; now: string }>(base, 'POST', 'clock', body),
  };
}

export type AwsEmulatorControl = ReturnType<typeof awsEmulator>;
