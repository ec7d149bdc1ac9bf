// Who votes: a staked row counts as a voter only while it keeps signing committed certificates.
// Pacing and the minimum set read this; a row that is staked but silent is a member that BFT must
// carry (docs/design.md §Safety rules, S7: a staked row that does not vote counts against BFT).
import type { ChainCapabilities, DesiredState, ValidatorId } from '../model.ts';

export interface VotingInput {
  /** Latest committed height the chain view has read. */
  readonly height: number;
  /** Address → highest height at which it signed a committed block's certificate. */
  readonly signers: ReadonlyMap<string, number>;
  /** Height at which each validator's latest applied stake committed. */
  readonly stakeHeights: ReadonlyMap<ValidatorId, number>;
  readonly desired: DesiredState;
  readonly settings: { readonly votingWindow: number };
  /**
   * The genesis set's addresses, once read: on a chain without state sync they are the only rows
   * that vote, signed or not yet (a young chain's first certificates hold only a quorum).
   */
  readonly genesis?: ReadonlySet<string> | undefined;
}

/** True when `address` has signed a committed certificate after its latest stake. */
export function hasProvenItself(
  input: Pick<VotingInput, 'signers' | 'stakeHeights'>,
  address: string,
  id: ValidatorId | undefined,
): boolean {
  const signed = input.signers.get(address);
  if (signed === undefined) return false;
  const since = id === undefined ? undefined : input.stakeHeights.get(id);
  return since === undefined || signed > since;
}

/**
 * True when the row votes now: it has proven itself since its stake, signed one of the last
 * `votingWindow` certificates (a certificate holds only a quorum, so a live member may miss a few),
 * and, when the cluster knows its pod, that pod is Ready (a stopped node votes no more).
 */
export function isVoting(
  input: VotingInput,
  address: string,
  id: ValidatorId | undefined,
): boolean {
  if (!hasProvenItself(input, address, id)) return false;
  const signed = input.signers.get(address) ?? -1;
  if (signed <= input.height - input.settings.votingWindow) return false;
  const entry = id === undefined ? undefined : input.desired.validators.get(id);
  // No pod of the cluster maps to it (unmanaged, or run elsewhere): its signatures are all we have.
  if (entry === undefined) return true;
  return entry.pod?.ready === true;
}

/**
 * True when the row votes whenever its node is up: always where late joiners sync and vote; on a
 * chain without state sync (V1) only a genesis validator, or one that has signed since its stake.
 * (Whether a key stands behind it, and whether its node is up, is the caller's question.)
 */
export function canVote(
  input: Pick<VotingInput, 'signers' | 'stakeHeights' | 'genesis'> & {
    readonly settings: { readonly capabilities?: ChainCapabilities | undefined };
  },
  address: string,
  id: ValidatorId | undefined,
): boolean {
  if (input.settings.capabilities?.lateJoinersVote ?? true) return true;
  return input.genesis?.has(address) === true || hasProvenItself(input, address, id);
}
