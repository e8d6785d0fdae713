// The AWS IAM/STS emulator of the aws engine's tests (test/emulators/aws-iam-sts/server.ts), for
// the bench. It is TypeScript, so esbuild (installed with wrangler) bundles it as CommonJS into a
// temporary folder, removed as soon as the child has loaded it. It runs as a child process, not in
// the bench's own: every call it answers verifies a SigV4 signature, and in the load generator's
// event loop that work would both slow autocannon and queue behind it.
//
// The child exits when its stdin closes, so it never outlives the bench, however that ends.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../scripts/miniflare-server.mjs';

const SERVER = path.join(ROOT, 'test/emulators/aws-iam-sts/server.ts');

/** The child's program: the emulator, on a free loopback port, announced on stdout. */
const entry = (maxLoggedCalls) => `
const { startAwsEmulator } = require(${JSON.stringify(SERVER)});
startAwsEmulator({ maxLoggedCalls: ${Number(maxLoggedCalls)} }).then((emu) => {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('close', () => process.exit(0));
  process.stdin.resume();
  console.log('AWS emulator is listening on ' + emu.base);
});
`;

/**
 * Starts the emulator in a child process. Resolves to its base URL (the IAM and STS endpoint of
 * the default tenant), its pid (for CPU accounting), and stop().
 */
export async function startAwsEmulatorProcess({ maxLoggedCalls = 1000 } = {}) {
  const { build, stop: stopEsbuild } = await import('esbuild');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-aws-'));
  try {
    const file = path.join(dir, 'aws-emulator.cjs');
    await build({
      stdin: { contents: entry(maxLoggedCalls), resolveDir: ROOT, sourcefile: 'aws-emulator-entry.js', loader: 'js' },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: `node${process.versions.node.split('.')[0]}`,
      outfile: file,
      logLevel: 'error',
    });
    await stopEsbuild(); // its service process is not needed again
    const proc = spawn(process.execPath, [file], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    proc.stdin.on('error', () => {}); // EPIPE once it has exited: nothing to tell it then
    const url = await new Promise((resolve, reject) => {
      let out = '';
      const onData = (chunk) => {
        out += chunk;
        const m = /AWS emulator is listening on (\S+)/.exec(out);
        if (m) resolve(m[1]);
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`the AWS emulator exited with ${code}:\n${out}`)));
    });
    // Whatever it prints from now on would only fill the pipe; keep reading it.
    proc.stdout.resume();
    proc.stderr.resume();
    const stop = () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.stdin.end();
        proc.kill('SIGTERM');
      });
    return { url, pid: proc.pid, stop };
  } finally {
    // The child has read the bundle by the time it listens (or it failed): nothing stays in /tmp.
    rmSync(dir, { recursive: true, force: true });
  }
}
