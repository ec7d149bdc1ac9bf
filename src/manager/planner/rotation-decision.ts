// Decisions about an address that is not the id's current key: an open action (possibly for a
// rotation's old address), a key rotation (S11), and the orphaned row nobody holds a key for.
import { ActionKind, type ChainStatus, DecisionCode } from '../model.ts';
import { Phase, heldByHook, unstakeFingerprint, type Draft, type PlanInput } from './decision.ts';
import { quorumStanding, votesWhenUp } from './minimum-set.ts';
import { commits, quorumArithmetic } from './quorum.ts';
import type { Rotation } from './rotation.ts';

/** The decision of a validator with an open action: staking or unstaking, waiting for it. */
export function openAction(draft: Draft, input: PlanInput): Draft | undefined {
  const open = draft.id === undefined ? undefined : input.open.get(draft.id);
  if (open === undefined) return undefined;
  const phase = open.kind === ActionKind.stake ? Phase.staking : Phase.unstaking;
  const tx =
    open.txHash === undefined ? 'a transaction' : `transaction ${open.txHash.slice(0, 12)}…`;
  const of = open.address === draft.address ? '' : ` of its old address ${open.address}`;
  return {
    ...draft,
    phase,
    ...(open.address === draft.address ? {} : { subject: open.address }),
    reason: `${open.kind}${of} sent at height ${open.sentHeight ?? open.preparedHeight}; waiting for ${tx} to commit`,
  };
}

/**
 * A validator in a key rotation (planner/rotation.ts): its old address is unstaked with the old
 * key first; refused on a chain that cannot carry it; orphaned when nobody holds the old key.
 */
export function decideRotation(draft: Draft, rotation: Rotation, input: PlanInput): Draft {
  const { from } = rotation;
  const row = input.chain.get(from);
  const lastSigned = input.signers.get(from);
  const signing =
    lastSigned !== undefined && lastSigned > input.height - input.settings.votingWindow;
  const who =
    rotation.signer === undefined ? 'its pod' : `the node of pod ${rotation.signer.pod.name}`;
  const base: Draft = {
    ...draft,
    subject: from,
    phase: signing ? Phase.active : Phase.staked,
    signing: false,
  };
  const changed =
    rotation.to === undefined
      ? 'its key was removed from the Secret'
      : `the Secret gives it a new key (address ${rotation.to})`;
  if (rotation.refused)
    return {
      ...base,
      code: DecisionCode.rotationRefused,
      reason: `ROTATION_REFUSED: ${changed}, but on this chain its old row ${from} would stay counted in the quorum and a new row would never vote (${rotationArithmetic(input, from)}): nothing is done, and ${who} goes on signing with the old key; put the old key back under its id`,
    };
  const key = rotation.holder === 'none' ? undefined : input.keys.signingKey?.(from);
  if (key === undefined)
    return {
      ...base,
      phase: Phase.failed,
      code: DecisionCode.orphaned,
      reason: orphanReason(from, `${draft.id ?? '?'}'s key until it changed`, row?.status, input),
    };
  const fingerprint = unstakeFingerprint(key);
  const latest = draft.id === undefined ? undefined : input.latest.get(draft.id);
  if (latest?.terminal === true && latest.fingerprint === fingerprint)
    return {
      ...base,
      phase: Phase.failed,
      fingerprint,
      code: DecisionCode.actionFailed,
      reason: `${latest.errorCode ?? 'FAILED'}: ${latest.error ?? 'unstake failed'}`,
    };
  const pooled = input.mempool.get(from);
  if (pooled !== undefined)
    return {
      ...base,
      phase: pooled.kind === ActionKind.unstake ? Phase.unstaking : base.phase,
      reason: `a ${pooled.kind ?? 'transaction'} of its old address ${from} (${pooled.hash.slice(0, 12)}…) is in the mempool`,
    };
  const held =
    rotation.holder === 'memory'
      ? 'the old key, held in memory'
      : 'its key, which the Secret holds under another id';
  return heldByHook(
    {
      ...base,
      action: ActionKind.unstake,
      fingerprint,
      reason: `key rotation: ${changed}; unstaking its old address ${from} with ${held}, while ${who} still signs with it; ${rotation.to === undefined ? 'then its pod may go' : 'then its pod restarts on the new key, and the new address is staked'}`,
    },
    input,
  );
}

/**
 * What a key change would do to the quorum on a chain that cannot carry a rotation: one row more
 * (the new address), and the old row's voter gone (its node restarts on a key that never votes).
 */
function rotationArithmetic(input: PlanInput, from: string): string {
  const { voters, rows } = quorumStanding(input);
  const after = votesWhenUp(input, from) ? voters - 1 : voters;
  return `${rows + 1} rows with ${after} voters: ${quorumArithmetic(after, rows + 1, input.settings.capabilities)}`;
}

/**
 * Why a member row whose key nobody holds is a problem, with the quorum's arithmetic and the way
 * out (the orphan of a key change the manager did not see, docs/adr/0029).
 */
export function orphanReason(
  address: string,
  whose: string,
  status: ChainStatus | undefined,
  input: PlanInput,
): string {
  const { voters, rows } = quorumStanding(input);
  const caps = input.settings.capabilities;
  const live = commits(voters, rows, caps);
  return `ORPHANED: row ${address} (${whose}) is ${status ?? 'staked'} on chain, and no key for it is held (the Secret changed while the manager was not running): it cannot be unstaked, and no rule counts it as a voter; the node that still signs with it stops at its next restart, and then ${quorumArithmetic(voters, rows, caps)}${live ? '' : ': the chain halts'}. The way out: put that key back in the Secret (the manager then unstakes the row and rotates properly), or unstake it with the key yourself`;
}
