// Hash chains: how devices build them (chain.ts) and how a log is checked against them
// (verify-chain.mjs, the logic of `npm run audit:verify`).
import { describe, expect, it } from 'vitest';
import { asciiJson, chainEntry, entryHash, GENESIS, genesisHead, type ChainHead } from '../../../../src/core/audit/chain';
import { findEntry, formatReport, GENESIS as VERIFY_GENESIS, REDELIVERY_WINDOW, verifyLog } from '../../../../src/core/audit/verify-chain.mjs';

const DEVICE_A = '11111111-1111-4111-8111-111111111111';
const DEVICE_B = '22222222-2222-4222-8222-222222222222';

/** n chained entry lines of one device, starting after `head`. */
async function chain(device: string, n: number, head: ChainHead = genesisHead(), extra: Record<string, unknown> = {}): Promise<{ lines: string[]; head: ChainHead }> {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const next = await chainEntry({ time: `2026-01-01T00:00:0${i % 10}Z`, type: i % 2 ? 'response' : 'request', request: { path: `secret/${i}`, data: { v: `value-${i}` } }, ...extra }, device, head);
    lines.push(next.text);
    head = next.head;
  }
  return { lines, head };
}

describe('building a chain', () => {
  it('links each entry to the hash of the previous entry’s exact text, from the genesis value', async () => {
    const first = await chainEntry({ type: 'request' }, DEVICE_A, genesisHead());
    expect(JSON.parse(first.text).chain).toEqual({ device: DEVICE_A, seq: 1, prev: GENESIS });
    expect(first.head).toEqual({ seq: 1, hash: await entryHash(first.text) });
    const second = await chainEntry({ type: 'response' }, DEVICE_A, first.head);
    expect(JSON.parse(second.text).chain).toEqual({ device: DEVICE_A, seq: 2, prev: first.head.hash });
    expect(GENESIS).toBe(VERIFY_GENESIS);
  });

  it('hashes with SHA-256 over the UTF-8 text', async () => {
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('{"a":1}')));
    expect(await entryHash('{"a":1}')).toBe(`sha256:${[...digest].map((b) => b.toString(16).padStart(2, '0')).join('')}`);
  });

  it('writes pure ASCII JSON, so the text survives any log pipeline byte for byte', () => {
    const text = asciiJson({ k: 'pässwörd ✓ \u2028 😀' });
    expect(text).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(text)).toEqual({ k: 'pässwörd ✓ \u2028 😀' });
  });
});

describe('finding entries in a log', () => {
  it('finds an entry after any prefix, and skips other lines', async () => {
    const { lines } = await chain(DEVICE_A, 1);
    expect(findEntry(`AUDIT {x} ${lines[0]}`)?.text).toBe(lines[0]);
    expect(findEntry('Coffer is listening on http://127.0.0.1:8200')).toBeNull();
    expect(findEntry('{"not":"an audit entry"}')).toBeNull();
  });
});

