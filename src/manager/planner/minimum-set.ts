// The minimum validator set: the manager never unstakes below it. Scaling to 0, a deleted
// StatefulSet or a careless `kubectl scale` stops pods; it must not destroy the chain, whose state
// lives in the staked set. The validators kept are reported `held` (BELOW_MINIMUM_SET) and the
// chain resumes when their pods return. Default: a quorum of the genesis set (> 2/3 of it).
import { ActionKind, ChainStatus, type ActionRecord, type ValidatorId } from '../model.ts';
import { isVoting, type VotingInput } from './voting.ts';

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
 * The minimum in force: the configured size (or, for `auto`, a quorum of the genesis set), lowered
 * by an operator's forced scale recorded on the StatefulSet. Undefined while `auto` cannot be
 * worked out yet (the genesis set not read): then nothing is unstaked.
 */
export function resolveMinimumSet(options: {
  configured: number | 'auto';
  genesisCount: number | undefined;
  /** `cluster-manager.dev/minimum-set` of a forced scale, if any. */
  forced: number | undefined;
}): MinimumSet | undefined {
  const { configured, genesisCount, forced } = options;
  let base: MinimumSet | undefined;
  if (configured !== 'auto') base = { size: configured, source: `CM_MIN_VALIDATORS=${configured}` };
  else if (genesisCount !== undefined)
    base = {
      size: quorumOf(genesisCount),
      source: `a quorum of the ${genesisCount} genesis validator(s)`,
    };
  if (forced !== undefined && (base === undefined || forced < base.size))
    return { size: forced, source: `lowered to ${forced} by a forced scale` };
  return base;
}

export interface MinimumSetInput extends VotingInput {
  readonly keys: { idOfAddress(address: string): ValidatorId | undefined };
  readonly chain: ReadonlyMap<string, { readonly address: string; readonly status: ChainStatus }>;
  readonly open: ReadonlyMap<ValidatorId, ActionRecord>;
  readonly mempool: ReadonlyMap<string, { readonly kind: ActionKind | undefined }>;
  readonly minimumSet: MinimumSet | undefined;
}

export interface MinimumSetVerdict {
  /** Staked rows on chain now. */
  readonly staked: number;
  /** Of those, rows whose unstake is already on its way. */
  readonly leaving: number;
  /** Candidates that may be unstaked now. */
  readonly allowed: ReadonlySet<ValidatorId>;
  /** Candidates kept to hold the minimum (reported `held`). */
  readonly held: ReadonlySet<ValidatorId>;
}

/**
 * Splits the validators the rule would unstake (`candidates`) into those that may go and those
 * kept so that at least `minimumSet.size` rows stay staked. The ones that go first are those that
 * do not vote (their leaving costs the chain nothing), then the highest ids (the StatefulSet's
 * order of removal). Deterministic, so every reconcile agrees on the same split.
 */
export function splitByMinimumSet(
  input: MinimumSetInput,
  candidates: readonly { id: ValidatorId; address: string }[],
): MinimumSetVerdict {
  let staked = 0;
  let leaving = 0;
  for (const row of input.chain.values()) {
    if (row.status !== ChainStatus.staked) continue;
    staked++;
    const id = input.keys.idOfAddress(row.address);
    if (
      (id !== undefined && input.open.get(id)?.kind === ActionKind.unstake) ||
      input.mempool.get(row.address)?.kind === ActionKind.unstake
    )
      leaving++;
  }
  if (input.minimumSet === undefined)
    return { staked, leaving, allowed: new Set(), held: new Set(candidates.map((c) => c.id)) };
  const room = Math.max(0, staked - leaving - input.minimumSet.size);
  const ordered = candidates
    .map((c) => ({ ...c, voting: isVoting(input, c.address, c.id) }))
    .sort((a, b) => Number(a.voting) - Number(b.voting) || b.id.localeCompare(a.id));
  return {
    staked,
    leaving,
    allowed: new Set(ordered.slice(0, room).map((c) => c.id)),
    held: new Set(ordered.slice(room).map((c) => c.id)),
  };
}
