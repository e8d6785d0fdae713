// The TOTP secrets engine (Vault's `totp`), shipped as a plugin: an ordinary framework Backend that
// plugins/sdk turns into the plugin isolate's entrypoint. It generates and imports RFC 6238 keys,
// gives their current codes and validates codes, refusing replays.

import type { Backend } from '../../../src/framework/backend';
import type { TotpContext } from './context';
import { codePath } from './paths/code';
import { keyPath, keysListPath } from './paths/keys';
import { sweepUsedCodes } from './store';

export interface TotpOptions {
  /** The current time, ms since the epoch (default Date.now): tests pin it. */
  now?: () => number;
}

export function totpBackend(options: TotpOptions = {}): Backend {
  const ctx: TotpContext = { now: options.now ?? (() => Date.now()) };
  return {
    type: 'totp',
    paths: [keysListPath(), keyPath(), codePath(ctx)],
    // Validation drops a key's expired used codes as it goes; this catches those of keys no one
    // validates against any more.
    periodic: (storage, now) => sweepUsedCodes(storage, now),
  };
}
