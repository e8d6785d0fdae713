// Types `env` from cloudflare:test as the Worker's own Env.
import type { Env as CofferEnv } from '../src/rpc/env';

declare global {
  namespace Cloudflare {
    interface Env extends CofferEnv {
      /** The fuzz run's seed and size (test/integration/hostile/fuzz.test.ts), from the environment. */
      FUZZ_SEED: string;
      FUZZ_CASES: string;
      FUZZ_ONLY: string;
      FUZZ_TRACE: string;
    }
  }
}
