// Whether the chain survives a scale, judged before anything is changed (issue 29): a scale the
// chain cannot survive is refused at once, whatever the request's wait and drive say, with the
// arithmetic and the way out, and nothing is written. Two cases:
// - a scale-up on a chain whose late joiners never vote (V1: no state sync): every new row is
//   silent for good, and rows are never deleted, so a height that cannot commit with them never
//   will again. `force` does not lift this one: the halt would be permanent.
// - a scale-down whose leaving validators are voters the rows that stay need (V1 keeps every row
//   ever staked in its quorum, so an unstake takes a voter away and leaves its row counted; any
//   chain when silent or orphaned rows already eat the margin). `force` lifts it: the chain stops,
//   and resumes when the pods return.
import { ManagerError } from '../errors.ts';
import type { ChainCapabilities, ValidatorId } from '../model.ts';
import { commits, quorumArithmetic } from '../planner/quorum.ts';
import type { QuorumNow } from '../read-model.ts';

export interface SurvivalCheck {
  readonly replicas: number;
  readonly previous: number;
  readonly force: boolean;
  readonly capabilities: Pick<
    ChainCapabilities,
    'lateJoinersVote' | 'unstakeLeavesQuorum' | 'leaderVoteCounts'
  >;
  readonly quorum: QuorumNow;
  /** Ids a scale-up adds whose address has no row yet (each would be a new row). */
  readonly joining: readonly ValidatorId[];
  /**
   * Ids a scale-down removes, with the addresses their nodes sign with and whether their row is
   * staked (it will be unstaked).
   */
  readonly leaving: readonly {
    readonly id: ValidatorId;
    readonly addresses: readonly string[];
    readonly staked: boolean;
  }[];
}

/** The refusal a scale meets because the chain would halt, or undefined. */
export function survivalRefusal(check: SurvivalCheck): ManagerError | undefined {
  const { capabilities: caps, quorum } = check;
  const voters = quorum.voters.size;
  if (check.replicas > check.previous && !caps.lateJoinersVote && check.joining.length > 0) {
    const rows = quorum.rows + check.joining.length;
    if (commits(voters, rows, caps)) return undefined;
    return new ManagerError(
      'CHAIN_WOULD_HALT',
      `cannot scale to ${check.replicas}: on this chain a validator staked after genesis never votes (no state sync), so ${check.joining.join(', ')} would add ${check.joining.length} silent row(s), and ${quorumArithmetic(voters, rows, caps)}: the chain would halt for good (its rows are never deleted). Nothing was changed. The way out: start the chain with a larger genesis set`,
      { details: { rows, voters, replicas: check.replicas } },
    );
  }
  // Scaling to 0 stops every node on purpose: the minimum set answers that one (BELOW_MINIMUM_SET).
  if (check.replicas >= check.previous || check.force || check.replicas === 0) return undefined;
  const gone = new Set<string>();
  for (const l of check.leaving)
    for (const address of l.addresses) if (quorum.voters.has(address)) gone.add(address);
  if (gone.size === 0) return undefined;
  const unstaked = check.leaving.filter((l) => l.staked).length;
  const votersAfter = voters - gone.size;
  const rowsAfter = caps.unstakeLeavesQuorum ? quorum.rows - unstaked : quorum.rows;
  if (commits(votersAfter, rowsAfter, caps)) return undefined;
  const kept = caps.unstakeLeavesQuorum
    ? ''
    : ', and this chain keeps every row it ever staked in its quorum';
  return new ManagerError(
    'CHAIN_WOULD_HALT',
    `cannot scale to ${check.replicas}: ${check.leaving.map((l) => l.id).join(', ')} would leave, taking ${gone.size} voter(s) away${kept}: ${quorumArithmetic(votersAfter, rowsAfter, caps)}, so the chain would halt. Nothing was changed. The way out: keep the validators (a larger genesis set can lose more), or send force: true to stop the chain anyway (it resumes when their pods return)`,
    { details: { rows: rowsAfter, voters: votersAfter, replicas: check.replicas } },
  );
}
