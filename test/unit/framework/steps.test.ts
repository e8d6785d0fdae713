// drive(): a generator of steps runs to its end at once while nothing it yields is a promise, and
// waits (as await would) from the first one that is, errors and finally blocks included.
import { describe, expect, it } from 'vitest';
import { andThen, drive, isThenable, settled, type Steps } from '../../../src/framework/steps';

function* sum(a: number | Promise<number>, b: number | Promise<number>): Steps<number> {
  return (yield* settled(a)) + (yield* settled(b));
}

describe('drive', () => {
  it('answers at once when no step is a promise', () => {
    expect(drive(sum(1, 2))).toBe(3);
  });

  it('waits from the first promise on, with the same answer', async () => {
    const later = drive(sum(1, Promise.resolve(2)));
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(3);
  });

  it('waits for any thenable, as await does', async () => {
    const thenable = { then: (resolve: (v: number) => void) => resolve(5) };
    expect(isThenable(thenable)).toBe(true);
    expect(await drive(sum(1, thenable as unknown as Promise<number>))).toBe(6);
  });

  it('throws at once from a step that throws at once, and rejects from a rejected step', async () => {
    function* fails(): Steps<number> {
      throw new Error('now');
    }
    expect(() => drive(fails())).toThrow('now');
    await expect(drive(sum(1, Promise.reject(new Error('later'))))).rejects.toThrow('later');
  });

  it('delivers a rejection into the steps, where catch and finally see it', async () => {
    const seen: string[] = [];
    function* guarded(): Steps<string> {
      try {
        yield* settled(Promise.reject(new Error('refused')));
        return 'not reached';
      } catch (e) {
        seen.push((e as Error).message);
        return 'caught';
      } finally {
        seen.push(yield* settled(Promise.resolve('finally')));
      }
    }
    expect(await drive(guarded())).toBe('caught');
    expect(seen).toEqual(['refused', 'finally']);
  });

  it('does not suspend the steps for a value at hand: only a promise reaches the driver', () => {
    const steps = sum(1, Promise.resolve(2));
    const first = steps.next();
    // The first value (1) went through without a turn; the promise is the first thing yielded.
    expect(first.done).toBe(false);
    expect(first.value).toBeInstanceOf(Promise);
    expect(steps.next(2)).toEqual({ done: true, value: 3 });
    expect(sum(1, 2).next()).toEqual({ done: true, value: 3 });
  });

  it('andThen applies at once to a value and after a promise', async () => {
    expect(andThen(2, (v) => v * 2)).toBe(4);
    expect(await andThen(Promise.resolve(2), (v) => v * 2)).toBe(4);
  });
});
