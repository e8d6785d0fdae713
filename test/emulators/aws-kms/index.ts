// The AWS KMS emulator (server.ts) as a vitest global setup: started on a free loopback port in
// Node (a server inside workerd is unreachable), which tests read with inject('awsKmsUrl') and set
// as a key's `endpoint`. Test files that run side by side each take a tenant:
// `${inject('awsKmsUrl')}/t/<name>`, scripted through client.ts.
import type { TestProject } from 'vitest/node';
import { startKmsEmulator } from './server';

declare module 'vitest' {
  export interface ProvidedContext {
    awsKmsUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startKmsEmulator();
  project.provide('awsKmsUrl', emulator.base);
  return emulator.close;
}
