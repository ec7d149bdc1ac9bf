// PacedRun: the coalescing and pacing of the manager's recomputes and phase refreshes.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { PacedRun } from '../../src/manager/paced-run.ts';
import { ManualClock } from '../support/manual-clock.ts';

/** Work that takes `ms` of wall time (its cost, as PacedRun measures it). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

describe('PacedRun', () => {
  it('serves every request made before it ran with one run, at the end of this turn', async () => {
    let runs = 0;
    const paced = new PacedRun({ clock: new ManualClock(), spacing: 3, run: () => runs++ });
    paced.request();
    paced.request();
    paced.request();
    expect(runs).toBe(0);
    await nextTurn();
    expect(runs).toBe(1);
  });

  it('waits minDelayMs after a request', async () => {
    const clock = new ManualClock();
    let runs = 0;
    const paced = new PacedRun({ clock, spacing: 10, minDelayMs: 50, run: () => runs++ });
    paced.request();
    await nextTurn();
    await clock.advance(49);
    expect(runs).toBe(0);
    await clock.advance(1);
    expect(runs).toBe(1);
  });

  it('starts the next run no sooner than spacing × the last cost after it ended', async () => {
    const clock = new ManualClock();
    let runs = 0;
    const paced = new PacedRun({
      clock,
      spacing: 10,
      run: () => {
        runs++;
        busy(20);
      },
    });
    paced.runNow(); // costs about 20 ms: the next run waits about 200 ms after it
    paced.request();
    await nextTurn();
    await clock.advance(100);
    expect(runs).toBe(1);
    await clock.advance(900); // generous: a preempted busy loop measures longer than 20 ms
    expect(runs).toBe(2);
  });
});
