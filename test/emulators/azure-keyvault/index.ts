// The Azure emulator (server.ts) as a vitest global setup: started on a free loopback port in Node
// (a server inside workerd is unreachable). vitest.config.ts binds its URL for the Worker as
// AZURE_AUTHORITY_HOST and, with /vaults/{vault_name}, AZURE_KEYVAULT_URL; tests script it through
// client.ts, each file with tenant ids and vault names of its own.
import type { TestProject } from 'vitest/node';
import { startAzureEmulator } from './server';

declare module 'vitest' {
  export interface ProvidedContext {
    azureKeyVaultUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startAzureEmulator();
  project.provide('azureKeyVaultUrl', emulator.base);
  return emulator.close;
}
