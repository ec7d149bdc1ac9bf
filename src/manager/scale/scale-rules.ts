// The scaler's safety rules as pure functions: when a validator counts as gone from the set (a
// drain may remove its pod only then), and which scale requests are refused — below the minimum
// set, over a drain that is still running, or past a validator with a key problem — unless forced.
// One intent at a time: a scale never silently overrides another, and never a replicas value that
// someone else wrote (see Scaler, which checks the StatefulSet's replicas and resourceVersion).
import { ManagerError } from '../errors.ts';
import type { KeyEntry } from '../model.ts';
import { ChainStatus, type ActionRecord, type ChainValidator, type ValidatorId } from '../model.ts';
import type { MinimumSet } from '../planner/minimum-set.ts';

/** What the rules read about validators (the manager's keys, chain view and journal). */
export interface LeaveView {
  readonly keys: {
    get(id: ValidatorId): KeyEntry | undefined;
    /** The key's address now, or the one it had when last valid. */
    addressOf(id: ValidatorId): string | undefined;
    /** A key with this address the manager can sign with (the Secret's, or one held in memory). */
    signingKey?(address: string): unknown;
    /** The id whose old key, held in memory since the Secret dropped it, has this address. */
    heldFor?(address: string): ValidatorId | undefined;
  };
  /**
   * The addresses `id`'s pod's node may sign with (planner/signers.ts `addressesOf`): the one it
   * is known to sign with, else its current and former keys'. Absent: its current key's only.
   */
  addressesOf?(id: ValidatorId): readonly string[];
  readonly chain: ReadonlyMap<string, Pick<ChainValidator, 'status'>>;
  readonly open: ReadonlyMap<ValidatorId, Pick<ActionRecord, 'kind'>>;
  readonly mempool: ReadonlyMap<string, unknown>;
}

/**
 * A key problem by its code (the catalogue's): the manager never acts for such a validator. Also
 * ORPHANED: the pod's node signs for a member row whose key nobody holds, which the manager cannot
 * unstake (a key changed while it was not running).
 */
export type KeyProblemCode = 'KEY_MISSING' | 'KEY_INVALID' | 'KEY_DUPLICATE' | 'ORPHANED';

export type LeaveState =
  | { readonly left: true }
  | {
      readonly left: false;
      /** Set when the validator has a key problem: it will never be unstaked by the manager. */
      readonly keyProblem: KeyProblemCode | undefined;
      readonly reason: string;
    };

export function keyProblemOf(
  entry: KeyEntry | undefined,
): Exclude<KeyProblemCode, 'ORPHANED'> | undefined {
  if (entry === undefined) return 'KEY_MISSING';
  if (entry.ok) return undefined;
  return entry.code === 'KEY_DUPLICATE' ? 'KEY_DUPLICATE' : 'KEY_INVALID';
}

/**
 * Whether `id`'s validator has left the set, judged on addresses (issue 30): every address its
 * pod's node may sign with is out of the set (not staked or paused) and nothing of it is in flight
 * — a pod may go only when no staked row loses its last signer. After a rotation the Secret's key
 * is new while the node still signs with the old one: judging the new key's address drained three
 * staked rows' only signers and halted the chain. A validator whose address cannot be known (its
 * key is missing or malformed and was never seen valid) never counts as gone: it may well be
 * staked.
 */
