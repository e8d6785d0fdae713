// The Google emulator (test/emulators/google-directory.ts) as tests see it.
import { inject } from 'vitest';
import type { Directory, Stats } from '../emulators/google-directory';

/** The emulator's base URL: the Admin SDK's stand-in. */
export const googleApi = (): string => `http://127.0.0.1:${inject('googlePort')}`;

/** The token endpoint a service account key names as its token_uri. */
export const googleTokenURI = (): string => `${googleApi()}/token`;

/** Replaces the directory (and forgets issued tokens and counts). */
export async function setDirectory(d: Directory): Promise<void> {
  const res = await fetch(`${googleApi()}/directory`, { method: 'PUT', body: JSON.stringify(d) });
  if (res.status !== 200) throw new Error(`google emulator: ${res.status}`);
}

export async function googleStats(): Promise<Stats> {
  return (await (await fetch(`${googleApi()}/stats`)).json()) as Stats;
}