describe('verifying a log', () => {
  it('accepts an intact chain among other lines and prefixes, and reports its head', async () => {
    const { lines, head } = await chain(DEVICE_A, 6);
    const log = ['starting', ...lines.map((l, i) => (i % 2 ? `AUDIT: ${l}` : l)), 'a worker log line', ''].join('\n');
    const report = await verifyLog(log);
    expect(report.ok).toBe(true);
    expect(report.broken).toBeNull();
    expect(report.devices).toEqual([{ device: DEVICE_A, firstSeq: 1, firstLine: 2, lastSeq: 6, lastLine: 7, head: head.hash, count: 6, redelivered: 0, startsAfterGenesis: false }]);
    expect(formatReport(report)).toMatch(/OK$/);
  });

  it('checks interleaved devices separately', async () => {
    const a = await chain(DEVICE_A, 4);
    const b = await chain(DEVICE_B, 4);
    const log = a.lines.flatMap((l, i) => [l, b.lines[i]]).join('\n');
    const report = await verifyLog(log);
    expect(report.ok).toBe(true);
    expect(report.devices.map((d) => [d.device, d.count])).toEqual([
      [DEVICE_A, 4],
      [DEVICE_B, 4],
    ]);
  });

  it('names the first edited entry: the next entry no longer links to it', async () => {
    const { lines } = await chain(DEVICE_A, 5);
    lines[2] = lines[2].replace('value-2', 'value-X');
    const report = await verifyLog(lines.join('\n'));
    expect(report.ok).toBe(false);
    expect(report.broken).toMatchObject({ kind: 'mismatch', line: 4, device: DEVICE_A, seq: 4 });
    expect(report.broken?.message).toContain('seq 3, line 3');
    expect(report.broken?.found).toBe(`prev ${JSON.parse(lines[3]).chain.prev}`);
    expect(report.broken?.expected).toContain((await entryHash(lines[2])).slice(0, 20));
  });

  it('reports a deleted entry as a gap', async () => {
    const { lines } = await chain(DEVICE_A, 5);
    lines.splice(2, 1);
    const report = await verifyLog(lines.join('\n'));
    expect(report.broken).toMatchObject({ kind: 'gap', line: 3, seq: 4, expected: 'seq 3', found: 'seq 4' });
    expect(report.broken?.message).toBe('seq 3 is missing after line 2: entries were deleted');
  });

  it('reports swapped entries as reordering', async () => {
    const { lines } = await chain(DEVICE_A, 5);
    [lines[1], lines[2]] = [lines[2], lines[1]];
    const report = await verifyLog(lines.join('\n'));
    expect(report.broken).toMatchObject({ kind: 'reorder', line: 2, seq: 3, expected: 'seq 2', found: 'seq 3' });
    expect(report.broken?.message).toBe('seq 2 appears later, at line 3: entries are out of order');
  });

  it('reports a duplicated entry that is not part of a repeated run', async () => {
    const { lines } = await chain(DEVICE_A, 4);
    // seq 2 copied after seq 3, then the chain goes on: a repeat must go on in order up to the end.
    const report = await verifyLog([lines[0], lines[1], lines[2], lines[1], lines[3]].join('\n'));
    expect(report.broken).toMatchObject({ kind: 'reorder', line: 5, seq: 4, expected: 'seq 3', found: 'seq 4' });
    expect(report.broken?.message).toBe('seq 4 follows entries sent again that stopped at seq 2: seq 3 was not repeated');
    // A copy that skips an entry inside the run.
    const skipping = await verifyLog([lines[0], lines[1], lines[2], lines[3], lines[1], lines[3]].join('\n'));
    expect(skipping.broken).toMatchObject({ kind: 'reorder', line: 6, seq: 4, expected: 'seq 3' });
    expect(skipping.broken?.message).toBe('seq 4 repeats entries sent before, but seq 3 was skipped: entries are out of order or missing');
  });

  it('accepts an entry repeated right after itself (sent again after a crash) and counts it once', async () => {
    const { lines } = await chain(DEVICE_A, 3);
    const report = await verifyLog([lines[0], lines[1], lines[1], lines[2]].join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices[0]).toMatchObject({ lastSeq: 3, count: 3, redelivered: 1 });
    expect(formatReport(report)).toContain('1 entry delivered again (sent again after a crash, in order), counted once');
    // A repeat with different content under the same number is a fork, not a repeat.
    const forked = lines[1].replace('"type":"', '"type":"x');
    const fork = await verifyLog([lines[0], lines[1], forked].join('\n'));
    expect(fork.broken).toMatchObject({ kind: 'reorder', seq: 2, line: 3 });
    expect(fork.broken?.message).toBe('seq 2 was already delivered (line 2) with other content: a fork, or an edited copy');
  });

  it('accepts a group sent again after a crash, whole or after part of it arrived, and counts each entry once', async () => {
    const { lines, head } = await chain(DEVICE_A, 8);
    const [e1, e2, e3, e4, e5, e6, e7, e8] = lines;
    // Group 2..5 arrived whole, then again; group 2..5 arrived up to 3, then whole; and two crashes in a row.
    for (const log of [
      [e1, e2, e3, e4, e5, e2, e3, e4, e5, e6, e7, e8],
      [e1, e2, e3, e2, e3, e4, e5, e6, e7, e8],
      [e1, e2, e3, e2, e2, e3, e4, e5, e6, e2, e3, e4, e5, e6, e7, e8],
    ]) {
      const report = await verifyLog(log.join('\n'), { head: head.hash });
      expect(report.broken).toBeNull();
      expect(report.ok).toBe(true);
      expect(report.devices[0]).toMatchObject({ lastSeq: 8, count: 8, redelivered: log.length - 8 });
    }
    // A log that ends inside a repeated run (cut off by a second crash) is whole so far.
    expect((await verifyLog([e1, e2, e3, e4, e2, e3].join('\n'))).ok).toBe(true);
    // A repeat of an edited copy is not a repeat.
    const edited = await verifyLog([e1, e2, e3, e2.replace('value-1', 'value-X'), e3].join('\n'));
    expect(edited.broken).toMatchObject({ kind: 'reorder', line: 4, seq: 2 });
  });

  it('accepts a repeat only within the window a device can send again', async () => {
    const { lines } = await chain(DEVICE_A, REDELIVERY_WINDOW + 2);
    const inWindow = await verifyLog([...lines, ...lines.slice(2)].join('\n'));
    expect(inWindow.ok).toBe(true);
    const beyond = await verifyLog([...lines, ...lines.slice(1)].join('\n'));
    expect(beyond.broken).toMatchObject({ kind: 'reorder', seq: 2, line: lines.length + 1 });
    expect(beyond.broken?.message).toBe(`seq 2 comes after seq ${lines.length} (line ${lines.length}): entries are out of order or duplicated`);
  });

  it('accepts a log that starts after seq 1 (rotated or truncated at the start), and says so', async () => {
    const { lines } = await chain(DEVICE_A, 6);
    const report = await verifyLog(lines.slice(3).join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices[0]).toMatchObject({ firstSeq: 4, lastSeq: 6, startsAfterGenesis: true });
    expect(formatReport(report)).toContain('starts at seq 4: earlier entries are not in this log');
  });

  it('refuses a first entry that claims seq 1 without the genesis link', async () => {
    const forged = asciiJson({ type: 'request', chain: { device: DEVICE_A, seq: 1, prev: `sha256:${'1'.repeat(64)}` } });
    expect((await verifyLog(forged)).broken).toMatchObject({ kind: 'genesis', line: 1 });
  });

  it('reports an entry damaged into invalid JSON', async () => {
    const { lines } = await chain(DEVICE_A, 3);
    lines[1] = lines[1].replace('"type":', '"type"');
    expect((await verifyLog(lines.join('\n'))).broken).toMatchObject({ kind: 'corrupt', line: 2 });
  });

  it('checks that the log reaches a head from sys/audit', async () => {
    const { lines, head } = await chain(DEVICE_A, 5);
    const earlier = await entryHash(lines[3]);
    expect((await verifyLog(lines.join('\n'), { head: head.hash })).head).toMatchObject({ found: true, seq: 5, after: 0 });
    // Entries after the head are fine (listing sys/audit is itself audited).
    expect((await verifyLog(lines.join('\n'), { head: earlier })).head).toMatchObject({ found: true, seq: 4, after: 1 });
    // A log cut before the head is not.
    const cut = await verifyLog(lines.slice(0, 3).join('\n'), { head: head.hash });
    expect(cut.ok).toBe(false);
    expect(cut.head).toEqual({ hash: head.hash, found: false });
    expect(formatReport(cut)).toContain('not found');
  });
});
