// How an object reaches the identity mount's object: for entity views (identity-aware ACLs) and
// for entity resolution at login. The mount's uuid comes from the SystemObject once (it never
// changes) and is kept by this client; the identity object itself answers without an RPC.

import type { IdentityLoginInput, IdentityLoginResult, IdentityView } from '../src/core/identity/types';
import type { IdentityEndpoint } from '../src/rpc/contracts';
import type { Env } from '../src/rpc/env';
import { CofferError, sealedError } from '../src/framework/errors';
import { mountStub, systemStub } from '../src/rpc/stubs';

export interface IdentityClientOptions {
  /** The identity mount's uuid (default: ask the SystemObject); null while sealed. */
  locate?: () => Promise<string | null>;
  /** This object, when it hosts the identity mount itself. */
  self?: () => Promise<IdentityEndpoint | null>;
}

export class IdentityClient {
  #uuid: string | null = null;
  readonly #env: Env;
  readonly #options: IdentityClientOptions;

  constructor(env: Env, options: IdentityClientOptions = {}) {
    this.#env = env;
    this.#options = options;
  }

  async #endpoint(): Promise<IdentityEndpoint> {
    const self = await this.#options.self?.();
    if (self) return self;
    if (!this.#uuid) {
      this.#uuid = await (this.#options.locate ? this.#options.locate() : systemStub(this.#env).identityMountUuid());
      if (!this.#uuid) throw sealedError();
    }
    return mountStub(this.#env, this.#uuid);
  }

  /** Entity views by id (null: no such entity); null while sealed. For an IdentityCache. */
  readonly views = async (ids: string[]): Promise<Record<string, IdentityView | null> | null> => (await this.#endpoint()).identityViews(ids);

  /** Finds or creates the entity behind a login (see src/engines/identity/login.ts). */
  async login(input: IdentityLoginInput): Promise<IdentityLoginResult> {
    const reply = await (await this.#endpoint()).identityLogin(input);
    if (!reply.ok) throw new CofferError(reply.status, reply.errors);
    return reply.result;
  }
}
