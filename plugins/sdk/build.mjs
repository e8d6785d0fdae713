#!/usr/bin/env node
// Bundles a plugin into the one ES module the plugin directory holds, and prints its sha256 for
// registration:  node plugins/sdk/build.mjs plugins/totp/src/index.ts [out.js]
// (out defaults to dist/plugins/<folder>.js). Everything is bundled but 'cloudflare:workers':
// the isolate gets no other modules, and no Node built-ins.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Builds `entry` into `outFile`; returns its sha256 (hex) and size. */
export async function buildPlugin(entry, outFile) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    // 'browser' honours packages' "browser" field (bcryptjs maps Node's crypto away there).
    platform: 'browser',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser', 'import'],
    external: ['cloudflare:workers'],
    write: false,
    logLevel: 'error',
    legalComments: 'none',
  });
  const bytes = result.outputFiles[0].contents;
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, bytes);
  return { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [entry, out] = process.argv.slice(2);
  if (!entry) {
    console.error('usage: node plugins/sdk/build.mjs <entry.ts> [out.js]');
    process.exit(2);
  }
  const name = path.basename(path.dirname(path.dirname(path.resolve(entry))));
  const outFile = path.resolve(out ?? path.join(ROOT, 'dist/plugins', `${name}.js`));
  const { sha256, size } = await buildPlugin(entry, outFile);
  console.log(`${outFile} (${size} bytes)\nsha256 ${sha256}`);
  console.log(`register: vault plugin register -sha256=${sha256} -command=${path.basename(outFile)} secret|auth <name>`);
}
