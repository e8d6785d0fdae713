// Checks the hash chains of audit entries in a log (plain JavaScript, so `npm run audit:verify`
// runs it in Node without a build; the unit tests run it in workerd). A log may interleave other
// lines and several devices, and each entry may follow a device `prefix`. Types: verify-chain.d.mts.

export const GENESIS = `sha256:${'0'.repeat(64)}`;

/**
 * How far back a run of entries sent again may start: a device writes entries ahead in groups of
 * at most this many, and after a crash it sends the cut-off group again, whole and in order
 * (src/core/audit/device.ts). An exact copy of an entry this recent is such a repeat, not a fork.
 */
export const REDELIVERY_WINDOW = 256;

const HEX = '0123456789abcdef';

async function sha256Ref(text) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  let hex = '';
  for (const b of digest) hex += HEX[b >> 4] + HEX[b & 15];
  return `sha256:${hex}`;
}

const isChain = (c) =>
  c !== null && typeof c === 'object' && typeof c.device === 'string' && Number.isInteger(c.seq) && c.seq > 0 && typeof c.prev === 'string';

/**
 * The audit entry on a line: the JSON text from a `{` to the last `}` (whatever prefix precedes
 * it), when it parses to an object with a `chain`. `suspect` marks lines that name a chain but do
 * not parse: an entry damaged in the log.
 */
export function findEntry(line) {
  const end = line.lastIndexOf('}');
  if (end < 0) return null;
  let suspect = false;
  for (let start = line.indexOf('{'); start >= 0 && start < end; start = line.indexOf('{', start + 1)) {
    const text = line.slice(start, end + 1);
    if (!text.includes('"chain"')) break;
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      suspect = true;
      continue;
    }
    if (value !== null && typeof value === 'object' && isChain(value.chain) && typeof value.type === 'string') return { text, entry: value };
  }
  return suspect && /"chain":\{"device":/.test(line) ? { text: null, entry: null } : null;
}

const short = (hash) => (hash.length > 23 ? `${hash.slice(0, 23)}…` : hash);

/**
 * Verifies every device chain in `logText`. Stops at the first broken link and describes it.
 * `head` (optional): a chain head from sys/audit; the log must reach it.
 */
