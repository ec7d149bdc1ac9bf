// V1's consensus rules in the stand-in's core (the `v1` profile), on V1's manual pacemaker where
// each validator applies its own TriggerView at its own moment (p1 and the manager send one to
// each): the leader of a round never counts its own vote nor its NewRound (V1's `sendToLeader` and
// NewRound broadcast reach the leader through RainTree, whose `sendInternal` drops a send to self:
// p2p/raintree/router.go:172-179; consensus/hotstuff_leader.go:96-102, 147-153, 198-204), and
// the threshold is `num > 2/3 × all rows` (consensus/helpers.go:119-134). So a height commits only
// while the other live voters are more than 2/3 of all rows: 4 of 4 commit, 4 voters of 5 rows
// (a silent late joiner) or 3 of 4 (one down) never do, 7 voters of 8 rows do and of 9 do not —
// and no certificate holds its round's leader's signature. A waiting height's round goes up every
// timeout, and a trigger starts the round after it (consensus/pacemaker/module.go:172-261,
// consensus/debugging.go:60-74).
import { describe, expect, it } from 'vitest';
import { prng } from '../../src/harness/random.ts';
import { ConsensusSim, type SimOptions } from './support/consensus-sim.ts';

const TIMEOUT_MS = 100;
/** One TriggerView to every validator per period, each at its own offset within SPREAD_MS. */
const PERIOD_MS = 10 * TIMEOUT_MS;
const SPREAD_MS = 60;

const V1: Pick<
  SimOptions,
  'leaderExcluded' | 'idleRounds' | 'catchUpOnAnyMessage' | 'fixedTimeouts' | 'manual'
> = {
  leaderExcluded: true,
  idleRounds: true,
  catchUpOnAnyMessage: true,
  fixedTimeouts: true,
  manual: true,
};

/** A network of `validators` live cores and `silent` rows; `leaderCounts`: all of V1's rules but that one. */
function sim(options: {
  validators: number;
  silent?: number;
  seed: number;
  leaderCounts?: boolean;
}) {
  return new ConsensusSim({
    ...V1,
    leaderExcluded: options.leaderCounts !== true,
    validators: options.validators,
    silent: options.silent ?? 0,
    seed: options.seed,
    dropRate: 0,
    maxDelayMs: 40,
    timeoutMs: TIMEOUT_MS,
    persistentGuard: true,
  });
}

/** The longest run of periods without a new height. */
function longestStall(heights: number[]): number {
  let longest = 0;
  let stall = 0;
  heights.forEach((height, i) => {
    stall = height > (heights[i - 1] ?? 0) ? 0 : stall + 1;
    longest = Math.max(longest, stall);
  });
  return longest;
}

/** `periods` periods of one TriggerView per live validator, at random offsets; heights after each. */
function drive(network: ConsensusSim, seed: number, periods: number): number[] {
  const random = prng(seed * 31);
  const heights: number[] = [];
  const from = network.now;
  for (let period = 0; period < periods; period++) {
    const start = from + period * PERIOD_MS;
    const order = network.nodes
      .map((_, index) => ({ at: Math.floor(random() * SPREAD_MS), index }))
      .filter(({ index }) => network.isUp(index))
      .sort((a, b) => a.at - b.at);
    for (const { at, index } of order) {
      network.runUntil(start + at);
      network.trigger(index);
    }
    network.runUntil(start + PERIOD_MS);
    heights.push(network.maxCommitted());
  }
  return heights;
}

/** Certificates that hold the signature of the leader of their own round. */
function leaderSigned(network: ConsensusSim): string[] {
  return network.certificates
    .filter((c) => c.signers.includes(network.set.proposer(c.height, c.round) ?? ''))
    .map((c) => `${c.height}/${c.round}`);
}

