// The Okta emulator (test/emulators/okta.ts) as tests see it.
import { inject } from 'vitest';
import type { Org } from '../emulators/okta';

/** The org URL of the emulated Okta org. */
export const oktaOrg = (): string => `http://127.0.0.1:${inject('oktaPort')}`;

export async function setOrg(org: Org): Promise<void> {
  const res = await fetch(`${oktaOrg()}/org`, { method: 'PUT', body: JSON.stringify(org) });
  if (res.status !== 200) throw new Error(`okta emulator: ${res.status}`);
}

/** How many group pages it served since the last setOrg. */
export async function oktaCalls(): Promise<number> {
  return ((await (await fetch(`${oktaOrg()}/stats`)).json()) as { calls: number }).calls;
}
