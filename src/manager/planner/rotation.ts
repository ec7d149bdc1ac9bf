// Key rotation as a planned sequence (issue 30, docs/adr/0029). When the Secret gives a staked
// validator a new key (or moves its key to another id, or removes it), its pod's node still signs
// with the old one until it restarts, and the old address is still a staked row. The manager:
//   1. unstakes the old address, signed with the old key — held in memory since the Secret changed
//      (keys/key-store.ts), or still in the Secret under another id — while its node votes on;
//   2. once that row is out of the set, restarts the pod, so that its node loads the new key (the
//      stale-key restart, docs/adr/0022, now told by the node which key it holds);
//   3. stakes the new address (the decision table's stake, paced).
// Level-triggered: each step is read back from the chain (the row's status), the node (which key
// it signs with) and the journal (the unstake's action record, the former keys' addresses), so a
// restarted manager goes on where it was and sends nothing twice. The journal holds addresses and
// steps, never a key: a manager that starts after the change cannot sign the old unstake, and the
// row is reported ORPHANED — with the quorum's arithmetic and the way out — and never counted as a
// voter. On a chain whose unstaked rows stay in the quorum or whose late joiners never vote (V1)
// a rotation would leave the old row counted and the new one silent for good: it is refused.
import type { ChainCapabilities, ChainStatus, KeyEntry, LastStake, ValidatorId } from '../model.ts';
import { isMemberRow, signersByAddress, type SignerInput, type SigningPod } from './signers.ts';

export interface RotationInput extends SignerInput {
  readonly keys: {
    get(id: ValidatorId): KeyEntry | undefined;
    idOfAddress(address: string): ValidatorId | undefined;
    /** The id whose old key (held in memory since the Secret dropped it) has this address. */
    heldFor?(address: string): ValidatorId | undefined;
  };
  readonly chain: ReadonlyMap<string, { readonly address: string; readonly status: ChainStatus }>;
  readonly settings: { readonly capabilities?: ChainCapabilities | undefined };
  /** Per address, who staked it last (the journal): a row another id staked since is not ours. */
  readonly lastStakes?: ReadonlyMap<string, LastStake> | undefined;
}

/** Who holds the key of a rotation's old address. */
export type KeyHolder = 'secret' | 'memory' | 'none';

export interface Rotation {
  readonly id: ValidatorId;
  /** The old address: a member row of the set. */
  readonly from: string;
  /** The address of the id's key now (undefined: the key was removed, or is not valid now). */
  readonly to: string | undefined;
  readonly holder: KeyHolder;
  /** The id's pod, when its node is known to sign with `from`. */
  readonly signer: SigningPod | undefined;
  /** The chain cannot carry a rotation (V1): the old row would stay counted, the new one silent. */
  readonly refused: boolean;
}

/**
 * The addresses `id` held before its current key, newest first — except those another id has
 * staked since, and those another id held first and holds again (borrowed): those rows are the
 * other id's. Soak seed 324200:
 * 004 had held 003's key for five seconds (a move undone) and, a minute later, when 003 staked its
 * own key again, 004 "rotated off" it and unstaked 003's row (twice in one run). What the journal
 * says decides (its committed stakes, by id), so a restarted manager judges the same; a row
 * nobody staked since (a moved key, a genesis row) stays the former holder's rotation.
 */
export function formerAddresses(
  input: Pick<RotationInput, 'keys' | 'formerKeys' | 'keysSeen' | 'lastStakes'>,
  id: ValidatorId,
): string[] {
  const out: { address: string; got: number; since: number }[] = [
    ...(input.formerKeys?.get(id) ?? []),
  ]
    .reverse()
    .map((f) => ({ address: f.address, got: f.observedAt, since: f.replacedAt }));
  // A key removed from the Secret: its last address is the observation's, not a former one.
  const seen = input.keysSeen?.get(id);
  if (input.keys.get(id) === undefined && seen !== undefined)
    out.unshift({ address: seen.address, got: seen.observedAt, since: seen.observedAt });
  return out
    .filter(({ address, got, since }) => {
      const staker = input.lastStakes?.get(address);
      if (staker !== undefined && staker.id !== id && staker.at > since) return false;
      // Borrowed: the id that holds this key now had it since before this id got it (a
      // duplicate, soak seed 324200 action 286: 004 had 002's key for three seconds and later
      // unstaked 002's row while 002's pod restarted). The row is the lender's; if this id's
      // node loaded the key meanwhile, the stale-key restart takes it back to its own.
      const holder = input.keys.idOfAddress(address);
      const held = holder === undefined ? undefined : input.keysSeen?.get(holder);
      return !(holder !== id && held?.address === address && held.observedAt <= got);
    })
    .map((f) => f.address);
}

/**
 * The rotation `id` is in, or undefined: one of its former keys whose row is still a member of the
 * set, that no other id has staked since (`formerAddresses`) and that no other id's node signs (a
 * moved key whose new owner's node signs it is the new owner's). The newest such key wins.
 */
export function rotationOf(
  input: RotationInput,
  id: ValidatorId,
  signers: () => ReadonlyMap<string, readonly SigningPod[]> = () => signersByAddress(input),
): Rotation | undefined {
  const entry = input.keys.get(id);
  const to = entry?.ok === true ? entry.key.address : undefined;
  for (const from of formerAddresses(input, id)) {
    if (from === to || !isMemberRow(input.chain.get(from))) continue;
    const pods = signers().get(from) ?? [];
    if (pods.some((p) => p.id !== id)) continue;
    const holder: KeyHolder =
      input.keys.idOfAddress(from) !== undefined
        ? 'secret'
        : input.keys.heldFor?.(from) !== undefined
          ? 'memory'
          : 'none';
    const caps = input.settings.capabilities;
    const refused = !(caps?.lateJoinersVote ?? true) || !(caps?.unstakeLeavesQuorum ?? true);
    return { id, from, to, holder, signer: pods.find((p) => p.id === id), refused };
  }
  return undefined;
}
