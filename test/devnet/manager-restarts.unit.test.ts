// How a devnet restarts a manager that exited by itself: a doubling back-off, at most
// MAX_RESTARTS in a row, the count starting again after a manager that ran STABLE_MS.
import { describe, expect, it } from 'vitest';
import {
  exitText,
  ManagerRestarts,
  MAX_DELAY_MS,
  MAX_RESTARTS,
  STABLE_MS,
} from '../../src/devnet/manager-restarts.ts';

describe('manager restarts', () => {
  it('backs off 1, 2, 4, 8, 16 s, then gives up; a manager that ran long starts the count again', () => {
    const restarts = new ManagerRestarts();
    const delays = Array.from({ length: MAX_RESTARTS }, () => restarts.onExit(100));
    expect(delays.map((d) => (d.restart ? d.delayMs : -1))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000,
    ]);
    expect(restarts.onExit(100)).toEqual({ restart: false, attempts: MAX_RESTARTS });
    expect(restarts.onExit(STABLE_MS)).toEqual({ restart: true, delayMs: 1_000, attempt: 1 });
    expect(16_000).toBeLessThanOrEqual(MAX_DELAY_MS);
  });

  it('says how the manager ended', () => {
    expect(exitText(null, 'SIGKILL')).toBe('signal SIGKILL');
    expect(exitText(1, null)).toBe('exit code 1');
  });
});
