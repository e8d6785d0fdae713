// The AWS IAM + STS emulator (server.ts) as a vitest global setup: started on a free loopback
// port in Node (a server inside workerd is unreachable), which tests read with inject('awsPort')
// and script through its control API (/_emulator/…, see server.ts and client.ts). Test files
// that run side by side each take a tenant: http://127.0.0.1:<awsPort>/t/<name>.
import type { TestProject } from 'vitest/node';
import { startAwsEmulator } from './server';

declare module 'vitest' {
  export interface ProvidedContext {
    awsPort: number;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startAwsEmulator();
  project.provide('awsPort', emulator.port);
  return emulator.close;
}