export async function verifyLog(logText, { head } = {}) {
  const lines = logText.replace(/\n$/, '').split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const e = findEntry(lines[i]);
    if (e) found.push({ line: i + 1, ...e });
  }

  // Where each device's sequence numbers appear, to tell reordering from a gap.
  const seqLines = new Map();
  for (const f of found) {
    if (!f.entry) continue;
    const { device, seq } = f.entry.chain;
    if (!seqLines.has(device)) seqLines.set(device, new Map());
    const m = seqLines.get(device);
    if (!m.has(seq)) m.set(seq, f.line);
  }

  const devices = new Map();
  const hashes = new Map();
  let broken = null;

  for (const f of found) {
    if (!f.entry) {
      broken = { line: f.line, device: '', seq: 0, kind: 'corrupt', message: 'an audit entry that is not valid JSON (damaged or edited)', expected: 'a JSON audit entry', found: 'unparseable text' };
      break;
    }
    const { device, seq, prev } = f.entry.chain;
    const hash = await sha256Ref(f.text);
    if (!hashes.has(hash)) hashes.set(hash, { device, seq, line: f.line });
    const d = devices.get(device);
    if (!d) {
      if (seq === 1 && prev !== GENESIS) {
        broken = { line: f.line, device, seq, kind: 'genesis', message: 'the first entry of the chain does not start from the genesis value', expected: GENESIS, found: prev };
        break;
      }
      devices.set(device, { device, firstSeq: seq, firstLine: f.line, lastSeq: seq, lastLine: f.line, lastHash: hash, count: 1, redelivered: 0, cursor: seq, recent: new Map([[seq, hash]]) });
      continue;
    }
    // An entry seen before, byte for byte: part of a group a device sends again after a crash
    // (it cannot know how much of it arrived). The repeat starts anywhere in the recent window
    // and goes on in order; it is counted once. The same number with other content is a fork.
    if (seq <= d.lastSeq) {
      const known = d.recent.get(seq);
      if (known === hash && seq <= d.cursor + 1) {
        d.cursor = seq;
        d.redelivered++;
        continue;
      }
      let message;
      if (known === hash) message = `seq ${seq} repeats entries sent before, but seq ${d.cursor + 1} was skipped: entries are out of order or missing`;
      else if (known !== undefined) message = `seq ${seq} was already delivered (line ${seqLines.get(device).get(seq)}) with other content: a fork, or an edited copy`;
      else message = `seq ${seq} comes after seq ${d.lastSeq} (line ${d.lastLine}): entries are out of order or duplicated`;
      broken = { line: f.line, device, seq, kind: 'reorder', message, expected: `seq ${d.cursor + 1}`, found: `seq ${seq}` };
      break;
    }
    if (d.cursor < d.lastSeq) {
      const skipped = d.cursor + 1 === d.lastSeq ? `seq ${d.lastSeq} was` : `seqs ${d.cursor + 1}..${d.lastSeq} were`;
      const message = `seq ${seq} follows entries sent again that stopped at seq ${d.cursor}: ${skipped} not repeated`;
      broken = { line: f.line, device, seq, kind: 'reorder', message, expected: `seq ${d.cursor + 1}`, found: `seq ${seq}` };
      break;
    }
    const want = d.lastSeq + 1;
    if (seq !== want) {
      const laterLine = seqLines.get(device).get(want);
      if (laterLine !== undefined && laterLine > f.line) {
        broken = { line: f.line, device, seq, kind: 'reorder', message: `seq ${want} appears later, at line ${laterLine}: entries are out of order`, expected: `seq ${want}`, found: `seq ${seq}` };
      } else {
        const missing = seq - want === 1 ? `seq ${want} is` : `seqs ${want}..${seq - 1} are`;
        broken = { line: f.line, device, seq, kind: 'gap', message: `${missing} missing after line ${d.lastLine}: entries were deleted`, expected: `seq ${want}`, found: `seq ${seq}` };
      }
      break;
    }
    if (prev !== d.lastHash) {
      broken = {
        line: f.line,
        device,
        seq,
        kind: 'mismatch',
        message: `the previous entry (seq ${d.lastSeq}, line ${d.lastLine}) does not hash to the value this entry links to: it was modified`,
        expected: `prev ${d.lastHash} (hash of line ${d.lastLine})`,
        found: `prev ${prev}`,
      };
      break;
    }
    Object.assign(d, { lastSeq: seq, lastLine: f.line, lastHash: hash, count: d.count + 1, cursor: seq });
    d.recent.set(seq, hash);
    d.recent.delete(seq - REDELIVERY_WINDOW);
  }

  let headCheck = null;
  if (head) {
    const at = hashes.get(head);
    if (!at) headCheck = { hash: head, found: false };
    else {
      const d = devices.get(at.device);
      headCheck = { hash: head, found: true, device: at.device, seq: at.seq, line: at.line, after: d ? d.lastSeq - at.seq : 0 };
    }
  }

  return {
    ok: broken === null && (headCheck === null || headCheck.found),
    lines: lines.length,
    entries: found.length,
    devices: [...devices.values()].map((d) => ({
      device: d.device,
      firstSeq: d.firstSeq,
      firstLine: d.firstLine,
      lastSeq: d.lastSeq,
      lastLine: d.lastLine,
      head: d.lastHash,
      count: d.count,
      redelivered: d.redelivered,
      startsAfterGenesis: d.firstSeq > 1,
    })),
    broken,
    head: headCheck,
  };
}

/** A human-readable report of verifyLog's result. */
export function formatReport(report) {
  const out = [];
  out.push(`${report.entries} audit entr${report.entries === 1 ? 'y' : 'ies'} in ${report.lines} lines, ${report.devices.length} device chain(s)`);
  for (const d of report.devices) {
    out.push(`  device ${d.device}: seq ${d.firstSeq}..${d.lastSeq} (${d.count} entries, lines ${d.firstLine}..${d.lastLine}), head ${d.head}`);
    if (d.redelivered > 0) out.push(`    ${d.redelivered} entr${d.redelivered === 1 ? 'y' : 'ies'} delivered again (sent again after a crash, in order), counted once`);
    if (d.startsAfterGenesis) out.push(`    starts at seq ${d.firstSeq}: earlier entries are not in this log (rotated or truncated at the start)`);
  }
  if (report.broken) {
    const b = report.broken;
    out.push(`BROKEN at line ${b.line}${b.device ? `: device ${b.device}, seq ${b.seq}` : ''}: ${b.message}`);
    out.push(`  expected: ${b.expected}`);
    out.push(`  found:    ${b.found}`);
  }
  if (report.head) {
    const h = report.head;
    if (!h.found) out.push(`HEAD ${short(h.hash)} not found: the log stops before the head (entries missing at the end) or the last entries were modified`);
    else out.push(`head ${short(h.hash)} is seq ${h.seq} of device ${h.device} (line ${h.line})${h.after > 0 ? `; ${h.after} later entr${h.after === 1 ? 'y' : 'ies'} follow it` : ''}`);
  }
  out.push(report.ok ? 'OK' : 'FAILED');
  return out.join('\n');
}
