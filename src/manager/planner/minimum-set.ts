// The minimum validator set: the manager never unstakes below it. Scaling to 0, a deleted
// StatefulSet or a careless `kubectl scale` stops pods; it must not destroy the chain, whose state
// lives in the staked set. The validators kept are reported `held` (BELOW_MINIMUM_SET) and the
// chain resumes when their pods return. Default: the voters a quorum of the genesis set needs.
//
// It counts rows that vote — a staked row with a key the keys source holds, which a node started
// from that source signs (on a chain without state sync, only one that has signed since its
// stake) — never a silent or orphaned row: a row whose key nobody holds is signed by no node once
// its pod restarts, and keeping it "for the minimum" kept a member that never votes (issue 30's
// halt after `kubectl scale 0` and back). And it keeps the exact quorum rule (planner/quorum.ts):
// the voters that stay must commit among every row that stays counted — the silent ones, and on a
// chain that keeps unstaked rows in its quorum (V1), the unstaked ones too.
import {
  ActionKind,
  ChainStatus,
  type ActionRecord,
  type ChainCapabilities,
  type ValidatorId,
} from '../model.ts';
import { commits, leaderVoteCounts, quorumArithmetic, votersNeeded } from './quorum.ts';
import { canVote, isVoting, type VotingInput } from './voting.ts';

/** The size in force, and where it comes from (shown in reasons). */
export interface MinimumSet {
  readonly size: number;
  readonly source: string;
}

/** The fewest of `count` validators whose votes commit a block: more than two thirds. */
export function quorumOf(count: number): number {
  return count <= 0 ? 0 : Math.floor((2 * count) / 3) + 1;
}

/**
 * The minimum in force: the configured size (or, for `auto`, the voters a quorum of the genesis
 * set needs — one more where the leader's own vote does not count), lowered by an operator's forced
 * scale recorded on the StatefulSet. Undefined while `auto` cannot be worked out yet (the genesis
 * set not read): then nothing is unstaked.
 */
export function resolveMinimumSet(options: {
  configured: number | 'auto';
  genesisCount: number | undefined;
  /** `cluster-manager.dev/minimum-set` of a forced scale, if any. */
  forced: number | undefined;
  capabilities?: Pick<ChainCapabilities, 'leaderVoteCounts'> | undefined;
}): MinimumSet | undefined {
  const { configured, genesisCount, forced, capabilities } = options;
  let base: MinimumSet | undefined;
  if (configured !== 'auto') base = { size: configured, source: `CM_MIN_VALIDATORS=${configured}` };
  else if (genesisCount !== undefined)
    base = {
      size: votersNeeded(genesisCount, capabilities),
      source: `a quorum of the ${genesisCount} genesis validator(s)${leaderVoteCounts(capabilities) ? '' : ", the leader's own vote not counted"}`,
    };
  if (forced !== undefined && (base === undefined || forced < base.size))
    return { size: forced, source: `lowered to ${forced} by a forced scale` };
  return base;
}

export interface MinimumSetInput extends VotingInput {
  readonly keys: {
    idOfAddress(address: string): ValidatorId | undefined;
    /** The id whose old key (held in memory for its rotation) has this address. */
    heldFor?(address: string): ValidatorId | undefined;
  };
  readonly chain: ReadonlyMap<string, { readonly address: string; readonly status: ChainStatus }>;
  readonly open: ReadonlyMap<ValidatorId, ActionRecord>;
  readonly mempool: ReadonlyMap<string, { readonly kind: ActionKind | undefined }>;
  readonly minimumSet: MinimumSet | undefined;
  readonly settings: VotingInput['settings'] & {
    readonly capabilities?: ChainCapabilities | undefined;
  };
}

export interface MinimumSetVerdict {
  /** Staked rows that vote (or will, once their pods are back) and stay after the allowed go. */
  readonly voters: number;
  /** Rows the quorum counts once the allowed go (silent and orphaned ones included). */
  readonly rows: number;
  /** Candidates that may be unstaked now. */
  readonly allowed: ReadonlySet<ValidatorId>;
  /** Candidates kept to hold the minimum (reported `held`). */
  readonly held: ReadonlySet<ValidatorId>;
  /**
   * What keeps the first held one — the size, or the quorum among the rows that stay — with the
   * voters and rows its unstake would have left.
   */
  readonly limit:
    { readonly by: 'size' | 'quorum'; readonly voters: number; readonly rows: number } | undefined;
  /** Key rotations held until another's is done (a key moved from that id): id → that id. */
  readonly waitsFor?: ReadonlyMap<ValidatorId, ValidatorId> | undefined;
}

/**
 * True when the row counts toward the minimum set: staked, its key in the keys source (a node
 * started from it signs the row), and on a chain without state sync, a genesis validator or one
 * proven since its stake. A row whose old key the manager holds only for a rotation counts while
 * it votes now (its pod signs it until it restarts on the new key); one whose key nobody holds
 * (orphaned, unmanaged) never counts.
 */
