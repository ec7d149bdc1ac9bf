// May a validator pod go? The answer a pod's preStop hook waits for (`cluster-manager
// await-departure`, `GET /v1/departures/{pod}`): yes once its validator has left the active set,
// or once the manager knows it never will (so holding the pod longer helps nobody); otherwise not
// yet. Pure: it reads the manager's state as given; the route re-asks as that state changes.
import { DecisionCode, type DesiredValidator, type PodView, type ValidatorId } from '../model.ts';
import { Phase, Wait, type Decision } from '../planner/plan.ts';
import { keyProblemOf, leaveState, type LeaveView } from './scale-rules.ts';

/** Why a pod may (final) or may not yet go. */
export const DepartureCode = {
  /** Its validator is not (or no longer) in the active set. */
  leftSet: 'LEFT_SET',
  // Final, not departed: the manager will not unstake it; the pod may go.
  stillWanted: 'STILL_WANTED',
  belowMinimumSet: 'BELOW_MINIMUM_SET',
  keyMissing: 'KEY_MISSING',
  keyInvalid: 'KEY_INVALID',
  keyDuplicate: 'KEY_DUPLICATE',
  held: 'HELD',
  unmanaged: 'UNMANAGED',
  failed: 'UNSTAKE_FAILED',
  // Not final, and never will be by the manager's hand: the pod's node signs for a member row
  // whose key nobody holds; the pod is kept as long as its hook allows (the row's only signer).
  orphaned: 'ORPHANED',
  notAValidatorPod: 'NOT_A_VALIDATOR_POD',
  // Not final: still leaving, or nothing can be decided now.
  leaving: 'LEAVING',
  paused: 'PAUSED',
  chainUntrusted: 'CHAIN_UNTRUSTED',
  chainUnavailable: 'CHAIN_UNAVAILABLE',
} as const;
export type DepartureCode = (typeof DepartureCode)[keyof typeof DepartureCode];

export interface Departure {
  readonly pod: string;
  readonly validatorId: ValidatorId | null;
  /** The validator has left the active set. */
  readonly departed: boolean;
  /** Waiting longer cannot change the answer: the pod may go. */
  readonly final: boolean;
  readonly code: DepartureCode;
  readonly reason: string;
  readonly height: number;
}

export interface DepartureInput {
  readonly pod: string;
  /** The manager's entry whose pod has this name, if any (undefined: not a validator pod it knows). */
  readonly entry: (DesiredValidator & { pod: PodView }) | undefined;
  /** The planner's decision for that id. */
  readonly decision: Decision | undefined;
  readonly view: LeaveView;
  readonly paused: boolean;
  readonly trust: { trusted: boolean; reason: string | undefined };
  readonly chainHealthy: boolean;
  readonly height: number;
  /**
   * Other validators are on their way out (an unstake ready to go, sent, or in the mempool): a
   * validator kept for the minimum set must vote until their unstakes commit.
   */
  readonly othersLeaving: boolean;
}

export function departureOf(input: DepartureInput): Departure {
  const { entry, decision } = input;
  const answer = (
    code: DepartureCode,
    reason: string,
    flags: { departed?: boolean; final: boolean },
  ): Departure => ({
    pod: input.pod,
    validatorId: entry?.id ?? null,
    departed: flags.departed ?? false,
    final: flags.final,
    code,
    reason,
    height: input.height,
  });
  if (entry === undefined)
    return answer(
      DepartureCode.notAValidatorPod,
      `${input.pod} is not a validator pod the manager knows (no such pod, not matched by its pod selector, or no id)`,
      { final: true },
    );
  if (entry.conflict !== undefined)
    return answer(DepartureCode.unmanaged, `never touched: ${entry.conflict}`, { final: true });
  const state = leaveState(input.view, entry.id);
  if (state.left)
    return answer(DepartureCode.leftSet, `validator ${entry.id} is not in the validator set`, {
      departed: true,
      final: true,
    });
  if (state.keyProblem === 'ORPHANED')
    return answer(DepartureCode.orphaned, state.reason, { final: false });
  // A removed key whose key the manager holds is no key problem (leaveState): its row is unstaked
  // with the held key, and the pod waits for that like any staked row's (decision-rule.md S11).
  // Before, KEY_MISSING answered final at once and a kubectl scale-down let the pod go first.
  const entryKey = input.view.keys.get(entry.id);
  const keyProblem =
    entryKey === undefined && state.keyProblem === undefined ? undefined : keyProblemOf(entryKey);
  if (keyProblem !== undefined)
    return answer(
      keyProblem,
      `${decision?.reason ?? state.reason}; the manager will not unstake it`,
      {
        final: true,
      },
    );
  if (entry.pod.held)
    return answer(DepartureCode.held, `pod ${input.pod} is held by annotation; nothing is done`, {
      final: true,
    });
  if (entry.wanted)
    return answer(
      DepartureCode.stillWanted,
      `${entry.wantedReason}: validator ${entry.id} stays staked; the pod is restarting, not leaving`,
      { final: true },
    );
  if (decision?.waitingFor === Wait.minimumSet) {
    // Kept staked: its pod may go, but not before the validators that do leave are out — their
    // unstakes need its vote, and a chain left with them staked and their pods gone never resumes.
    const known = decision.code !== DecisionCode.minimumSetUnknown;
    if (known && input.othersLeaving)
      return answer(
        DepartureCode.belowMinimumSet,
        `${decision.reason}; its vote is needed until the leaving validators' unstakes commit`,
        { final: false },
      );
    return answer(DepartureCode.belowMinimumSet, decision.reason, { final: known });
  }
  if (decision?.phase === Phase.failed)
    return answer(DepartureCode.failed, decision.reason, { final: true });
  if (!input.trust.trusted)
    return answer(DepartureCode.chainUntrusted, input.trust.reason ?? 'the chain is not trusted', {
      final: false,
    });
  if (input.paused)
    return answer(DepartureCode.paused, 'the manager is paused; resume it to unstake', {
      final: false,
    });
  if (!input.chainHealthy)
    return answer(DepartureCode.chainUnavailable, 'the chain does not answer', { final: false });
  return answer(
    DepartureCode.leaving,
    decision?.reason ?? `validator ${entry.id} is leaving the set`,
    { final: false },
  );
}
