// Types `env` from cloudflare:test as the Worker's own Env.
import type { Env as CofferEnv } from '../src/env';

declare global {
  namespace Cloudflare {
    interface Env extends CofferEnv {}
  }
}
