// The pacing-aware floor of a scale-up: how soon a manager with no overhead of its own could have
// every joiner active, given the run's own block commit times and pod Ready times. It keeps the
// manager's consensus rule (src/manager/planner/pacing.ts): with V voters and nothing joining,
// at most floor((V − 1) / 2) newcomers may start joining at once (one when V ≤ 2), and a newcomer
// votes only once it has signed a block after the one that committed its stake. How many blocks
// after: one in the plain floor; with `firstVoteLags`, the number this run's chain took for that
// joiner. A certificate holds only a quorum, so a newcomer's first vote is often left out of the
// next block's (its node is the slowest, just started): that is consensus, which no manager
// shortens, and the manager's pacing rule must wait for it (an unproven validator may be down).

export interface ScaleUpRun {
  /** When the scale call was made (ms, any clock shared with the other fields). */
  readonly start: number;
  /** Voters before the scale. */
  readonly voters: number;
  /** When each joiner's pod was first Ready, in the order the manager stakes them (ids). */
  readonly readyAt: readonly number[];
  /** When each block was seen committed, ascending (must reach past the run's end). */
  readonly commits: readonly number[];
  /**
   * Per joiner (the order of `readyAt`): blocks from the block that committed its stake to the
   * first block it signed, as this run's chain recorded them (≥ 1). Absent: 1 for every joiner.
   */
  readonly firstVoteLags?: readonly number[];
  /**
   * When each block of `commits` (same index) was proposed, on the same clock: the proposer reaps
   * its mempool then, so a stake sent later lands in a later block even when this one is seen
   * committed after the send. Absent (or a gap): the block's commit time stands in for it.
   */
  readonly proposedAt?: readonly (number | undefined)[];
}

export interface PacingFloor {
  /** ms from `start` until the last joiner could be active. */
  readonly ms: number;
  /** Joiners per wave, in order. */
  readonly waves: readonly number[];
  /** Blocks from the first commit after `start` to the last joiner's first signed block. */
  readonly blocks: number;
}

/** Joiners that may start at once with `voters` voters and nothing else joining. */
export function waveSize(voters: number): number {
  if (voters <= 0) return 0;
  if (voters <= 2) return 1;
  return Math.floor((voters - 1) / 2);
}

/**
 * The index in `commits` of the block a transaction sent at `after` lands in: the first proposed
 * after it (`proposedAt`, same index; its commit time where that is unknown). -1 when the record
 * holds none.
 */
export function landingBlock(
  commits: readonly number[],
  proposedAt: readonly (number | undefined)[] | undefined,
  after: number,
): number {
  return commits.findIndex((t, i) => (proposedAt?.[i] ?? t) > after);
}

/**
 * The floor: each wave's stakes go out the moment its pods are Ready and the previous wave votes;
 * a stake sent at t lands in the first block proposed after t (committed after t, when proposal
 * times are not known), its validator signs the next block (or the block its lag names), and the
 * wave votes once that block is seen committed for its last member. Waves take the
 * earliest-Ready joiners.
 * Throws when `commits` ends before the model does (the run did not record enough blocks).
 */
export function pacingAwareFloor(run: ScaleUpRun): PacingFloor {
  const nextCommit = (after: number): number => {
    const index = landingBlock(run.commits, run.proposedAt, after);
    if (index < 0) throw new Error(`no block committed after ${after.toFixed(1)} ms in the record`);
    return index;
  };
  const pending = run.readyAt
    .map((ready, i) => ({ ready, lag: Math.max(1, run.firstVoteLags?.[i] ?? 1) }))
    .sort((a, b) => a.ready - b.ready);
  const waves: number[] = [];
  let voters = run.voters;
  let now = run.start;
  let lastIndex = -1;
  while (pending.length > 0) {
    const size = Math.min(waveSize(voters), pending.length);
    if (size === 0) throw new Error(`no joiner may start with ${voters} voters`);
    const wave = pending.splice(0, size);
    let votesAt = now;
    for (const { ready, lag } of wave) {
      const committed = nextCommit(Math.max(now, ready));
      const signed = committed + lag;
      if (signed >= run.commits.length) throw new Error('the record ends before the model does');
      lastIndex = Math.max(lastIndex, signed);
      votesAt = Math.max(votesAt, run.commits[signed] ?? Number.NaN);
    }
    waves.push(size);
    voters += size;
    now = votesAt;
  }
  const first = run.commits.findIndex((t) => t > run.start);
  return { ms: now - run.start, waves, blocks: lastIndex - first + 1 };
}
