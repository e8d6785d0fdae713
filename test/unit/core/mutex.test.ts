// Mutex: FIFO turns; runNow starts at once (and answers at once) only when no one holds or waits.
import { describe, expect, it } from 'vitest';
import { Mutex } from '../../../src/core/mutex';

const tick = () => new Promise<void>((r) => setTimeout(r, 1));

describe('Mutex', () => {
  it('runs holders one at a time, in order', async () => {
    const m = new Mutex();
    const order: string[] = [];
    const slow = (name: string) => async () => {
      order.push(`${name} in`);
      await tick();
      order.push(`${name} out`);
    };
    await Promise.all([m.run(slow('a')), m.run(slow('b'))]);
    expect(order).toEqual(['a in', 'a out', 'b in', 'b out']);
  });

  it('runNow answers at once when free, and leaves the mutex free', () => {
    const m = new Mutex();
    expect(m.runNow(() => 1)).toBe(1);
    expect(m.runNow(() => 2)).toBe(2);
  });

  it('runNow queues behind a holder, and later callers queue behind a runNow still running', async () => {
    const m = new Mutex();
    const order: string[] = [];
    let release!: () => void;
    const held = m.run(() => new Promise<void>((r) => (release = r)).then(() => void order.push('held')));
    const queued = m.runNow(() => order.push('queued'));
    expect(queued).toBeInstanceOf(Promise);
    await tick();
    expect(order).toEqual([]);
    release();
    await Promise.all([held, queued]);
    expect(order).toEqual(['held', 'queued']);

    let finish!: () => void;
    const running = m.runNow(() => new Promise<void>((r) => (finish = r)).then(() => void order.push('running')));
    const after = m.run(async () => void order.push('after'));
    const afterNow = m.runNow(() => order.push('after now'));
    expect(afterNow).toBeInstanceOf(Promise);
    finish();
    await Promise.all([running, after, afterNow]);
    expect(order.slice(2)).toEqual(['running', 'after', 'after now']);
  });

  it('a holder that throws, at once or later, frees the mutex', async () => {
    const m = new Mutex();
    expect(() =>
      m.runNow(() => {
        throw new Error('at once');
      }),
    ).toThrow('at once');
    await expect(m.runNow(() => Promise.reject(new Error('later')))).rejects.toThrow('later');
    expect(m.runNow(() => 'free')).toBe('free');
  });
});
