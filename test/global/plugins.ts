// Builds the plugins the tests run (plugins/totp, plugins/userpass and the misbehaving fixture
// under test/plugins/) exactly as plugins/sdk/build.mjs builds them for an operator, and provides
// each bundle's text and sha256. Workerd tests put them into the plugin directory's R2 bucket.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
// @ts-expect-error -- plain ESM helper without type declarations
import { buildPlugin } from '../../plugins/sdk/build.mjs';

export interface PluginBundle {
  source: string;
  sha256: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    pluginBundles: Record<'totp' | 'userpass' | 'misbehave', PluginBundle>;
  }
}

export const PLUGIN_ENTRIES = {
  totp: 'plugins/totp/src/index.ts',
  userpass: 'plugins/userpass/src/index.ts',
  misbehave: 'test/plugins/misbehave/index.ts',
} as const;

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Builds every plugin into `dir`; name → {file, source, sha256}. */
export async function buildTestPlugins(dir: string): Promise<Record<keyof typeof PLUGIN_ENTRIES, PluginBundle & { file: string }>> {
  const out = {} as Record<keyof typeof PLUGIN_ENTRIES, PluginBundle & { file: string }>;
  for (const [name, entry] of Object.entries(PLUGIN_ENTRIES) as [keyof typeof PLUGIN_ENTRIES, string][]) {
    const file = path.join(dir, `${name}.js`);
    const { sha256 } = (await buildPlugin(path.join(ROOT, entry), file)) as { sha256: string };
    out[name] = { file, sha256, source: readFileSync(file, 'utf8') };
  }
  return out;
}

export default async function setup(project: TestProject): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'coffer-plugins-'));
  try {
    const built = await buildTestPlugins(dir);
    project.provide(
      'pluginBundles',
      Object.fromEntries(Object.entries(built).map(([k, v]) => [k, { source: v.source, sha256: v.sha256 }])) as Record<keyof typeof PLUGIN_ENTRIES, PluginBundle>,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
