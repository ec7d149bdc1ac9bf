// The benchmark's pacing-aware floor (bench/support/pacing-floor.ts) on hand-made runs.
import { describe, expect, it } from 'vitest';
import { pacingAwareFloor, waveSize } from '../../bench/support/pacing-floor.ts';

/** Blocks committed every `interval` ms from `first`, `count` of them. */
const blocks = (first: number, interval: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => first + i * interval);

describe('pacingAwareFloor', () => {
  it('follows the manager budget: fewer than half of the voters join at once', () => {
    expect([1, 2, 3, 4, 5, 7, 10, 14].map(waveSize)).toEqual([1, 1, 1, 1, 2, 3, 4, 6]);
  });

  it('4 → 8 with every pod Ready at once: three waves of two blocks each', () => {
    // Commits at 100, 600, 1100, …; scale at 0, pods Ready at 50.
    const floor = pacingAwareFloor({
      start: 0,
      voters: 4,
      readyAt: [50, 50, 50, 50],
      commits: blocks(100, 500, 20),
    });
    expect(floor.waves).toEqual([1, 2, 1]);
    // Wave 1: stake in 100, signs 600. Wave 2: sent at 600, lands 1100, signs 1600. Wave 3: 2100, 2600.
    expect(floor.ms).toBe(2600);
    expect(floor.blocks).toBe(6);
  });

  it('4 → 16 takes five waves', () => {
    const floor = pacingAwareFloor({
      start: 0,
      voters: 4,
      readyAt: Array.from({ length: 12 }, () => 0),
      commits: blocks(100, 500, 40),
    });
    expect(floor.waves).toEqual([1, 2, 3, 4, 2]);
    expect(floor.ms).toBe(100 + 9 * 500);
  });

  it('waits for late pods, earliest Ready first, and uses the real (uneven) block times', () => {
    const floor = pacingAwareFloor({
      start: 0,
      voters: 4,
      readyAt: [3000, 200, 2950, 10],
      commits: [100, 300, 1000, 1100, 2000, 2990, 3100, 3200, 3300, 3900],
    });
    // Wave 1 (Ready 10): lands 100, signs 300. Wave 2 (Ready 200, 2950): sent 300 → 1000, and
    // 2950 → 2990; votes at 3100. Wave 3 (Ready 3000, after 3100): lands 3200, signs 3300.
    expect(floor.waves).toEqual([1, 2, 1]);
    expect(floor.ms).toBe(3300);
  });

  it('says so when the record of blocks is too short', () => {
    expect(() => pacingAwareFloor({ start: 0, voters: 4, readyAt: [0], commits: [100] })).toThrow(
      /record ends/,
    );
    expect(() => pacingAwareFloor({ start: 0, voters: 0, readyAt: [0], commits: [1, 2] })).toThrow(
      /no joiner/,
    );
  });
});
