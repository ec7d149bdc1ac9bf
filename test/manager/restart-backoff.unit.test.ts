// Informers restart after an error with a short, capped, resettable delay: after a burst of API
// errors the next restart is at most ~2 s away, never the 16–30 s that let a kubectl scale-down go
// unseen for 45 s (issue 16, item 10).
import { describe, expect, it } from 'vitest';
import { INFORMER_BACKOFF, RestartBackoff } from '../../src/manager/kube/restart-backoff.ts';

describe('the informer restart backoff', () => {
  it('doubles from 250 ms up to a 2 s cap, however many errors came in a row', () => {
    const backoff = new RestartBackoff({ ...INFORMER_BACKOFF, jitter: () => 1 });
    const delays = Array.from({ length: 12 }, () => backoff.next());
    expect(delays.slice(0, 5)).toEqual([250, 500, 1_000, 2_000, 2_000]);
    expect(Math.max(...delays)).toBe(2_000);
  });

  it('starts over after a success', () => {
    const backoff = new RestartBackoff({ ...INFORMER_BACKOFF, jitter: () => 1 });
    for (let i = 0; i < 6; i++) backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(250);
  });

  it('jitters by ±20 % and stays within 2.4 s', () => {
    const low = new RestartBackoff({ ...INFORMER_BACKOFF, jitter: () => 0.8 });
    const high = new RestartBackoff({ ...INFORMER_BACKOFF, jitter: () => 1.1999 });
    expect(low.next()).toBe(200);
    for (let i = 0; i < 10; i++) high.next();
    expect(high.next()).toBeLessThanOrEqual(2_400);
    const real = new RestartBackoff(INFORMER_BACKOFF);
    // Rounded: a draw near the top (1.19999…) gives exactly 2400, which `< 2400` failed now and then.
    for (let i = 0; i < 50; i++) expect(real.next()).toBeLessThanOrEqual(2_400);
  });
});
