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

  it("waits for each joiner's first vote as long as this run's chain took (firstVoteLags)", () => {
    const run = { start: 0, voters: 4, readyAt: [50, 50, 50, 50], commits: blocks(100, 500, 20) };
    // The joiner Ready first (index 0 after sorting by Ready time, same times: given order) signs
    // two blocks after its stake instead of one: every later wave starts one block later.
    const lagged = pacingAwareFloor({ ...run, firstVoteLags: [2, 1, 1, 1] });
    expect(lagged.waves).toEqual([1, 2, 1]);
    expect(lagged.ms).toBe(2600 + 500);
    // A lag in the second wave delays it by its slowest member only.
    expect(pacingAwareFloor({ ...run, firstVoteLags: [1, 3, 1, 1] }).ms).toBe(2600 + 1000);
    // Lags below 1 (a bad record) count as 1: the floor never assumes a vote in the stake's block.
    expect(pacingAwareFloor({ ...run, firstVoteLags: [0, -1, 0, 0] }).ms).toBe(2600);
  });

  it('puts a stake in the first block proposed after it is sent (proposedAt), not merely seen later', () => {
    // Blocks seen committed at 100, 600, …, each proposed 150 ms before it is seen.
    const commits = blocks(100, 500, 20);
    const run = { start: 0, voters: 4, readyAt: [500, 50, 50, 50], commits };
    expect(pacingAwareFloor(run).ms).toBe(2600);
    const proposedAt = commits.map((t) => t - 150);
    // Wave 1 (Ready 50): block 100 was proposed at -50, before the send: the stake lands in 600,
    // signs 1100. Wave 2 (the other two Ready at 50, sent 1100): the block seen at 1600 was
    // proposed at 1450, after the send; lands there, signs 2100. Wave 3 (Ready 500, sent 2100):
    // lands in the block proposed at 2450 (seen 2600), signs 3100.
    const floor = pacingAwareFloor({ ...run, proposedAt });
    expect(floor.waves).toEqual([1, 2, 1]);
    expect(floor.ms).toBe(3100);
    // A gap in the proposal times falls back to the commit time for that block.
    expect(pacingAwareFloor({ ...run, proposedAt: proposedAt.map(() => undefined) }).ms).toBe(2600);
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
