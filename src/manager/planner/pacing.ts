// Consensus-safe pacing: how many validators may start joining now. BFT commits a block with
// votes from more than 2/3 of the set. With V voters among N members, k newcomers that do not vote
// yet keep the chain live only while V > 2(N + k)/3, i.e. k < (3V − 2N)/2. Every member that does
// not vote (joining, silent, its pod gone) counts in N and not in V. A set of one or two voters
// cannot absorb even one silent newcomer, yet must be able to grow: it takes one synced validator
// at a time, when nothing else is joining (the newcomer's own node is synced, so it votes at once).
//
// The chain's capabilities change the count. Where unstaking does not take a row out of the
// quorum (V1), every row ever staked is a member, whatever its status, and a leaving voter is a
// silent member once gone. Where late joiners never vote (V1: no state sync), a newcomer is silent
// for good: no set grows by a synced newcomer, and `ceiling` says how many could join if every
// member able to vote did — when that is 0, waiting helps nothing. Where the leader's own vote does
// not count (V1), the voters give one vote less (planner/quorum.ts): four genesis voters carry no
// silent fifth row there.
//
// A row counts as a voter only while a key the manager knows of stands behind it (the keys
// source's, or an old key held for a rotation): a row whose key nobody holds (unmanaged, orphaned
// by a key change) may still be signed by a node that started with it, but that node loses it at
// its next restart: it is a silent member here (docs/design.md §Safety rules: a row whose key nobody holds is
// reported, never counted as a voter).
import {
  ActionKind,
  ChainStatus,
  type ActionRecord,
  type ChainCapabilities,
  type ValidatorId,
} from '../model.ts';
import { silentRoom, votesGiven } from './quorum.ts';
import { canVote, isVoting, type VotingInput } from './voting.ts';

export interface PacingInput extends VotingInput {
  readonly settings: VotingInput['settings'] & {
    /** Undefined: the intended chain (late joiners vote, unstaked rows leave the quorum). */
    readonly capabilities?: ChainCapabilities | undefined;
  };
  readonly keys: {
    idOfAddress(address: string): ValidatorId | undefined;
    /**
     * The id whose old key (held in memory for its rotation, keys/key-store.ts) has this address:
     * its row votes until the rotation unstakes it, a leaving member.
     */
    heldFor?(address: string): ValidatorId | undefined;
  };
  readonly chain: ReadonlyMap<string, { readonly address: string; readonly status: ChainStatus }>;
  readonly open: ReadonlyMap<ValidatorId, ActionRecord>;
  readonly mempool: ReadonlyMap<string, { readonly kind: ActionKind | undefined }>;
}

export interface PacingBudget {
  /** Members that vote now and stay. */
  readonly voting: number;
  /** The votes they give a height (one less where the leader's own vote does not count). */
  readonly votes: number;
  /** Members once the leaving ones are out: staying rows, silent leavers, pending stakes. */
  readonly members: number;
  /** Members that do not vote (joining, silent or pending). */
  readonly silent: number;
  /** New stakes that may go out now. */
  readonly budget: number;
  /**
   * New stakes that could go out if every member able to vote did (those that have signed since
   * their stake and are not leaving). Below `budget` never; equal to it where nothing is silent.
   */
  readonly ceiling: number;
  /** Members able to vote (signed since their stake, not leaving), whether they vote now or not. */
  readonly able: number;
}

export function pacingBudget(input: PacingInput): PacingBudget {
  const caps = input.settings.capabilities;
  const rowsLeaveQuorum = caps?.unstakeLeavesQuorum ?? true;
  const lateJoinersVote = caps?.lateJoinersVote ?? true;
  let voting = 0;
  let members = pendingStakes(input);
  let able = 0;
  for (const row of input.chain.values()) {
    const standing = rowStanding(input, row, rowsLeaveQuorum);
    if (standing === undefined) continue;
    members++;
    if (standing.voting) voting++;
    if (standing.able) able++;
  }
  let budget = Math.max(0, silentRoom(voting, members, caps));
  let ceiling = Math.max(budget, silentRoom(able, members, caps));
  if (lateJoinersVote && budget === 0 && voting >= 1 && voting <= 2 && members === voting) {
    budget = 1;
    ceiling = Math.max(ceiling, 1);
  }
  // `ceiling` is for chains whose late joiners never vote: a refusal there may be for good.
  return {
    voting,
    votes: votesGiven(voting, caps),
    members,
    silent: members - voting,
    budget,
    ceiling,
    able,
  };
}

