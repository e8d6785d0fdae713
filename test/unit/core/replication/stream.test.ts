// The DR pull protocol's decisions: pages on the wire (base64 values, checked order and types),
// what a secondary does per object (apply only what is new, repair by Merkle when the log was
// trimmed past its position, drop objects gone on the primary), and where a primary may trim.
import { describe, expect, it } from 'vitest';
import { decodePage, encodePage, planPull, trimPoint, validObjectName, type PullReply } from '../../../../src/core/replication/stream';
import { utf8 } from '../../../../src/crypto/encoding';
import { CofferError } from '../../../../src/framework/errors';

const entry = (seq: number, key: string, value: string | null, batch = seq) => ({ seq, batch, key, value: value === null ? null : utf8(value) });
const MOUNT = 'mount/0f8a2c1e-1111-4222-8333-444455556666';
const reply = (pages: PullReply['pages'], objects = Object.keys(pages)): PullReply => ({ cluster_id: 'c', objects, pages, now: 1 });

describe('pages on the wire', () => {
  it('round-trip values and deletes', () => {
    const page = { entries: [entry(1, 'a', 'x'), entry(2, 'a', null), entry(3, 'b/c', '\u00e9')], last: 3, first: 0 };
    const wire = encodePage(page);
    expect(wire.entries[0].value).toBe(btoa('x'));
    expect(decodePage(JSON.parse(JSON.stringify(wire)))).toEqual(page);
  });

  it.each([
    ['not an object', null, 'malformed replication page'],
    ['no entries', { last: 1, first: 0 }, 'malformed replication page'],
    ['a fractional last', { entries: [], last: 1.5, first: 0 }, 'malformed replication page'],
    ['an entry without key', { entries: [{ seq: 1, batch: 1, value: null }], last: 1, first: 0 }, 'malformed replication entry'],
    ['a numeric value', { entries: [{ seq: 1, batch: 1, key: 'k', value: 5 }], last: 1, first: 0 }, 'malformed replication entry'],
    ['entries out of order', { entries: [{ seq: 2, batch: 1, key: 'k', value: null }, { seq: 2, batch: 1, key: 'j', value: null }], last: 2, first: 0 }, 'out of order'],
    ['a value that is not base64', { entries: [{ seq: 1, batch: 1, key: 'k', value: '!!' }], last: 1, first: 0 }, 'not base64'],
  ])('refuse %s with a 400', (_what, page, message) => {
    let error: unknown = null;
    try {
      decodePage(page);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CofferError);
    expect((error as CofferError).status).toBe(400);
    expect((error as CofferError).message).toContain(message);
  });
});

describe('object names', () => {
  it.each([
    ['system', true],
    ['shard/0', true],
    ['shard/15', true],
    [MOUNT, true],
    ['audit/0f8a2c1e-1111-4222-8333-444455556666', true],
    ['mount/../system', false],
    ['mount/x', false],
    ['shard/', false],
    ['System', false],
  ])('%s: %s', (name, ok) => expect(validObjectName(name)).toBe(ok));
});

describe('planning a pull', () => {
  it('applies only entries after the position, and idles when there are none', () => {
    const r = reply({ system: encodePage({ entries: [entry(4, 'a', '1'), entry(5, 'b', '2')], last: 5, first: 0 }), 'shard/0': encodePage({ entries: [], last: 9, first: 9 }) });
    const actions = planPull({ system: 4, 'shard/0': 9 }, r);
    expect(actions.map((a) => [a.object, a.kind])).toEqual([
      ['system', 'apply'],
      ['shard/0', 'idle'],
    ]);
    expect(actions[0].kind === 'apply' && actions[0].entries.map((e) => e.seq)).toEqual([5]);
  });

  it('repairs by Merkle when the log was trimmed past the position, new objects included', () => {
    const r = reply({ system: encodePage({ entries: [entry(11, 'a', '1')], last: 11, first: 10 }), [MOUNT]: encodePage({ entries: [entry(3, 'k', 'v')], last: 3, first: 2 }) });
    expect(planPull({ system: 7 }, r)).toEqual([
      { object: 'system', kind: 'merkle', resumeAfter: 11 },
      { object: MOUNT, kind: 'merkle', resumeAfter: 3 },
    ]);
    // Exactly at the trim point the log still reaches.
    expect(planPull({ system: 10, [MOUNT]: 2 }, r).map((a) => a.kind)).toEqual(['apply', 'apply']);
  });

  it('drops objects the primary no longer has, and refuses names it should never send', () => {
    expect(planPull({ system: 1, [MOUNT]: 4 }, reply({}, ['system']))).toEqual([
      { object: 'system', kind: 'idle' },
      { object: MOUNT, kind: 'drop' },
    ]);
    expect(() => planPull({}, reply({}, ['../../etc']))).toThrow('unknown replicated object');
  });
});

describe('trimming', () => {
  const now = 1_000_000_000;
  it('keeps what the slowest recent secondary has not applied', () => {
    expect(trimPoint([{ position: 40, at: now }, { position: 25, at: now - 1000 }], 50, now)).toBe(25);
  });
  it('without secondaries trims everything', () => {
    expect(trimPoint([], 50, now)).toBe(50);
  });
  it('a stale secondary no longer holds the log back', () => {
    expect(trimPoint([{ position: 3, at: now - 25 * 3600_000 }, { position: 45, at: now }], 50, now)).toBe(45);
  });
  it('never keeps more than maxEntries', () => {
    expect(trimPoint([{ position: 10, at: now }], 1000, now, { maxEntries: 100, staleAfterMs: 1e9 })).toBe(900);
  });
  it('never trims beyond the last entry', () => {
    expect(trimPoint([{ position: 99, at: now }], 50, now)).toBe(50);
  });
});
