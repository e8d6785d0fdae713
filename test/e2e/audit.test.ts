// A file audit device on the real launcher: its entries land in the server's output (the Worker
// log), and `npm run audit:verify` checks the hash chain in a capture of that output, finds the
// first broken link after tampering, and follows the chain across a restart.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInit, ROOT, startLauncher, tempDir, type Server } from './processes';

const PREFIX = 'AUDIT: ';
const dataDir = tempDir('coffer-e2e-audit-');
const work = tempDir('coffer-e2e-audit-logs-');
let server: Server;
let token: string;
/** Output of servers already stopped (the log a collector would have kept). */
let earlierOutput = '';

async function call(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/v1/${p}`, {
    method,
    headers: { 'X-Vault-Token': token, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const entryLines = (output: string) => output.split('\n').filter((l) => l.startsWith(PREFIX));

/** The server output so far, once it holds at least `count` entries (workerd's log is piped). */
async function capture(count: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const output = earlierOutput + server.output();
    if (entryLines(output).length >= count) return output;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`fewer than ${count} audit entries in the output:\n${server.output()}`);
}

interface Verdict {
  code: number;
  /** What the script printed (npm's own chatter goes to stderr). */
  out: string;
  err: string;
}

/** Runs `npm run audit:verify -- <file> [args]`. */
function verify(name: string, content: string, args: string[] = []): Promise<Verdict> {
  const file = path.join(work, name);
  writeFileSync(file, content);
  return new Promise((resolve) => {
    execFile('npm', ['run', 'audit:verify', '--', file, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: stdout, err: stderr });
    });
  });
}

/** Line numbers (1-based, in `output`) of the entry lines. */
const entryLineNumbers = (output: string) => output.split('\n').flatMap((l, i) => (l.startsWith(PREFIX) ? [i + 1] : []));

beforeAll(async () => {
  server = await startLauncher(dataDir);
  token = readInit(dataDir).root_token;
  expect((await call('PUT', 'sys/audit/file', { type: 'file', options: { file_path: 'stdout', prefix: PREFIX } })).status).toBe(204);
  expect((await call('POST', 'secret/data/app', { data: { password: 'e2e-audit-secret', port: 5432 } })).status).toBe(200);
  expect((await call('GET', 'secret/data/app')).body.data.data.password).toBe('e2e-audit-secret');
  expect((await call('POST', 'auth/token/create', { policies: ['default'], ttl: '1h' })).status).toBe(200);
  expect((await call('GET', 'secret/missing')).status).toBe(404);
  expect((await call('GET', 'sys/mounts')).status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

describe('npm run audit:verify on the server output', () => {
  let output: string;
  let lines: string[];
  let numbers: number[];

  beforeAll(async () => {
    output = await capture(10);
    lines = output.split('\n');
    numbers = entryLineNumbers(output);
  });

  it('finds the chain intact among the other lines, without secrets', async () => {
    expect(output).toContain('Coffer is listening on');
    expect(output).not.toContain('e2e-audit-secret');
    expect(output).not.toContain(token);
    const v = await verify('intact.log', output);
    expect(v.code).toBe(0);
    expect(v.out).toMatch(/10 audit entries in \d+ lines, 1 device chain\(s\)/);
    expect(v.out).toMatch(/seq 1\.\.10 \(10 entries/);
    expect(v.out.trim().split('\n').pop()).toBe('OK');
  });

  it('checks the log against the head sys/audit shows', async () => {
    const head = (await call('GET', 'sys/audit')).body.data['file/'].chain_head;
    const later = await capture(12);
    const v = await verify('head.log', later, ['--head', head.hash]);
    expect(v.code).toBe(0);
    expect(v.out).toContain(`is seq ${head.seq} of device ${head.device}`);
    // The same head against the earlier capture: the log stops before it.
    const cut = await verify('head-cut.log', output, ['--head', head.hash]);
    expect(cut.code).toBe(1);
    expect(cut.out).toContain('not found: the log stops before the head');
  });

  it('names an edited middle entry', async () => {
    const target = numbers[4];
    const edited = [...lines];
    edited[target - 1] = edited[target - 1].replace('"operation":"read"', '"operation":"list"').replace('"operation":"update"', '"operation":"delete"');
    expect(edited[target - 1]).not.toBe(lines[target - 1]);
    const v = await verify('edited.log', edited.join('\n'));
    expect(v.code).toBe(1);
    expect(v.out).toContain(`BROKEN at line ${numbers[5]}:`);
    expect(v.out).toContain(`seq 6: the previous entry (seq 5, line ${target}) does not hash to the value this entry links to: it was modified`);
    expect(v.out).toMatch(/expected: prev sha256:[0-9a-f]{64}/);
    expect(v.out.trim().split('\n').pop()).toBe('FAILED');
  });

  it('names a deleted middle entry', async () => {
    const target = numbers[3];
    const deleted = lines.filter((_, i) => i !== target - 1);
    const v = await verify('deleted.log', deleted.join('\n'));
    expect(v.code).toBe(1);
    expect(v.out).toContain(`BROKEN at line ${numbers[4] - 1}:`);
    expect(v.out).toContain('seq 5: seq 4 is missing');
  });

  it('names swapped entries', async () => {
    const [a, b] = [numbers[6], numbers[7]];
    const swapped = [...lines];
    [swapped[a - 1], swapped[b - 1]] = [swapped[b - 1], swapped[a - 1]];
    const v = await verify('swapped.log', swapped.join('\n'));
    expect(v.code).toBe(1);
    expect(v.out).toContain(`BROKEN at line ${a}:`);
    expect(v.out).toContain(`seq 8: seq 7 appears later, at line ${b}: entries are out of order`);
  });

  it('accepts a log that starts later (rotated), and says so', async () => {
    const rotated = lines.slice(numbers[2] - 1).join('\n');
    const v = await verify('rotated.log', rotated);
    expect(v.code).toBe(0);
    expect(v.out).toContain('starts at seq 3: earlier entries are not in this log');
  });

  it('refuses to run without a file', async () => {
    const v = await new Promise<Verdict>((resolve) =>
      execFile('npm', ['run', 'audit:verify'], { cwd: ROOT }, (error, stdout, stderr) => resolve({ code: typeof error?.code === 'number' ? error.code : 0, out: stdout, err: stderr })),
    );
    expect(v.code).toBe(2);
    expect(v.err).toContain('usage: npm run audit:verify');
  });
});

describe('across a restart', () => {
  it('continues the chain where it stopped', async () => {
    const before = entryLines(await capture(1)).length;
    earlierOutput = server.output();
    expect(await server.stop('SIGTERM')).toBe(0);
    server = await startLauncher(dataDir);
    expect((await call('GET', 'secret/data/app')).status).toBe(200);
    const all = await capture(before + 2);
    const v = await verify('restart.log', all);
    expect(v.code).toBe(0);
    expect(v.out).toContain(`seq 1..${before + 2} (${before + 2} entries`);
  });
});