describe('V1’s leader never counts its own vote (v1 profile, manual pacemaker)', () => {
  it.each([1, 2, 3, 4, 5])(
    '4 of 4 keep committing, and no certificate holds its leader’s signature (seed %i)',
    (seed) => {
      // Every voter but the leader is needed in one round (3 others of 4 rows): a trigger that
      // reaches a validator after a peer's NewRound moved it into the round takes it one round
      // further, alone, and the round fails — in V1 as here. The next period's triggers resolve it.
      const network = sim({ validators: 4, seed });
      const heights = drive(network, seed, 20);
      expect(network.conflicts()).toEqual([]);
      expect(heights.at(-1), heights.join(',')).toBeGreaterThanOrEqual(14);
      expect(longestStall(heights), heights.join(',')).toBeLessThanOrEqual(2);
      expect(network.certificates.length).toBeGreaterThan(0);
      expect(leaderSigned(network)).toEqual([]);
      for (const c of network.certificates) expect(c.signers.length).toBeGreaterThanOrEqual(3);
    },
  );

  it.each([1, 2, 3])(
    'one silent row beside 4 voters halts the chain for good: 3 others of 5 rows is not > 10/3 (seed %i)',
    (seed) => {
      const network = sim({ validators: 4, silent: 1, seed });
      expect(drive(network, seed, 15).at(-1)).toBe(0);
      expect(network.conflicts()).toEqual([]);
      // Count the leader's vote, every other rule the same: the same network commits.
      const counting = sim({ validators: 4, silent: 1, seed, leaderCounts: true });
      expect(drive(counting, seed, 15).at(-1)).toBeGreaterThan(5);
    },
  );

  it('one of 4 genesis validators down halts it too (2 others of 4 rows), and it resumes when back', () => {
    const network = sim({ validators: 4, seed: 7 });
    const before = drive(network, 7, 3).at(-1) ?? 0;
    expect(before).toBeGreaterThan(0);
    network.crash(3);
    const halted = drive(network, 7, 8);
    expect(halted.at(-1)).toBe(before);
    network.restart(3);
    expect(drive(network, 7, 6).at(-1)).toBeGreaterThan(before);
    expect(network.conflicts()).toEqual([]);
  });

  it('7 voters carry one silent row (6 > 16/3) and not two (6 > 6 fails)', () => {
    const one = sim({ validators: 7, silent: 1, seed: 11 });
    const heights = drive(one, 11, 12);
    expect(heights.at(-1), heights.join(',')).toBeGreaterThanOrEqual(6);
    expect(leaderSigned(one)).toEqual([]);
    const two = sim({ validators: 7, silent: 2, seed: 11 });
    expect(drive(two, 11, 12).at(-1)).toBe(0);
    expect([...one.conflicts(), ...two.conflicts()]).toEqual([]);
  });
});

describe('V1’s NewRound and manual pacemaker in the stand-in’s rounds', () => {
  it('the leader proposes only once more than 2/3 of the others announced the round', () => {
    // Height 1, round 0, one validator down: the leader and two others take their TriggerView
    // (two NewRounds reach the leader: 2 is not > 8/3), and the leader never proposes in it.
    // Counting the leader's own NewRound, three would be there, and it proposes at once.
    for (const leaderCounts of [false, true]) {
      const network = sim({ validators: 4, seed: 3, leaderCounts });
      const leader = network.nodes.findIndex((n) => n.key.address === network.set.proposer(1, 0));
      const down = (leader + 1) % 4;
      network.crash(down);
      for (let i = 0; i < 4; i++) if (i !== down) network.trigger(i);
      network.runUntil(0.9 * TIMEOUT_MS);
      const { height, proposals } = network.nodes[leader]!.consensus!.describe() as {
        height: number;
        proposals: number[];
      };
      if (leaderCounts)
        expect(height).toBe(2); // proposed at once, and the three committed
      else expect({ height, proposals }).toEqual({ height: 1, proposals: [] });
    }
  });

  it('a waiting height’s round goes up every timeout; a trigger starts the next (round 0 only at genesis)', () => {
    const network = sim({ validators: 4, seed: 5 });
    const state = (i: number) => network.nodes[i]!.consensus!;
    network.runUntil(3.5 * TIMEOUT_MS);
    expect(state(0).round).toBe(3); // at genesis too, as V1's timer runs from its start
    expect(state(0).atGenesis).toBe(true);
    for (let i = 0; i < 4; i++) network.trigger(i);
    expect(state(0).round).toBe(0); // `NewHeight`: height 1 starts at round 0
    network.runUntil(network.now + 3 * TIMEOUT_MS);
    expect(network.minCommitted()).toBe(1);
    const waitingSince = network.now;
    network.runUntil(waitingSince + 4.5 * TIMEOUT_MS);
    const idle = state(1).round;
    expect(idle).toBeGreaterThanOrEqual(4);
    expect(state(1).step).toBe('idle');
    network.trigger(1);
    expect(state(1).round).toBe(idle + 1); // `InterruptRound`, then the view
  });
});
