// The entity behind a login, remembered by the auth mount's object for repeated logins that
// would change nothing (same alias, alias metadata and groups): those skip the identity mount's
// object. An identity or policy change makes the SystemObject tell every object to clear it
// (policiesChanged); entries also expire after a minute, bounding what a missed message leaves.

import type { IdentityLoginInput, IdentityLoginResult } from './types';

const MAX_AGE_MS = 60_000;
const LIMIT = 1_000;

export class LoginIdentityCache {
  private readonly entries = new Map<string, { result: IdentityLoginResult; at: number }>();
  /** Bumped by clear(): a login that started before a clear may carry stale data and is not kept. */
  private generation = 0;

  constructor(private readonly login: (input: IdentityLoginInput) => Promise<IdentityLoginResult>) {}

  async resolve(input: IdentityLoginInput, now = Date.now()): Promise<IdentityLoginResult> {
    const key = JSON.stringify([input.mountAccessor, input.aliasName, input.aliasMetadata ?? null, input.groupAliasNames ?? null]);
    const hit = this.entries.get(key);
    if (hit && now - hit.at < MAX_AGE_MS) return hit.result;
    const generation = this.generation;
    const result = await this.login(input);
    if (generation === this.generation) {
      this.entries.delete(key);
      if (this.entries.size >= LIMIT) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { result, at: now });
    }
    return result;
  }

  clear(): void {
    this.entries.clear();
    this.generation++;
  }
}