export function votesWhenUp(input: MinimumSetInput, address: string): boolean {
  const row = input.chain.get(address);
  if (row?.status !== ChainStatus.staked) return false;
  const id = input.keys.idOfAddress(address);
  if (id !== undefined) return canVote(input, address, id);
  return input.keys.heldFor?.(address) !== undefined && isVoting(input, address, undefined);
}

/** The voters and rows that stay once every unstake already on its way commits. */
export function quorumStanding(
  input: MinimumSetInput,
  alsoLeaving: (address: string, id: ValidatorId | undefined) => boolean = () => false,
): { voters: number; rows: number } {
  const rowsLeave = input.settings.capabilities?.unstakeLeavesQuorum ?? true;
  let voters = 0;
  let rows = 0;
  for (const row of input.chain.values()) {
    const staked = row.status === ChainStatus.staked;
    if (rowsLeave && !staked) continue;
    const id = input.keys.idOfAddress(row.address);
    const leaving =
      staked &&
      ((id !== undefined && input.open.get(id)?.kind === ActionKind.unstake) ||
        input.mempool.get(row.address)?.kind === ActionKind.unstake ||
        alsoLeaving(row.address, id));
    if (!(leaving && rowsLeave)) rows++;
    if (!leaving && votesWhenUp(input, row.address)) voters++;
  }
  return { voters, rows };
}

/**
 * Splits the validators the rule would unstake (`candidates`) into those that may go and those
 * kept so that at least `minimumSet.size` voting rows stay staked and they still commit among the
 * rows that stay. The ones that go first are those that do not vote (their leaving costs the chain
 * nothing), then the highest ids (the StatefulSet's order of removal). Those in `waiting` are
 * held whatever the count (a key rotation onto a key another id's rotation still frees: its pod
 * can restart onto it only once that one's is done, so its unstake first would take a voter the
 * other needs — soak seeds 28461, 245363). Deterministic, so every reconcile agrees on the split.
 */
export function splitByMinimumSet(
  input: MinimumSetInput,
  candidates: readonly { id: ValidatorId; address: string }[],
  waiting: ReadonlySet<ValidatorId> = new Set(),
): MinimumSetVerdict {
  let { voters, rows } = quorumStanding(input);
  if (input.minimumSet === undefined)
    return {
      voters,
      rows,
      allowed: new Set(),
      held: new Set(candidates.map((c) => c.id)),
      limit: undefined,
    };
  const caps = input.settings.capabilities;
  const rowsLeave = caps?.unstakeLeavesQuorum ?? true;
  const ordered = candidates
    .map((c) => ({ ...c, voting: isVoting(input, c.address, c.id) }))
    .sort((a, b) => Number(a.voting) - Number(b.voting) || b.id.localeCompare(a.id));
  const allowed = new Set<ValidatorId>();
  const held = new Set<ValidatorId>();
  let limit: MinimumSetVerdict['limit'];
  for (const c of ordered) {
    if (waiting.has(c.id)) {
      held.add(c.id);
      continue;
    }
    const counted = votesWhenUp(input, c.address);
    const nextVoters = counted ? voters - 1 : voters;
    const nextRows = rowsLeave ? rows - 1 : rows;
    const sizeHolds = !counted || nextVoters >= input.minimumSet.size;
    // A silent row's unstake never costs a vote; a voter's must leave a quorum behind (unless the
    // operator forced the minimum down to nothing: a forced scale 0 stops the chain on purpose).
    const quorumHolds =
      !counted || input.minimumSet.size === 0 || commits(nextVoters, nextRows, caps);
    if (sizeHolds && quorumHolds) {
      allowed.add(c.id);
      voters = nextVoters;
      rows = nextRows;
    } else {
      held.add(c.id);
      limit ??= { by: sizeHolds ? 'quorum' : 'size', voters: nextVoters, rows: nextRows };
    }
  }
  return { voters, rows, allowed, held, limit };
}

/** Why a held validator is kept, in words (the reason's middle part). */
export function heldBecause(
  verdict: MinimumSetVerdict,
  minimum: MinimumSet,
  caps: Pick<ChainCapabilities, 'leaderVoteCounts'> | undefined,
): string {
  const { voters, rows } = verdict.limit ?? { voters: verdict.voters - 1, rows: verdict.rows };
  if (verdict.limit?.by === 'quorum')
    return `unstaking it would leave ${voters} voting validator(s) among ${rows} counted row(s), and the chain would halt (${quorumArithmetic(voters, rows, caps)})`;
  return `unstaking it would leave ${voters} staked validator(s) that vote, fewer than the minimum of ${minimum.size} (${minimum.source})`;
}
