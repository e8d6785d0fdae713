// Placeholder global setup: replaced by the azure-keyvault emulator's real setup.
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    azureKeyVaultUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('azureKeyVaultUrl', 'http://127.0.0.1:9');
  return async () => {};
}
