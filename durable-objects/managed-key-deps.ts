// What managed-key backends reach their HSM bridge and cloud APIs with, from the Worker's env.

import type { BackendDeps } from '../src/managed-keys/types';
import type { Env } from '../src/rpc/env';

export function managedKeyDeps(env: Env): BackendDeps {
  const bridge = env.HSM_BRIDGE;
  return {
    fetch: (input, init) => fetch(input, init),
    hsmBridge: bridge && { fetch: (input, init) => bridge.fetch(input, init) },
    hsmBridgeUrl: env.HSM_BRIDGE_URL,
    hsmBridgeToken: env.HSM_BRIDGE_TOKEN,
    endpoints: { azureAuthority: env.AZURE_AUTHORITY_HOST, azureKeyVault: env.AZURE_KEYVAULT_URL, googleCloudKms: env.GOOGLE_CLOUDKMS_URL },
  };
}
