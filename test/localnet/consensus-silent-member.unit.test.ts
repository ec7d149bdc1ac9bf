// V1's quorum with a silent member (a late joiner that never votes: 5 rows, 4 voters, so every
// live voter is needed in the same round) on V1's manual pacemaker, where each validator applies
// its own TriggerView at its own moment (the manager sends one to each): the chain must keep
// committing, and never decide two blocks at one height.
import { describe, expect, it } from 'vitest';
import { prng } from '../../src/harness/random.ts';
import { ConsensusSim } from './support/consensus-sim.ts';

const TIMEOUT_MS = 100;
/** One TriggerView to every validator per period, each at its own offset within SPREAD_MS. */
const PERIOD_MS = 10 * TIMEOUT_MS;
const SPREAD_MS = 60;
const PERIODS = 60;

/**
 * Heights committed by every live node after each period. The bound: a round led by the silent
 * member costs three step timeouts (propose, prevote, precommit), well inside a period, so
 * nearly every period commits; a trigger that cuts a round short after a validator locked costs
 * at most the next period or two, until a proposer re-proposes the locked block.
 */
function run(seed: number): { heights: number[]; longestStall: number; conflicts: number[] } {
  const sim = new ConsensusSim({
    validators: 4,
    silent: 1,
    manual: true,
    catchUpOnAnyMessage: true, // as the v1 profile runs it (node.ts)
    seed,
    dropRate: 0,
    maxDelayMs: 40,
    timeoutMs: TIMEOUT_MS,
    persistentGuard: true,
  });
  const random = prng(seed * 31);
  const heights: number[] = [];
  let longestStall = 0;
  let stall = 0;
  for (let period = 0; period < PERIODS; period++) {
    const start = period * PERIOD_MS;
    const offsets = sim.nodes.map(() => Math.floor(random() * SPREAD_MS));
    const order = offsets.map((at, index) => ({ at, index })).sort((a, b) => a.at - b.at);
    for (const { at, index } of order) {
      sim.runUntil(start + at);
      sim.trigger(index);
    }
    sim.runUntil(start + PERIOD_MS);
    const height = sim.minCommitted();
    stall = height > (heights.at(-1) ?? 0) ? 0 : stall + 1;
    longestStall = Math.max(longestStall, stall);
    heights.push(height);
  }
  return { heights, longestStall, conflicts: sim.conflicts() };
}

describe('consensus with a silent quorum member on the manual pacemaker (v1 profile)', () => {
  it.each(Array.from({ length: 12 }, (_, i) => i + 1))(
    'keeps committing while each validator takes its own TriggerView (seed %i)',
    (seed) => {
      const { heights, longestStall, conflicts } = run(seed);
      expect(conflicts).toEqual([]);
      expect(longestStall, `heights after each period: ${heights.join(',')}`).toBeLessThanOrEqual(
        3,
      );
      expect(heights.at(-1)).toBeGreaterThanOrEqual(PERIODS - 10);
    },
  );
});
