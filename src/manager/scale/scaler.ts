// Scaling the validator StatefulSet through its scale subresource, and waiting until the chain
// agrees. A scale-down drains first (seed 000's pre-scale hook): the leaving pods are marked
// draining, their validators are unstaked and seen out of the set, and only then are the pods
// removed — so consensus never waits on a validator that is already gone. The drain's target is
// kept in an annotation on the StatefulSet, so a restarted manager finishes it.
//
// One intent at a time (scale-rules.ts): a scale is refused while a drain runs (409
// SCALE_IN_PROGRESS) unless forced, which supersedes it and un-marks the pods the new target
// keeps. The manager never overwrites a replicas value it did not write: it lowers the replicas
// only from the value the drain started from, with the StatefulSet's resourceVersion as a
// precondition; replicas set by someone else meanwhile win, and the drain gives way to them.
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { Clock } from '../clock.ts';
import { isManagerError, ManagerError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import {
  Annotations,
  type DecisionCode,
  type DesiredValidator,
  type ValidatorId,
} from '../model.ts';
import { isStakedOnChain, Phase } from '../planner/plan.ts';
import type { ManagerControl, ReadModel, ViewDriver } from '../read-model.ts';
import type { ReplicaTarget } from './replica-target.ts';
import { BlockerWatch } from './scale-blockers.ts';
import { survivalRefusal } from './survival.ts';
import {
  keyProblemOf,
  leaveState,
  recordedDrain,
  refusal,
  type LeaveView,
  type NewKeyProblem,
  type RecordedDrain,
} from './scale-rules.ts';

export const WaitFor = { none: 'none', staked: 'staked', active: 'active' } as const;
export type WaitFor = (typeof WaitFor)[keyof typeof WaitFor];

export interface ScaleRequest {
  replicas: number;
  wait: WaitFor;
  timeoutSeconds: number;
  /** Trigger views while waiting (a chain with a manual pacemaker only moves when asked to). */
  drive: boolean;
  /**
   * Go ahead over the safety refusals: below the minimum set (lowering it to `replicas`), over a
   * running drain (superseding it), past validators whose key problem hides whether they are staked.
   */
  force: boolean;
}

export interface Missing {
  id: ValidatorId;
  phase: string;
  reason: string;
}

/** A `Missing` with the planner's decision code: what the scaler's checks read (not answered). */
export interface Unmet extends Missing {
  code: DecisionCode | undefined;
}

/** The answered part of an `Unmet` (the code stays inside). */
export function toMissing(unmet: Unmet): Missing {
  return { id: unmet.id, phase: unmet.phase, reason: unmet.reason };
}

/**
 * How a scale ended: the target holds (`done`); a scale-down with `wait: none` marked the leaving
 * pods and drains in the background (`draining`: the replicas drop once their validators have
 * left the set); or the wait ran out (`timeout`, also when the client went away).
 */
export const ScaleOutcome = { done: 'done', draining: 'draining', timeout: 'timeout' } as const;
export type ScaleOutcome = (typeof ScaleOutcome)[keyof typeof ScaleOutcome];

export interface ScaleResult {
  statefulSet: string;
  previous: number;
  replicas: number;
  wait: WaitFor;
  outcome: ScaleOutcome;
  /** `outcome === 'done'`. */
  done: boolean;
  elapsedMs: number;
  /** Ids drained on the way down (with `outcome: draining`, the ids being drained). */
  drained: ValidatorId[];
  /** What is not there yet when `done` is false. */
  missing: Missing[];
  height: number;
}

const FALLBACK_CHECK_MS = 1_000;
/** Tries of a replicas write that meets another writer's change of the StatefulSet (409). */
const CONFLICT_RETRIES = 5;
const DRAIN_ANNOTATIONS = {
  target: Annotations.scaleTarget,
  from: Annotations.scaleFrom,
  forced: Annotations.scaleForced,
};

/** What the scaler reads and the ports it acts through (compose.ts wires them). */
export interface ScalerPorts {
  read: ReadModel;
  control: ManagerControl;
  replicas: ReplicaTarget;
  driver: ViewDriver;
  clock: Clock;
  logger: Logger;
}

export class Scaler {
  readonly #p: ScalerPorts;
  readonly #read: ReadModel;
  #inFlight = false;
  #finishing = false;

  constructor(ports: ScalerPorts) {
    this.#p = ports;
    this.#read = ports.read;
  }

  get inFlight(): boolean {
    return this.#inFlight;
  }

  /**
   * The one validator StatefulSet; 501 when the layout has none or several, 503 before the
   * informers have listed (a restarted manager must not call a layout it has not seen unsupported).
   */
  statefulSet(): V1StatefulSet {
    if (!this.#read.informersSynced())
      throw new ManagerError(
        'NOT_READY',
        'the manager has not listed the pods and StatefulSets yet; retry in a moment',
      );
    const sets = this.#p.replicas.statefulSets();
    const [only] = sets;
    if (sets.length !== 1 || only === undefined) {
      throw new ManagerError(
        'SCALE_UNSUPPORTED',
        `scaling through the control RPC needs exactly one validator StatefulSet; found ${sets.length}` +
          (sets.length > 1
            ? " (one release per validator, as on Pocket's LocalNet, is scaled with Tilt or Helm)"
            : ''),
      );
    }
    return only;
  }

  async scale(request: ScaleRequest, signal: AbortSignal): Promise<ScaleResult> {
    if (this.#read.paused)
      throw new ManagerError('PAUSED', 'the manager is paused; resume it before scaling');
    if (this.#inFlight)
      throw new ManagerError(
        'SCALE_IN_PROGRESS',
        'another scale is in progress (a scale request is still draining or waiting)',
      );
    this.#inFlight = true;
    const started = this.#p.clock.now();
    const deadline = started + request.timeoutSeconds * 1000;
    try {
      const name = this.statefulSet().metadata?.name ?? '';
      // What the API server holds now, not the cache: the checks and the writes start from it.
      const sts = await this.#readSet(name);
      const previous = sts.spec?.replicas ?? 1;
      const drain = recordedDrain(sts.metadata?.annotations, DRAIN_ANNOTATIONS);
      const log = this.#p.logger.child({ component: 'scale', statefulSet: name });
      const leaving = this.#entries(name)
        .filter((entry) => (entry.ordinal ?? 0) >= request.replicas)
        .map((entry) => ({ id: entry.id, state: leaveState(this.#leaveView(), entry.id) }));
      const refused = refusal({
        replicas: request.replicas,
        force: request.force,
        previous,
        drain,
        minimum: this.#read.minimumSet(),
        leaving: request.replicas < previous ? leaving : [],
        newKeyProblems: this.#newKeyProblems(name, previous, request.replicas),
        halts: this.#survival(name, request, previous),
      });
      if (refused !== undefined) {
        log.info({ code: refused.code, to: request.replicas }, 'scale refused');
        throw refused;
      }
      log.info(
        { from: previous, to: request.replicas, wait: request.wait, force: request.force },
        'scale requested',
      );
      await this.#recordMinimum(name, request);
      if (drain !== undefined && drain.target !== request.replicas) {
        log.warn({ drainingTo: drain.target, to: request.replicas }, 'forced: superseding a drain');
        await this.#abandonDrain(name, request.replicas, drain);
      }
      let drained: ValidatorId[] = [];
      if (request.replicas < previous) {
        if (request.wait === WaitFor.none) {
          drained = await this.#markLeaving(name, request, previous);
          if (!this.#gone(drained, request.force)) {
            log.info({ draining: drained }, 'draining in the background');
            return this.#result({
              name,
              previous,
              request,
              started,
              drained,
              outcome: ScaleOutcome.draining,
              missing: this.#missingLeaving(drained, request.force),
            });
          }
        } else {
          drained = await this.#drain(name, request, { from: previous, deadline, signal });
          if (!this.#gone(drained, request.force)) {
            return this.#result({
              name,
              previous,
              request,
              started,
              drained,
              outcome: ScaleOutcome.timeout,
              missing: this.#missingLeaving(drained, request.force),
            });
          }
        }
      } else {
        await this.#undrain(name, request.replicas, drain);
      }
      await this.#patchOrGiveWay(name, request, previous);
      await this.#setDrain(name, undefined);
      log.info({ replicas: request.replicas }, 'replicas patched');
      if (request.wait === WaitFor.none) {
        return this.#result({
          name,
          previous,
          request,
          started,
          drained,
          outcome: ScaleOutcome.done,
          missing: [],
        });
      }
      // Fails fast (SCALE_BLOCKED) when the wait cannot end by itself: scale-blockers.ts.
      const watch = new BlockerWatch(
        this.#p,
        request,
        () => this.#missingAfter(name, request),
        signal,
      );
      const done = await this.#waitUntil(() => this.#missingAfter(name, request).length === 0, {
        deadline,
        drive: request.drive,
        signal: watch.signal,
      }).finally(() => watch.stop());
      watch.throwIfBlocked({ statefulSet: name, previous });
      return this.#result({
        name,
        previous,
        request,
        started,
        drained,
        outcome: done ? ScaleOutcome.done : ScaleOutcome.timeout,
        missing: done ? [] : this.#missingAfter(name, request),
      });
    } finally {
      this.#inFlight = false;
    }
  }

  /** Patches the replicas; when someone else scaled meanwhile, theirs stand and the drain gives way. */
  async #patchOrGiveWay(name: string, request: ScaleRequest, previous: number): Promise<void> {
    try {
      await this.#patchReplicas(name, request.replicas, previous);
    } catch (error: unknown) {
      if (isManagerError(error, 'SCALE_CONFLICT'))
        await this.#abandonDrain(name, undefined, {
          target: request.replicas,
          from: previous,
          forced: request.force,
        });
      throw error;
    }
  }

  /**
   * A forced scale below the minimum set lowers it to its target (kept on the StatefulSet, so a
   * restarted manager keeps it too); any scale at or above the configured minimum lifts that again.
   */
  async #recordMinimum(name: string, request: ScaleRequest): Promise<void> {
    const base = this.#read.baseMinimumSet();
    const forcedBelow = request.force && base !== undefined && request.replicas < base.size;
    const recorded = this.#read.minimumSet();
    if (forcedBelow) {
      if (recorded === undefined || recorded.size > request.replicas)
        await this.#annotateStatefulSet(name, {
          [Annotations.minimumSet]: String(request.replicas),
        });
    } else if (
      base !== undefined &&
      request.replicas >= base.size &&
      recorded !== undefined &&
      recorded.size < base.size
    ) {
      await this.#annotateStatefulSet(name, { [Annotations.minimumSet]: null });
    }
  }

  /** The refusal of a scale the chain would not survive (survival.ts), or undefined. */
  #survival(name: string, request: ScaleRequest, previous: number): ManagerError | undefined {
    const read = this.#read;
    const joining: ValidatorId[] = [];
    for (let ordinal = previous; ordinal < request.replicas; ordinal++) {
      const id = this.#p.replicas.idOfNewPod(name, ordinal);
      const address = id === undefined ? undefined : read.keys.addressOf(id);
      if (id === undefined || address === undefined) continue;
      if (read.chain.validators.has(address) || read.chain.mempool.has(address)) continue;
      if (!read.actions.open.has(id)) joining.push(id);
    }
    const leaving = this.#entries(name)
      .filter((entry) => (entry.ordinal ?? 0) >= request.replicas)
      .map((entry) => {
        const addresses = read.addressesOf(entry.id);
        return {
          id: entry.id,
          addresses,
          staked: addresses.some((a) => read.chain.validators.get(a)?.status === 'staked'),
        };
      });
    return survivalRefusal({
      replicas: request.replicas,
      previous,
      force: request.force,
      capabilities: read.capabilities,
      quorum: read.quorum(),
      joining,
      leaving,
    });
  }

  /**
   * The ids of ordinals `from`…`to − 1` (a scale-up would add them) whose key in the Secret is
   * missing, malformed or shared with another id.
   */
  #newKeyProblems(name: string, from: number, to: number): NewKeyProblem[] {
    const problems: NewKeyProblem[] = [];
    const signing = this.#signingNodes(name);
    for (let ordinal = Math.max(0, from); ordinal < to; ordinal++) {
      const id = this.#p.replicas.idOfNewPod(name, ordinal);
      if (id === undefined) continue;
      const entry = this.#read.keys.get(id);
      const code = keyProblemOf(entry);
      if (code !== undefined)
        problems.push({ id, code, message: entry?.ok === false ? entry.message : undefined });
      // A key another running node signs with (a key moved from an id whose pod still runs on it):
      // the new pod's node would sign with it a second time.
      const twin = entry?.ok === true ? signing.get(entry.key.address) : undefined;
      if (code === undefined && twin !== undefined && twin.id !== id)
        problems.push({
          id,
          code: 'KEY_DUPLICATE',
          message: `the key the node of pod ${twin.pod} (${twin.id}) still signs with`,
        });
    }
    return problems;
  }

  /** Running pods whose node is known to sign with one address, by that address. */
  #signingNodes(name: string): Map<string, { id: ValidatorId; pod: string }> {
    const out = new Map<string, { id: ValidatorId; pod: string }>();
    for (const entry of this.#entries(name)) {
      if (entry.pod === undefined || entry.pod.startedAt === undefined) continue;
      const addresses = this.#read.addressesOf(entry.id);
      const [only] = addresses;
      if (addresses.length === 1 && only !== undefined)
        out.set(only, { id: entry.id, pod: entry.pod.name });
    }
    return out;
  }

  #leaveView(): LeaveView {
    const r = this.#read;
    return {
      keys: r.keys,
      chain: r.chain.validators,
      open: r.actions.open,
      mempool: r.chain.mempool,
      addressesOf: (id) => r.addressesOf(id),
    };
  }

  /**
   * True when every id has left the set. A forced drain does not wait for validators whose key
   * problem hides whether they are staked (the operator vouched for them).
   */
  #gone(ids: readonly ValidatorId[], forced: boolean): boolean {
    const view = this.#leaveView();
    return ids.every((id) => {
      const state = leaveState(view, id);
      return state.left || (forced && state.keyProblem !== undefined);
    });
  }

  /**
   * Records the drain on the StatefulSet (target, the replicas it starts from, forced; so a
   * restarted manager finishes it and knows whose replicas it may lower) and marks the pods of the
   * leaving ordinals draining; returns the leaving ids.
   */
  async #markLeaving(name: string, request: ScaleRequest, from: number): Promise<ValidatorId[]> {
    const leaving = this.#entries(name).filter((entry) => (entry.ordinal ?? 0) >= request.replicas);
    await this.#setDrain(name, { target: request.replicas, from, forced: request.force });
    // Whatever the pod cache says: a mark removed a moment ago may still show there.
    for (const entry of leaving) {
      if (entry.pod !== undefined) await this.#annotatePod(entry.pod.name, 'true');
    }
    if (leaving.length > 0) this.#p.control.enqueueAll();
    return leaving.map((entry) => entry.id);
  }

  /** Marks the leaving pods draining and waits until their validators have left the set. */
  async #drain(
    name: string,
    request: ScaleRequest,
    { from, deadline, signal }: { from: number; deadline: number; signal: AbortSignal },
  ): Promise<ValidatorId[]> {
    const ids = await this.#markLeaving(name, request, from);
    if (ids.length === 0) return ids;
    await this.#waitUntil(() => this.#gone(ids, request.force), {
      deadline,
      drive: request.drive,
      signal,
    });
    return ids;
  }

  /** A scale-up cancels an unfinished drain of the ordinals it keeps. */
  async #undrain(name: string, replicas: number, drain: RecordedDrain | undefined): Promise<void> {
    await this.#setDrain(name, undefined);
    await this.#unmarkBelow(name, replicas, drain);
  }

  /**
   * Gives a drain up: its record is cleared and every pod the replicas (`keep`, or the
   * StatefulSet's as they are now) keep loses its draining mark — no pod keeps one forever.
   */
  async #abandonDrain(
    name: string,
    keep: number | undefined,
    drain: RecordedDrain | undefined,
  ): Promise<void> {
    const replicas = keep ?? (await this.#readSet(name)).spec?.replicas ?? 1;
    await this.#setDrain(name, undefined);
    await this.#unmarkBelow(name, replicas, drain);
  }

  /**
   * Removes the draining mark of every pod below `replicas` that has one. The pod cache may not
   * have seen a mark written a moment ago (a drain marks, answers 202, and a forced scale comes
   * next), so the ordinals of the recorded `drain` (read from the API server) are unmarked
   * whatever the cache says; removing a mark that is not there changes nothing.
   */
  async #unmarkBelow(name: string, replicas: number, drain?: RecordedDrain): Promise<void> {
    for (const entry of this.#entries(name)) {
      const ordinal = entry.ordinal ?? 0;
      if (entry.pod === undefined || ordinal >= replicas) continue;
      const marked = drain !== undefined && ordinal >= drain.target;
      if (entry.pod.draining || marked) await this.#annotatePod(entry.pod.name, null);
    }
  }

  /**
   * Completes a drain left by an earlier request or a restarted manager: once every draining
   * pod's validator is out of the set, the replicas are lowered to the recorded target — but only
   * from the replicas the drain started from: someone who scaled meanwhile (kubectl) wins, and the
   * drain is given up. Draining marks no drain explains any more are removed.
   */
  async finishDrains(): Promise<void> {
    if (this.#inFlight || this.#finishing || !this.#read.isLeader) return;
    const sets = this.#p.replicas.statefulSets();
    const [cached] = sets;
    if (sets.length !== 1 || cached === undefined) return;
    const name = cached.metadata?.name ?? '';
    const cachedDrain = recordedDrain(cached.metadata?.annotations, DRAIN_ANNOTATIONS);
    const strayMarks = this.#entries(name).some(
      (e) => e.pod?.draining === true && (e.ordinal ?? 0) < (cached.spec?.replicas ?? 1),
    );
    if (cachedDrain === undefined && !strayMarks) return;
    this.#finishing = true;
    try {
      // The cache may lag: a scale that just finished has cleared the target, and someone may
      // have scaled since (kubectl). Act only on what the API server holds now.
      const sts = await this.#readSet(name);
      const replicas = sts.spec?.replicas ?? 1;
      const drain = recordedDrain(sts.metadata?.annotations, DRAIN_ANNOTATIONS);
      const log = this.#p.logger.child({ component: 'scale', statefulSet: name });
      if (drain === undefined) {
        // A scale may have started while the StatefulSet was read: its marks are its own.
        if (this.inFlight) return;
        await this.#unmarkBelow(name, replicas);
        return;
      }
      if (drain.from !== undefined && replicas !== drain.from && replicas !== drain.target) {
        log.warn(
          { drainingTo: drain.target, from: drain.from, replicas },
          'the replicas were changed by someone else during a drain; theirs stand, the drain is given up',
        );
        await this.#abandonDrain(name, replicas, drain);
        return;
      }
      const leaving = this.#entries(name)
        .filter((e) => (e.ordinal ?? 0) >= drain.target)
        .map((e) => e.id);
      if (drain.target < replicas && !this.#gone(leaving, drain.forced)) return;
      if (drain.target < replicas) await this.#patchReplicas(name, drain.target, replicas);
      await this.#setDrain(name, undefined);
      log.info({ replicas: drain.target }, 'finished an earlier drain');
    } catch (error: unknown) {
      this.#p.logger.warn({ err: error }, 'could not finish a drain; will retry');
    } finally {
      this.#finishing = false;
    }
  }

  #entries(statefulSet: string): DesiredValidator[] {
    return [...this.#read.desired().validators.values()].filter(
      (entry) =>
        entry.statefulSet?.name === statefulSet ||
        entry.pod?.name.startsWith(`${statefulSet}-`) === true,
    );
  }

  #missingLeaving(ids: readonly ValidatorId[], forced: boolean): Unmet[] {
    const phases = new Map(this.#read.plan().map((d) => [d.key, d]));
    const view = this.#leaveView();
    const missing: Unmet[] = [];
    for (const id of ids) {
      const state = leaveState(view, id);
      if (state.left || (forced && state.keyProblem !== undefined)) continue;
      missing.push({
        id,
        phase: phases.get(id)?.phase ?? 'unknown',
        code: phases.get(id)?.code,
        reason:
          state.keyProblem === undefined ? (phases.get(id)?.reason ?? state.reason) : state.reason,
      });
    }
    return missing;
  }

  /** Validators not yet where `request` wants them (after the replicas were patched). */
  #missingAfter(statefulSet: string, request: ScaleRequest): Unmet[] {
    const decisions = new Map(this.#read.plan().map((d) => [d.key, d]));
    const entries = this.#entries(statefulSet);
    const wanted = entries.filter((e) => e.wanted && (e.ordinal ?? 0) < request.replicas);
    const missing: Unmet[] = [];
    if (wanted.length < request.replicas) {
      missing.push({
        id: '-',
        phase: 'pending',
        code: undefined,
        reason: `${wanted.length} of ${request.replicas} ordinals are known to the manager yet`,
      });
    }
    for (const entry of wanted) {
      // The planner's reading of the chain: its row staked under its own key, nothing of it in
      // flight (an unstake on its way is no "staked"), and signing with its own pod's node.
      const decision = decisions.get(entry.id);
      const staked =
        decision !== undefined && isStakedOnChain(decision) && !this.#actionInFlight(decision);
      const active = staked && decision.signing;
      const ok = request.wait === WaitFor.active ? active : staked;
      if (!ok)
        missing.push({
          id: entry.id,
          phase: decision?.phase ?? Phase.pending,
          code: decision?.code,
          reason: decision?.reason ?? 'not known yet',
        });
    }
    const leaving = entries.filter((e) => (e.ordinal ?? 0) >= request.replicas).map((e) => e.id);
    missing.push(...this.#missingLeaving(leaving, request.force));
    missing.push(...this.#stillMoving(new Set(missing.map((m) => m.id))));
    return missing;
  }

  /** A stake or unstake of this validator (its address, or a rotation's old one) is on its way. */
  #actionInFlight(decision: { id: ValidatorId | undefined; address: string | undefined }): boolean {
    const read = this.#read;
    const open = decision.id === undefined ? undefined : read.actions.open.get(decision.id);
    const pooled =
      decision.address === undefined ? undefined : read.chain.mempool.get(decision.address);
    return open !== undefined || (pooled !== undefined && pooled.kind !== undefined);
  }

  /**
   * Stakes and unstakes still on their way that no entry above accounts for (a validator whose pod
   * is gone, a rotation's old address): until they commit the set is still changing, and a scale
   * is not done (a halted chain with unstakes pending answered `done` in 55 ms, issue 30).
   */
  #stillMoving(listed: ReadonlySet<ValidatorId>): Unmet[] {
    const read = this.#read;
    const out: Unmet[] = [];
    const seen = new Set<string>();
    for (const open of read.actions.open.values()) {
      seen.add(open.address);
      if (listed.has(open.validatorId)) continue;
      out.push({
        id: open.validatorId,
        phase: open.kind === 'stake' ? Phase.staking : Phase.unstaking,
        code: undefined,
        reason: `its ${open.kind} of ${open.address} is not committed yet`,
      });
    }
    for (const [address, tx] of read.chain.mempool) {
      if (seen.has(address) || tx.kind === undefined) continue;
      const id = read.keys.idOfAddress(address) ?? address;
      if (listed.has(id)) continue;
      out.push({
        id,
        phase: tx.kind === 'stake' ? Phase.staking : Phase.unstaking,
        code: undefined,
        reason: `a ${tx.kind} of ${address} is in the mempool, not committed yet`,
      });
    }
    return out;
  }

  /**
   * Waits until `condition` holds, re-checking on every phase change and chain height (and at
   * least every second); with `drive`, commits blocks by triggering views meanwhile.
   */
  async #waitUntil(
    condition: () => boolean,
    options: { deadline: number; drive: boolean; signal: AbortSignal },
  ): Promise<boolean> {
    const { read, driver, clock, logger } = { ...this.#p };
    if (condition()) return true;
    return new Promise<boolean>((resolve) => {
      let settled = false;
      let cancelTimer: (() => void) | undefined;
      let driving = false;
      const finish = (value: boolean): void => {
        if (settled) return;
        settled = true;
        cancelTimer?.();
        read.events.off('phase', check);
        read.events.off('action', check);
        read.events.off('height', check);
        options.signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = (): void => finish(false);
      const drive = (): void => {
        if (!options.drive || driving || settled) return;
        driving = true;
        driver
          .triggerView(options.signal)
          .catch((error: unknown) => logger.debug({ err: error }, 'trigger view failed'))
          .finally(() => {
            driving = false;
            driver.poke();
          });
      };
      function check(): void {
        if (settled) return;
        if (condition()) finish(true);
        else if (clock.now() >= options.deadline) finish(false);
        else drive();
      }
      const tick = (): void => {
        check();
        if (!settled)
          cancelTimer = clock.setTimer(
            tick,
            Math.min(FALLBACK_CHECK_MS, Math.max(0, options.deadline - clock.now())),
          );
      };
      read.events.on('phase', check);
      read.events.on('action', check);
      read.events.on('height', check);
      options.signal.addEventListener('abort', onAbort, { once: true });
      tick();
    });
  }

  /** The StatefulSet as the API server holds it now. */
  #readSet(name: string): Promise<V1StatefulSet> {
    return this.#p.replicas.read(name);
  }

  /**
   * Sets the replicas to `replicas`, but only over the value `expected` this scale started from,
   * with the StatefulSet's resourceVersion as a precondition (compare-and-swap): a value someone
   * else wrote meanwhile is never overwritten (409 SCALE_CONFLICT). A conflict that only moved the
   * resourceVersion (status updates) is tried again.
   */
  async #patchReplicas(name: string, replicas: number, expected: number): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const sts = await this.#readSet(name);
      const current = sts.spec?.replicas ?? 1;
      if (current === replicas) return;
      if (current !== expected)
        throw new ManagerError(
          'SCALE_CONFLICT',
          `the replicas of ${name} were changed to ${current} by someone else while this scale ran (it started from ${expected}); nothing was overwritten`,
          { details: { replicas: current } },
        );
      const outcome = await this.#p.replicas.patchReplicas(
        name,
        replicas,
        sts.metadata?.resourceVersion,
      );
      if (outcome === undefined) return;
      if (attempt < CONFLICT_RETRIES) continue;
      throw new ManagerError(
        'KUBE_UNAVAILABLE',
        `could not patch the scale of StatefulSet ${name}: ${outcome.conflict}`,
      );
    }
  }

  /** Records (or clears) the drain on the StatefulSet's annotations. */
  async #setDrain(name: string, drain: RecordedDrain | undefined): Promise<void> {
    await this.#annotateStatefulSet(name, {
      [Annotations.scaleTarget]: drain === undefined ? null : String(drain.target),
      [Annotations.scaleFrom]: drain?.from === undefined ? null : String(drain.from),
      [Annotations.scaleForced]: drain?.forced === true ? 'true' : null,
    });
  }

  #annotateStatefulSet(name: string, annotations: Record<string, string | null>): Promise<void> {
    return this.#p.replicas.annotateStatefulSet(name, annotations);
  }

  /** Marks (or unmarks) a pod draining (a pod that is gone has nothing to mark). */
  #annotatePod(name: string, value: 'true' | null): Promise<void> {
    return this.#p.replicas.annotatePod(name, Annotations.draining, value);
  }

  #result(parts: {
    name: string;
    previous: number;
    request: ScaleRequest;
    started: number;
    drained: ValidatorId[];
    outcome: ScaleOutcome;
    missing: Unmet[];
  }): ScaleResult {
    return {
      statefulSet: parts.name,
      previous: parts.previous,
      replicas: parts.request.replicas,
      wait: parts.request.wait,
      outcome: parts.outcome,
      done: parts.outcome === ScaleOutcome.done,
      elapsedMs: this.#p.clock.now() - parts.started,
      drained: parts.drained,
      missing: parts.missing.map(toMissing),
      height: this.#read.chain.height,
    };
  }
}
