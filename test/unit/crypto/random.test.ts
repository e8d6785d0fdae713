// Time-ordered ids: the time (ms) in base62 digits that sort as numbers, then random characters.
// Rows stored under ids made one after another are then appended to SQLite's key index.
import { describe, expect, it } from 'vitest';
import { timeOrderedBase62, timePrefix, TIME_PREFIX_LENGTH } from '../../../src/crypto/random';

describe('time-ordered ids', () => {
  it('write the time in fixed width, in the order of the times', () => {
    const t = Date.UTC(2026, 10, 27, 12, 0, 0);
    const times = [0, 1, 9, 10, 35, 36, 61, 62, 3843, 3844, t - 1, t, t + 1, t + 3_600_000, Date.UTC(2080, 11, 31)];
    const prefixes = times.map(timePrefix);
    for (const p of prefixes) expect(p).toHaveLength(TIME_PREFIX_LENGTH);
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(new Set(prefixes).size).toBe(times.length);
    expect(timePrefix(0)).toBe('0000000');
  });

  it('sort in the order they were made, and differ when made in the same millisecond', () => {
    const t = Date.now();
    const made = Array.from({ length: 300 }, (_, i) => timeOrderedBase62(24, t + i));
    for (const id of made) expect(id).toMatch(/^[A-Za-z0-9]{24}$/);
    expect([...made].sort()).toEqual(made);
    expect(new Set(Array.from({ length: 300 }, () => timeOrderedBase62(24, t))).size).toBe(300);
  });
});
