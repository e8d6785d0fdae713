// The HSM bridge for the workerd suite: started once in Node (./hsm-bridge.ts: SoftHSM2 token,
// private CA, client certificate), and provided to vitest.config.ts, which binds HSM_BRIDGE as a
// Miniflare network service presenting the client key pair and trusting the CA (real mutual TLS
// done by workerd) and HSM_BRIDGE_URL as the bridge's https URL; and to the tests, which need the
// token and the PIN to configure pkcs11 managed keys.
import type { TestProject } from 'vitest/node';
import { startHsmBridge } from './hsm-bridge';

declare module 'vitest' {
  export interface ProvidedContext {
    hsmBridgeUrl: string;
    hsmBridgeCaPem: string;
    hsmBridgeClientCertPem: string;
    hsmBridgeClientKeyPem: string;
    /** The bridge's kms_library stanza of SoftHSM2; "missing" names one whose library does not load. */
    hsmBridgeLibrary: string;
    hsmBridgeTokenLabel: string;
    hsmBridgeSlot: string;
    hsmBridgePin: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const hsm = await startHsmBridge({ tokenLabel: 'coffer-workerd-token' });
  project.provide('hsmBridgeUrl', hsm.url);
  project.provide('hsmBridgeCaPem', hsm.caPem);
  project.provide('hsmBridgeClientCertPem', hsm.clientCertPem);
  project.provide('hsmBridgeClientKeyPem', hsm.clientKeyPem);
  project.provide('hsmBridgeLibrary', hsm.library);
  project.provide('hsmBridgeTokenLabel', hsm.tokenLabel);
  project.provide('hsmBridgeSlot', hsm.slot);
  project.provide('hsmBridgePin', hsm.pin);
  return async () => {
    await hsm.stop();
  };
}