export function leaveState(view: LeaveView, id: ValidatorId): LeaveState {
  const keyProblem = keyProblemOf(view.keys.get(id));
  const current = view.keys.addressOf(id);
  const addresses = view.addressesOf?.(id) ?? (current === undefined ? [] : [current]);
  if (addresses.length === 0)
    return {
      left: false,
      keyProblem,
      reason: `${keyProblem ?? 'KEY_MISSING'}: the key of ${id} is ${keyProblem === 'KEY_INVALID' ? 'malformed' : 'missing'} and its address was never seen, so whether it is still staked cannot be known; the manager will not unstake it`,
    };
  for (const address of addresses) {
    const status = view.chain.get(address)?.status ?? ChainStatus.absent;
    // A key removed from the Secret whose key the manager still holds (in memory since the
    // Secret dropped it): no key problem, its row is unstaked with that key as a rotation's old
    // address is (decision-rule.md S11), and its pod waits for it like any staked row's. Truly
    // missing (nobody holds it: the manager started after the change), it stays KEY_MISSING —
    // and so does a key that moved to another id: the Secret still gives it (to that id), so it
    // is not held for this one, and its row is that id's (unstaking it would take a kept
    // validator out: devnet-cli's 007, given 002's key and then none, did so).
    const removedHeld = keyProblem === 'KEY_MISSING' && view.keys.heldFor?.(address) === id;
    if (status === ChainStatus.staked || status === ChainStatus.paused) {
      if (address === current && !removedHeld)
        return keyProblem === undefined
          ? { left: false, keyProblem, reason: 'still in the validator set' }
          : {
              left: false,
              keyProblem,
              reason: `${keyProblem}: still staked, and the manager will not unstake a validator with a key problem`,
            };
      const held = view.keys.signingKey?.(address) !== undefined;
      return held
        ? {
            left: false,
            keyProblem: undefined,
            reason: removedHeld
              ? `its key was removed from the Secret, and its address ${address} is still ${status} on chain: it is unstaked with the key held in memory first`
              : `its node signs with its old key's address ${address}, still ${status} on chain: it is unstaked with the old key first`,
          }
        : {
            left: false,
            keyProblem: 'ORPHANED',
            reason: `ORPHANED: its node signs with ${address}, still ${status} on chain, and no key for it is held: the manager cannot unstake it, and removing the pod takes that row's only signer away`,
          };
    }
    if (view.open.has(id) || view.mempool.has(address))
      return {
        left: false,
        keyProblem: removedHeld ? undefined : keyProblem,
        reason: 'its transaction is not committed yet',
      };
  }
  return { left: true };
}

export function hasLeft(view: LeaveView, id: ValidatorId): boolean {
  return leaveState(view, id).left;
}

/** The drain an earlier scale recorded on the StatefulSet, if any. */
export interface RecordedDrain {
  readonly target: number;
  /** The replicas it started from (absent in drains recorded before this was kept). */
  readonly from: number | undefined;
  readonly forced: boolean;
}

export interface ScaleCheck {
  readonly replicas: number;
  readonly force: boolean;
  readonly previous: number;
  readonly drain: RecordedDrain | undefined;
  /**
   * The keys Secret is absent (deleted): a scale-down is refused unless forced, though the manager
   * still holds in memory the keys it read before (see `refusal`).
   */
  readonly keysAbsent?: boolean;
  /** The minimum in force; undefined while not known. */
  readonly minimum: MinimumSet | undefined;
  /** The validators a scale-down would remove, with where they stand. */
  readonly leaving: readonly { id: ValidatorId; state: LeaveState }[];
  /**
   * The ids a scale-up would add whose key in the keys Secret is missing, malformed or shared
   * with another id, in ordinal order (empty when the ids of pods not yet created cannot be told
   * from their names).
   */
  readonly newKeyProblems?: readonly NewKeyProblem[];
  /**
   * The chain would not survive the scale (survival.ts): refused after a running drain and before
   * the minimum set, so that the answer gives the quorum's arithmetic. Already decided for `force`.
   */
  readonly halts?: ManagerError | undefined;
}

/** An id a scale-up would add, and why its key is not one a validator can use. */
export interface NewKeyProblem {
  readonly id: ValidatorId;
  readonly code: KeyProblemCode;
  /** The key store's words for a malformed or shared key ("the same key as "002"; …"). */
  readonly message?: string | undefined;
}

/**
 * The refusal a scale request meets, or undefined when it may go ahead. `force` lifts each of
 * them: it supersedes a running drain, lowers the minimum set to the target, and removes
 * validators whose key problem hides whether they are staked.
 */
