import { describe, expect, it } from 'vitest';
import { formatGoDuration, formatRFC3339Nano, parseDurationSeconds } from '../../../src/framework/duration';

describe('parseDurationSeconds (Vault ParseDurationSecond)', () => {
  it.each([
    [3600, 3600],
    ['3600', 3600],
    ['1h', 3600],
    ['1h30m', 5400],
    ['1.5h', 5400],
    ['90s', 90],
    ['1500ms', 1],
    ['7d', 604800],
    ['', 0],
    [null, 0],
    [undefined, 0],
    ['-5s', -5],
    ['0', 0],
    [' 20m ', 1200],
  ])('%j → %i seconds', (input, expected) => {
    expect(parseDurationSeconds(input)).toBe(expected);
  });

  it.each(['abc', '1x', '1d2h', 'h', '--1s', '1h 30m'])('refuses %j', (input) => {
    expect(() => parseDurationSeconds(input)).toThrow(/invalid duration/);
  });

  it('refuses non-string, non-number input', () => {
    expect(() => parseDurationSeconds(true)).toThrow();
    expect(() => parseDurationSeconds({})).toThrow();
  });
});

describe('Go formatting', () => {
  it.each([
    [0, '0s'],
    [45, '45s'],
    [90, '1m30s'],
    [3600, '1h0m0s'],
    [2764800, '768h0m0s'],
    [-90, '-1m30s'],
  ])('duration %i → %s', (secs, text) => expect(formatGoDuration(secs)).toBe(text));

  it('formats RFC3339Nano without trailing zeros', () => {
    expect(formatRFC3339Nano(Date.UTC(2024, 4, 1, 10, 0, 0, 120))).toBe('2024-05-01T10:00:00.12Z');
    expect(formatRFC3339Nano(Date.UTC(2024, 4, 1, 10, 0, 0, 0))).toBe('2024-05-01T10:00:00Z');
    expect(formatRFC3339Nano(Date.UTC(2024, 4, 1, 10, 0, 10, 100))).toBe('2024-05-01T10:00:10.1Z');
    expect(formatRFC3339Nano(Date.UTC(2024, 4, 1, 10, 0, 10, 123))).toBe('2024-05-01T10:00:10.123Z');
    expect(formatRFC3339Nano(Date.UTC(2024, 4, 1, 10, 0, 0, 5))).toBe('2024-05-01T10:00:00.005Z');
    expect(formatRFC3339Nano(new Date(Date.UTC(2024, 4, 1, 10, 0, 0, 50)))).toBe('2024-05-01T10:00:00.05Z');
    // Against toISOString with the zeros trimmed, across seconds, days and years (the kept prefix must follow).
    let t = Date.UTC(1999, 11, 31, 23, 59, 58, 0);
    for (let i = 0; i < 5000; i++, t += 997) {
      expect(formatRFC3339Nano(t)).toBe(new Date(t).toISOString().replace(/\.000Z$/, 'Z').replace(/(\.\d*?)0+Z$/, '$1Z'));
    }
    expect(formatRFC3339Nano(Date.UTC(2024, 4, 1, 10, 0, 0, 0))).toBe('2024-05-01T10:00:00Z');
  });
});
