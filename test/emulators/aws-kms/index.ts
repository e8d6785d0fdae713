// Placeholder global setup: replaced by the aws-kms emulator's real setup.
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    awsKmsUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('awsKmsUrl', 'http://127.0.0.1:9');
  return async () => {};
}