export function refusal(check: ScaleCheck): ManagerError | undefined {
  if (check.force) return check.halts;
  const { replicas, drain, minimum } = check;
  if (drain !== undefined && drain.target !== replicas)
    return new ManagerError(
      'SCALE_IN_PROGRESS',
      `a scale-down to ${drain.target} is still draining; wait until it is done, or send force: true to supersede it (the pods the new target keeps are un-marked)`,
      { details: { drainingTo: drain.target } },
    );
  if (check.halts !== undefined) return check.halts;
  const down = replicas < check.previous;
  if (down && minimum === undefined)
    return new ManagerError(
      'NOT_READY',
      'the minimum validator set is not known yet (the genesis set has not been read); retry in a moment',
    );
  if (minimum !== undefined && replicas < minimum.size && down)
    return new ManagerError(
      'BELOW_MINIMUM_SET',
      `${replicas} is below the minimum validator set of ${minimum.size} (${minimum.source}); the manager keeps that many validators staked so the chain survives. Send force: true to go below it anyway`,
      { details: { minimum: minimum.size } },
    );
  if (down && check.keysAbsent === true) return keysAbsentRefusal(replicas);
  const problems = check.newKeyProblems ?? [];
  const [firstProblem] = problems;
  if (replicas > check.previous && firstProblem !== undefined)
    return newKeyRefusal(replicas, problems, firstProblem);
  const blocked = check.leaving.filter(
    (l): l is { id: ValidatorId; state: Extract<LeaveState, { left: false }> } =>
      !l.state.left && l.state.keyProblem !== undefined,
  );
  const [first] = blocked;
  if (first !== undefined && first.state.keyProblem !== undefined)
    return new ManagerError(
      first.state.keyProblem,
      `cannot drain ${blocked.map((b) => b.id).join(', ')}: ${first.state.reason}. Fix the key, or send force: true if you know the validator is not staked`,
      { details: { validators: blocked.map((b) => ({ id: b.id, code: b.state.keyProblem })) } },
    );
  return undefined;
}

/**
 * A scale-down while the keys Secret is absent. The manager still holds the keys it read before
 * (in memory, for rotations: docs/adr/0029) and could drain with them, but a deleted Secret is an
 * operator's mistake or a replacement half done, not an edit that removes keys: every validator
 * the scale keeps is KEY_MISSING too, so its wait could never end, and the drain would unstake
 * rows on keys the cluster no longer gives. Refused before anything moves: nothing is sent, and
 * the answer names the way out. Forced, the leaving rows are unstaked with the held keys first
 * (a key nobody holds leaves its row staked, as any forced KEY_MISSING does).
 */
function keysAbsentRefusal(replicas: number): ManagerError {
  return new ManagerError(
    'KEY_MISSING',
    `cannot scale down to ${replicas}: the keys Secret is absent (deleted?), so every validator's key is missing; nothing is drained. Put the Secret back, or send force: true to drain anyway with the keys the manager still holds in memory`,
    { details: { secret: 'absent' } },
  );
}

/**
 * A scale-up to ids without a usable key: their pods would run nodes that can never be
 * validators, and a shared key's pod would run a node with another validator's key — one that
 * signs for it a second time (a double sign, on a chain that punishes it). The code is the first
 * id's; the message names the first five, each with its problem unless every one is missing.
 */
function newKeyRefusal(
  replicas: number,
  problems: readonly NewKeyProblem[],
  first: NewKeyProblem,
): ManagerError {
  const more = problems.length > 5 ? `, … (${problems.length})` : '';
  const details = {
    validators: problems.slice(0, 100).map(({ id, code }) => ({ id, code })),
  };
  if (problems.every((p) => p.code === 'KEY_MISSING'))
    return new ManagerError(
      'KEY_MISSING',
      `cannot scale to ${replicas}: no key in the keys Secret for ${problems
        .slice(0, 5)
        .map((p) => p.id)
        .join(
          ', ',
        )}${more}; their pods would run nodes that can never be validators. Add the keys first, or send force: true to scale anyway`,
      { details },
    );
  const shown = problems
    .slice(0, 5)
    .map((p) =>
      p.code === 'KEY_MISSING'
        ? `${p.id} (KEY_MISSING)`
        : `${p.id} (${p.code}: ${p.code === 'KEY_DUPLICATE' ? 'is ' : ''}${p.message ?? 'malformed'})`,
    )
    .join(', ');
  const shared = problems.some((p) => p.code === 'KEY_DUPLICATE')
    ? "; a shared key's pod would run a node with another validator's key, signing for it twice"
    : '';
  return new ManagerError(
    first.code,
    `cannot scale to ${replicas}: no usable key in the keys Secret for ${shown}${more}; their pods would run nodes that can never be validators${shared}. Fix the keys first, or send force: true to scale anyway`,
    { details },
  );
}

/** Parses the drain recorded on a StatefulSet's annotations. */
export function recordedDrain(
  annotations: Readonly<Record<string, string>> | undefined,
  names: { target: string; from: string; forced: string },
): RecordedDrain | undefined {
  const target = annotations?.[names.target];
  if (target === undefined || !/^\d+$/.test(target)) return undefined;
  const from = annotations?.[names.from];
  return {
    target: Number(target),
    from: from !== undefined && /^\d+$/.test(from) ? Number(from) : undefined,
    forced: annotations?.[names.forced] === 'true',
  };
}
