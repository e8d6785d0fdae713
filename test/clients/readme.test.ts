// The README's first steps run as written against the launcher: the shell lines that set
// VAULT_TOKEN and call curl, the node-vault ES module, and the hvac script.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { ROOT, tempDir } from '../e2e/processes';

const coffer = inject('coffer');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The first fenced block of `lang` after `marker` in the README. */
function block(marker: string, lang: string): string {
  const at = readme.indexOf(marker);
  expect(at, `README has "${marker}"`).toBeGreaterThanOrEqual(0);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme.slice(at));
  if (!m) throw new Error(`no ${lang} block after "${marker}"`);
  return m[1];
}

const env = { ...process.env, VAULT_ADDR: coffer.url, VAULT_TOKEN: coffer.rootToken };

describe('README', () => {
  it('the quick start\'s export line reads the root token from .coffer/data/init.json', () => {
    const line = block('prints how to use them', 'sh')
      .split('\n')
      .find((l) => l.startsWith('export VAULT_TOKEN='))!;
    // A checkout whose .coffer/data is the suite's data directory.
    const checkout = tempDir('coffer-readme-');
    mkdirSync(path.join(checkout, '.coffer'));
    symlinkSync(coffer.dataDir, path.join(checkout, '.coffer/data'));
    const out = execFileSync('bash', ['-c', `${line}\nprintf %s "$VAULT_TOKEN"`], { cwd: checkout, env: { ...process.env }, encoding: 'utf8' });
    expect(out).toBe(coffer.rootToken);
  });

  it('the curl first steps succeed', () => {
    const script = block('With `curl`:', 'sh');
    const out = execFileSync('bash', ['-ec', script.replace(/^curl -s /gm, 'curl -sf ')], { cwd: ROOT, env, encoding: 'utf8' });
    expect(out).toContain('"initialized":true');
    expect(out).toContain('"password":"s3cret"');
    expect(out).toContain('"keys":["db"]');
  });

  it('the node-vault snippet runs as an ES module in this repository', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', block('With [node-vault]', 'js')], { cwd: ROOT, env, encoding: 'utf8' });
    expect(out).toContain("password: 's3cret'");
    expect(out).toContain("[ 'db' ]");
  });

  it('the hvac snippet runs with Debian\'s python3-hvac', () => {
    const out = execFileSync('/usr/bin/python3', ['-c', block('With [hvac]', 'python')], { cwd: ROOT, env, encoding: 'utf8' });
    expect(out).toContain("'password': 's3cret'");
    expect(out).toContain("['db']");
  });
});
