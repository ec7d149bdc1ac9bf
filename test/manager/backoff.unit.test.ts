// The one retry-delay formula (src/manager/backoff.ts): doubling to a cap, jitter within its
// range with both ends reachable, reset on success. The informer's policy keeps its restarts short:
// after a burst of API errors the next restart is at most ~2 s away, never the 16–30 s that let a
// kubectl scale-down go unseen for 45 s (issue 16, item 10).
import { describe, expect, it } from 'vitest';
import {
  Backoff,
  backoffDelay,
  cappedDelay,
  jittered,
  NO_JITTER,
} from '../../src/manager/backoff.ts';
import { INFORMER_BACKOFF } from '../../src/manager/kube/resilient-informer.ts';

const middle = (): number => 0.5;

describe('the backoff formula', () => {
  it('doubles from the initial delay per attempt and never passes the cap', () => {
    const policy = { initialMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => cappedDelay(policy, n))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    expect(cappedDelay(policy, 10_000)).toBe(1_000); // no overflow to Infinity
    expect(cappedDelay(policy, 0)).toBe(100); // attempt 0 counts as the first
  });

  it('without a jitter range it draws nothing and returns the capped delay', () => {
    const policy = { initialMs: 1_000, maxMs: 10_000 };
    const noDraw = (): number => {
      throw new Error('drew a random number');
    };
    expect(backoffDelay(policy, 3, noDraw)).toBe(4_000);
    expect(jittered(1_234, NO_JITTER, noDraw)).toBe(1_234);
  });

  it('jitters within its range, both bounds inclusive once rounded', () => {
    const range = { min: 0.5, max: 1 };
    expect(jittered(1_000, range, () => 0)).toBe(500);
    // A draw just below 1 rounds to the top of the range: the bound is inclusive.
    expect(jittered(1_000, range, () => 0.999_999_9)).toBe(1_000);
    expect(jittered(1_000, range, middle)).toBe(750);
    for (let i = 0; i < 200; i++) {
      const d = jittered(1_000, range);
      expect(d).toBeGreaterThanOrEqual(500);
      expect(d).toBeLessThanOrEqual(1_000);
    }
  });

  it('applies the jitter after the cap, so a capped delay still spreads', () => {
    const policy = { initialMs: 100, maxMs: 1_000, jitter: { min: 0.8, max: 1.2 } };
    expect(backoffDelay(policy, 20, () => 0)).toBe(800);
    expect(backoffDelay(policy, 20, () => 0.999_999_9)).toBe(1_200);
  });
});

describe('the informer restart backoff', () => {
  it('doubles from 250 ms up to a 2 s cap, however many errors came in a row', () => {
    const backoff = new Backoff(INFORMER_BACKOFF, middle);
    const delays = Array.from({ length: 12 }, () => backoff.next());
    expect(delays.slice(0, 5)).toEqual([250, 500, 1_000, 2_000, 2_000]);
    expect(Math.max(...delays)).toBe(2_000);
    expect(backoff.attempts).toBe(12);
  });

  it('starts over after a success', () => {
    const backoff = new Backoff(INFORMER_BACKOFF, middle);
    for (let i = 0; i < 6; i++) backoff.next();
    backoff.reset();
    expect(backoff.attempts).toBe(0);
    expect(backoff.next()).toBe(250);
  });

  it('jitters by ±20 % and stays within 2.4 s', () => {
    const low = new Backoff(INFORMER_BACKOFF, () => 0);
    const high = new Backoff(INFORMER_BACKOFF, () => 0.999_75);
    expect(low.next()).toBe(200);
    for (let i = 0; i < 10; i++) high.next();
    expect(high.next()).toBeLessThanOrEqual(2_400);
    const real = new Backoff(INFORMER_BACKOFF);
    // Rounded: a draw near the top (1.19999…) gives exactly 2400, which `< 2400` failed now and then.
    for (let i = 0; i < 50; i++) expect(real.next()).toBeLessThanOrEqual(2_400);
  });
});
