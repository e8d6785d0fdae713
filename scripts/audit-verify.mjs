// `npm run audit:verify -- <log file> [--head sha256:<hex>]`: checks the hash chains of the audit
// entries in a log (Worker log output: other lines and device prefixes are fine). Prints a
// summary; on a broken link prints the first one and exits 1. `--head` is a chain_head hash from
// GET sys/audit: the log must reach it (entries after it are fine: listing is itself audited).
// Exit codes: 0 intact, 1 broken (or head not reached), 2 usage or I/O error.

import { readFileSync } from 'node:fs';
import { formatReport, verifyLog } from '../src/core/audit/verify-chain.mjs';

const USAGE = 'usage: npm run audit:verify -- <log file> [--head sha256:<hex>]';

function parseArgs(argv) {
  const args = { file: '', head: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--head') args.head = argv[++i];
    else if (a.startsWith('--head=')) args.head = a.slice('--head='.length);
    else if (a === '-h' || a === '--help') return null;
    else if (!args.file) args.file = a;
    else return null;
  }
  if (!args.file || (args.head !== undefined && !/^sha256:[0-9a-f]{64}$/.test(args.head ?? ''))) return null;
  return args;
}

const args = parseArgs(process.argv.slice(2));
if (!args) {
  console.error(USAGE);
  process.exit(2);
}
let text;
try {
  text = readFileSync(args.file, 'utf8');
} catch (e) {
  console.error(`audit-verify: cannot read ${args.file}: ${e.message}`);
  process.exit(2);
}
const report = await verifyLog(text, { head: args.head });
console.log(formatReport(report));
if (report.entries === 0) console.log(`(no audit entries found in ${args.file})`);
process.exit(report.ok ? 0 : 1);
