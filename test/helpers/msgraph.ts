// The Microsoft Graph emulator (test/emulators/msgraph.ts) as tests see it.
import { inject } from 'vitest';
import type { Tenant } from '../emulators/msgraph';

/** The emulator's base URL: Microsoft Graph's stand-in. */
export const graphBase = (): string => `http://127.0.0.1:${inject('msgraphPort')}`;
const base = graphBase;

/** The getMemberObjects URL an Azure ID token's distributed claims point at. */
export const memberObjectsURL = (): string => `${base()}/v1.0/me/getMemberObjects`;

/** Sets the directory behind the access tokens of stub provider `name`. */
export async function setTenant(name: string, tenant: Tenant): Promise<void> {
  const res = await fetch(`${base()}/tenants/${name}`, { method: 'PUT', body: JSON.stringify(tenant) });
  if (res.status !== 200) throw new Error(`msgraph tenant: ${res.status}`);
}

/** How many group lookups tenant `name` answered. */
export async function graphCalls(name: string): Promise<number> {
  return ((await (await fetch(`${base()}/tenants/${name}/calls`)).json()) as { calls: number }).calls;
}