/**
 * What one chain row is to pacing: undefined when it is no member (a row out of the quorum, or a
 * voter on its way out where leaving takes it out); else whether it votes now and stays, and
 * whether it is able to vote (signed since its stake, not leaving).
 */
function rowStanding(
  input: PacingInput,
  row: { readonly address: string; readonly status: ChainStatus },
  rowsLeaveQuorum: boolean,
): { voting: boolean; able: boolean } | undefined {
  if (rowsLeaveQuorum && row.status !== ChainStatus.staked) return undefined;
  const id = input.keys.idOfAddress(row.address);
  const held = input.keys.heldFor?.(row.address);
  // No key behind it: whoever signs it now loses it at a restart (a silent member, below).
  const keyed = id !== undefined || held !== undefined;
  const votes = keyed && row.status === ChainStatus.staked && isVoting(input, row.address, id);
  // A validator on its way out (unwanted, or its unstake sent, or an old key a rotation unstakes)
  // votes only until its unstake commits: the joiners must fit the set that stays. Until then a
  // silent one is a member.
  const leaving = isLeaving(input, row.address, id, held);
  if (leaving && votes && rowsLeaveQuorum) return undefined;
  const able =
    keyed &&
    !leaving &&
    row.status === ChainStatus.staked &&
    (votes || canVote(input, row.address, id));
  return { voting: votes && !leaving, able };
}

/** The row at `address` is on its way out: unwanted, its unstake sent, or a rotation's old key. */
function isLeaving(
  input: PacingInput,
  address: string,
  id: ValidatorId | undefined,
  held: ValidatorId | undefined,
): boolean {
  if (id === undefined && held !== undefined) return true;
  if (
    id !== undefined &&
    (input.desired.validators.get(id)?.wanted === false ||
      input.open.get(id)?.kind === ActionKind.unstake)
  )
    return true;
  return input.mempool.get(address)?.kind === ActionKind.unstake;
}

/** Stakes sent and not committed: the journal's open ones, and any other in the mempool. */
function pendingStakes(input: PacingInput): number {
  let pending = 0;
  for (const action of input.open.values()) if (action.kind === ActionKind.stake) pending++;
  for (const [address, tx] of input.mempool) {
    const id = input.keys.idOfAddress(address);
    if (tx.kind === ActionKind.stake && (id === undefined || !input.open.has(id))) pending++;
  }
  return pending;
}

/**
 * A row that votes now: it signed recently, or it is one that votes whenever its node is up
 * (`canVote`) and its pod is Ready (a young chain's few certificates hold only a quorum each).
 */
function votesNow(input: PacingInput, address: string, id: ValidatorId | undefined): boolean {
  if (isVoting(input, address, id)) return true;
  const pod = id === undefined ? undefined : input.desired.validators.get(id)?.pod;
  return pod?.ready === true && canVote(input, address, id);
}

/**
 * The quorum as it stands now (the scaler's refusals read it): the rows it counts — every staked
 * row, or every row where unstaked rows stay in it (V1), plus the stakes on their way — and the
 * addresses of those that vote now with a key the manager knows of behind them.
 */
export function quorumNow(input: PacingInput): { rows: number; voters: Set<string> } {
  const rowsLeaveQuorum = input.settings.capabilities?.unstakeLeavesQuorum ?? true;
  let rows = 0;
  const voters = new Set<string>();
  for (const row of input.chain.values()) {
    if (rowsLeaveQuorum && row.status !== ChainStatus.staked) continue;
    rows++;
    const id = input.keys.idOfAddress(row.address);
    const keyed = id !== undefined || input.keys.heldFor?.(row.address) !== undefined;
    if (keyed && row.status === ChainStatus.staked && votesNow(input, row.address, id))
      voters.add(row.address);
  }
  for (const action of input.open.values()) if (action.kind === ActionKind.stake) rows++;
  for (const [address, tx] of input.mempool) {
    const id = input.keys.idOfAddress(address);
    if (tx.kind === ActionKind.stake && (id === undefined || !input.open.has(id))) rows++;
  }
  return { rows, voters };
}
