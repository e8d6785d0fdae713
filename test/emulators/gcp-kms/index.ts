// The Google Cloud KMS emulator (server.ts) as a vitest global setup: started on a free loopback
// port in Node (a server inside workerd is unreachable). vitest.config.ts binds its URL as the
// Worker's GOOGLE_CLOUDKMS_URL; the service-account key files tests get from its control API
// (client.ts) name its token endpoint as token_uri. Test files keep to projects of their own.
import type { TestProject } from 'vitest/node';
import { startGcpKmsEmulator } from './server';

declare module 'vitest' {
  export interface ProvidedContext {
    gcpKmsUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startGcpKmsEmulator();
  project.provide('gcpKmsUrl', emulator.base);
  return emulator.close;
}
