// The exact quorum rule, one place for every rule that counts votes (pacing, the minimum set, the
// scaler's refusals, the reasons people read). A BFT height commits with votes from more than 2/3
// of the rows the chain counts. Where the leader's own vote does not reach it (Pocket V1: the leader
// sends its vote to itself through the P2P module, whose RainTree router drops a send to its own
// address, consensus/hotstuff_leader.go:96-102 and p2p/raintree/router.go:172-179, while the
// threshold stays `> 2/3 × len(validators)`, consensus/helpers.go:119-134), the *other* live voters
// must be more than 2/3 of all rows: with 4 rows all four must be up, and a fifth silent row halts
// the chain for good.
import type { ChainCapabilities } from '../model.ts';

/** What the rule reads of the chain's capabilities (undefined: the intended chain). */
export type QuorumCapabilities = Pick<ChainCapabilities, 'leaderVoteCounts'> | undefined;

/** The leader's own vote counts toward the quorum (undefined capabilities: yes). */
export function leaderVoteCounts(caps: QuorumCapabilities): boolean {
  return caps?.leaderVoteCounts ?? true;
}

/** Votes a height needs among `rows` rows: more than two thirds of them. */
export function votesNeeded(rows: number): number {
  return rows <= 0 ? 0 : Math.floor((2 * rows) / 3) + 1;
}

/** The votes `voters` live voters give a height: all of them, or all but the leader's. */
export function votesGiven(voters: number, caps: QuorumCapabilities): number {
  return Math.max(0, leaderVoteCounts(caps) ? voters : voters - 1);
}

/** The fewest live voters that commit a height among `rows` rows. */
export function votersNeeded(rows: number, caps: QuorumCapabilities): number {
  if (rows <= 0) return 0;
  return votesNeeded(rows) + (leaderVoteCounts(caps) ? 0 : 1);
}

/** True when `voters` live voters commit a height among `rows` rows (every row counted). */
export function commits(voters: number, rows: number, caps: QuorumCapabilities): boolean {
  return rows > 0 && votesGiven(voters, caps) >= votesNeeded(rows);
}

/**
 * The arithmetic in words: "5 rows need 4 votes besides the leader's; 4 voters give 3" (or, where
 * the leader's vote counts, "5 rows need 4 votes; 3 voters give 3").
 */
export function quorumArithmetic(voters: number, rows: number, caps: QuorumCapabilities): string {
  const besides = leaderVoteCounts(caps) ? '' : " besides the leader's";
  return `${rows} row${rows === 1 ? '' : 's'} need${rows === 1 ? 's' : ''} ${votesNeeded(rows)} vote${votesNeeded(rows) === 1 ? '' : 's'}${besides}; ${voters} voter${voters === 1 ? '' : 's'} give${voters === 1 ? 's' : ''} ${votesGiven(voters, caps)}`;
}

/**
 * How many more silent rows `voters` live voters can carry among `rows` rows and still commit:
 * the largest k with commits(voters, rows + k). Negative when they do not commit now.
 */
export function silentRoom(voters: number, rows: number, caps: QuorumCapabilities): number {
  // votesGiven > 2(rows + k)/3  ⇔  k < (3·given − 2·rows)/2
  return Math.ceil((3 * votesGiven(voters, caps) - 2 * rows) / 2) - 1;
}
