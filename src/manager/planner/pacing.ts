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
// member able to vote did — when that is 0, waiting helps nothing.
import {
  ActionKind,
  ChainStatus,
  type ActionRecord,
  type ChainCapabilities,
  type ValidatorId,
} from '../model.ts';
import { hasProvenItself, isVoting, type VotingInput } from './voting.ts';

export interface PacingInput extends VotingInput {
  readonly settings: VotingInput['settings'] & {
    /** Undefined: the intended chain (late joiners vote, unstaked rows leave the quorum). */
    readonly capabilities?: ChainCapabilities | undefined;
  };
  readonly keys: { idOfAddress(address: string): ValidatorId | undefined };
  readonly chain: ReadonlyMap<string, { readonly address: string; readonly status: ChainStatus }>;
  readonly open: ReadonlyMap<ValidatorId, ActionRecord>;
  readonly mempool: ReadonlyMap<string, { readonly kind: ActionKind | undefined }>;
}

export interface PacingBudget {
  /** Members that vote now and stay. */
  readonly voting: number;
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
}

export function pacingBudget(input: PacingInput): PacingBudget {
  const caps = input.settings.capabilities;
  const rowsLeaveQuorum = caps?.unstakeLeavesQuorum ?? true;
  const lateJoinersVote = caps?.lateJoinersVote ?? true;
  let voting = 0;
  let members = 0;
  let able = 0;
  for (const row of input.chain.values()) {
    if (rowsLeaveQuorum && row.status !== ChainStatus.staked) continue;
    const id = input.keys.idOfAddress(row.address);
    const votes = row.status === ChainStatus.staked && isVoting(input, row.address, id);
    // A validator on its way out (unwanted, or its unstake sent) votes only until its unstake
    // commits: the joiners must fit the set that stays. Until then a silent one is a member.
    const leaving =
      (id !== undefined &&
        (input.desired.validators.get(id)?.wanted === false ||
          input.open.get(id)?.kind === ActionKind.unstake)) ||
      input.mempool.get(row.address)?.kind === ActionKind.unstake;
    if (leaving && votes && rowsLeaveQuorum) continue;
    members++;
    if (votes && !leaving) voting++;
    if (
      !leaving &&
      row.status === ChainStatus.staked &&
      (votes || hasProvenItself(input, row.address, id))
    )
      able++;
  }
  for (const action of input.open.values()) if (action.kind === ActionKind.stake) members++;
  for (const [address, tx] of input.mempool) {
    const id = input.keys.idOfAddress(address);
    if (tx.kind === ActionKind.stake && (id === undefined || !input.open.has(id))) members++;
  }
  let budget = Math.max(0, Math.floor((3 * voting - 2 * members - 1) / 2));
  let ceiling = Math.max(budget, Math.floor((3 * able - 2 * members - 1) / 2));
  if (lateJoinersVote && budget === 0 && voting >= 1 && voting <= 2 && members === voting) {
    budget = 1;
    ceiling = Math.max(ceiling, 1);
  }
  // `ceiling` is for chains whose late joiners never vote: a refusal there may be for good.
  return { voting, members, silent: members - voting, budget, ceiling };
}
