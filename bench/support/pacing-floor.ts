// The pacing-aware floor of a scale-up: how soon a manager with no overhead of its own could have
// every joiner active, given the run's own block commit times and pod Ready times. It keeps the
// manager's consensus rule (src/manager/planner/pacing.ts): with V voters and nothing joining,
// at most floor((V − 1) / 2) newcomers may start joining at once (one when V ≤ 2), and a newcomer
// votes only once it has signed a block after the one that committed its stake.

export interface ScaleUpRun {
  /** When the scale call was made (ms, any clock shared with the other fields). */
  readonly start: number;
  /** Voters before the scale. */
  readonly voters: number;
  /** When each joiner's pod was first Ready, in the order the manager stakes them (ids). */
  readonly readyAt: readonly number[];
  /** When each block was seen committed, ascending (must reach past the run's end). */
  readonly commits: readonly number[];
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
 * The floor: each wave's stakes go out the moment its pods are Ready and the previous wave votes;
 * a stake sent at t lands in the first block committed after t, its validator signs the next
 * block, and the wave votes once its last member has. Waves take the earliest-Ready joiners.
 * Throws when `commits` ends before the model does (the run did not record enough blocks).
 */
export function pacingAwareFloor(run: ScaleUpRun): PacingFloor {
  const nextCommit = (after: number): number => {
    const index = run.commits.findIndex((t) => t > after);
    if (index < 0) throw new Error(`no block committed after ${after.toFixed(1)} ms in the record`);
    return index;
  };
  const pending = [...run.readyAt].sort((a, b) => a - b);
  const waves: number[] = [];
  let voters = run.voters;
  let now = run.start;
  let lastIndex = -1;
  while (pending.length > 0) {
    const size = Math.min(waveSize(voters), pending.length);
    if (size === 0) throw new Error(`no joiner may start with ${voters} voters`);
    const wave = pending.splice(0, size);
    let votesAt = now;
    for (const ready of wave) {
      const committed = nextCommit(Math.max(now, ready));
      const signed = committed + 1;
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
