// Scaling the validator StatefulSet through its scale subresource, and waiting until the chain
// agrees. A scale-down drains first (seed 000's pre-scale hook): the leaving pods are marked
// draining, their validators are unstaked and seen out of the set, and only then are the pods
// removed — so consensus never waits on a validator that is already gone. The drain's target is
// kept in an annotation on the StatefulSet, so a restarted manager finishes it.
import { PatchStrategy, setHeaderOptions, type V1StatefulSet } from '@kubernetes/client-node';
import { ManagerError } from '../errors.ts';
import { apiStatus, describeApiError } from '../kube/client.ts';
import type { Manager } from '../manager.ts';
import { Annotations, ChainStatus, type DesiredValidator, type ValidatorId } from '../model.ts';
import { hasProvenItself, Phase } from '../planner/plan.ts';
import { BlockerWatch } from './scale-blockers.ts';

export const WaitFor = { none: 'none', staked: 'staked', active: 'active' } as const;
export type WaitFor = (typeof WaitFor)[keyof typeof WaitFor];

export interface ScaleRequest {
  replicas: number;
  wait: WaitFor;
  timeoutSeconds: number;
  /** Trigger views while waiting (chains with a manual pacemaker only move on TriggerView). */
  drive: boolean;
}

export interface Missing {
  id: ValidatorId;
  phase: string;
  reason: string;
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

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const FALLBACK_CHECK_MS = 1_000;

export class Scaler {
  readonly #manager: Manager;
  #inFlight = false;
  #finishing = false;

  constructor(manager: Manager) {
    this.#manager = manager;
  }

  get inFlight(): boolean {
    return this.#inFlight;
  }

  /**
   * The one validator StatefulSet; 501 when the layout has none or several, 503 before the
   * informers have listed (a restarted manager must not call a layout it has not seen unsupported).
   */
  statefulSet(): V1StatefulSet {
    if (!this.#manager.informersSynced())
      throw new ManagerError(
        'NOT_READY',
        'the manager has not listed the pods and StatefulSets yet; retry in a moment',
      );
    const sets = this.#manager.statefulSets();
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
    if (this.#manager.paused)
      throw new ManagerError('PAUSED', 'the manager is paused; resume it before scaling');
    if (this.#inFlight) throw new ManagerError('SCALE_IN_PROGRESS', 'another scale is in progress');
    this.#inFlight = true;
    const started = this.#manager.clock.now();
    const deadline = started + request.timeoutSeconds * 1000;
    try {
      const sts = this.statefulSet();
      const name = sts.metadata?.name ?? '';
      const previous = sts.spec?.replicas ?? 1;
      const log = this.#manager.logger.child({ component: 'scale', statefulSet: name });
      log.info({ from: previous, to: request.replicas, wait: request.wait }, 'scale requested');
      let drained: ValidatorId[] = [];
      if (request.replicas < previous) {
        if (request.wait === WaitFor.none) {
          drained = await this.#markLeaving(sts, request.replicas);
          if (!this.#leftTheSet(drained)) {
            log.info({ draining: drained }, 'draining in the background');
            return this.#result({
              name,
              previous,
              request,
              started,
              drained,
              outcome: ScaleOutcome.draining,
              missing: this.#missingLeaving(drained),
            });
          }
        } else {
          drained = await this.#drain(sts, request, deadline, signal);
          if (!this.#leftTheSet(drained)) {
            return this.#result({
              name,
              previous,
              request,
              started,
              drained,
              outcome: ScaleOutcome.timeout,
              missing: this.#missingLeaving(drained),
            });
          }
        }
      } else {
        await this.#undrain(sts, request.replicas);
      }
      await this.#patchReplicas(name, request.replicas);
      await this.#setScaleTarget(name, undefined);
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
        this.#manager,
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

  /**
   * Records the target on the StatefulSet (so a restarted manager finishes the drain) and marks
   * the pods of the leaving ordinals draining; returns the leaving ids.
   */
  async #markLeaving(sts: V1StatefulSet, replicas: number): Promise<ValidatorId[]> {
    const name = sts.metadata?.name ?? '';
    const leaving = this.#entries(name).filter((entry) => (entry.ordinal ?? 0) >= replicas);
    await this.#setScaleTarget(name, replicas);
    for (const entry of leaving) {
      if (entry.pod !== undefined && !entry.pod.draining)
        await this.#annotatePod(entry.pod.name, 'true');
    }
    if (leaving.length > 0) this.#manager.enqueueAll();
    return leaving.map((entry) => entry.id);
  }

  /** Marks the leaving pods draining and waits until their validators have left the set. */
  async #drain(
    sts: V1StatefulSet,
    request: ScaleRequest,
    deadline: number,
    signal: AbortSignal,
  ): Promise<ValidatorId[]> {
    const ids = await this.#markLeaving(sts, request.replicas);
    if (ids.length === 0) return ids;
    await this.#waitUntil(() => this.#leftTheSet(ids), { deadline, drive: request.drive, signal });
    return ids;
  }

  /** A scale-up cancels an unfinished drain of the ordinals it keeps. */
  async #undrain(sts: V1StatefulSet, replicas: number): Promise<void> {
    const name = sts.metadata?.name ?? '';
    if (sts.metadata?.annotations?.[Annotations.scaleTarget] !== undefined)
      await this.#setScaleTarget(name, undefined);
    for (const entry of this.#entries(name)) {
      if (entry.pod?.draining === true && (entry.ordinal ?? 0) < replicas)
        await this.#annotatePod(entry.pod.name, null);
    }
  }

  /**
   * Completes a drain left by an earlier request or a restarted manager: once every draining
   * pod's validator is out of the set, the replicas are lowered to the recorded target.
   */
  async finishDrains(): Promise<void> {
    if (this.#inFlight || this.#finishing || !this.#manager.isLeader) return;
    const sets = this.#manager.statefulSets();
    const [cached] = sets;
    if (sets.length !== 1 || cached === undefined) return;
    if (!Number.isInteger(Number(cached.metadata?.annotations?.[Annotations.scaleTarget]))) return;
    this.#finishing = true;
    try {
      // The cache may lag: a scale that just finished has cleared the target, and someone may
      // have scaled since (kubectl). Act only on what the API server holds now.
      const name = cached.metadata?.name ?? '';
      const { apps, namespace } = this.#manager.kube;
      const sts = await apps.readNamespacedStatefulSet({ name, namespace });
      const target = Number(sts.metadata?.annotations?.[Annotations.scaleTarget]);
      if (!Number.isInteger(target)) return;
      const replicas = sts.spec?.replicas ?? 1;
      const leaving = this.#entries(name)
        .filter((e) => (e.ordinal ?? 0) >= target)
        .map((e) => e.id);
      if (target < replicas && !this.#leftTheSet(leaving)) return;
      if (target < replicas) await this.#patchReplicas(name, target);
      await this.#setScaleTarget(name, undefined);
      this.#manager.logger.info(
        { statefulSet: name, replicas: target },
        'finished an earlier drain',
      );
    } catch (error: unknown) {
      this.#manager.logger.warn(
        { error: describeApiError(error) },
        'could not finish a drain; will retry',
      );
    } finally {
      this.#finishing = false;
    }
  }

  #entries(statefulSet: string): DesiredValidator[] {
    return [...this.#manager.desired().validators.values()].filter(
      (entry) =>
        entry.statefulSet?.name === statefulSet ||
        entry.pod?.name.startsWith(`${statefulSet}-`) === true,
    );
  }

  /** True when none of `ids` is staked any more: the block that removed them is committed. */
  #leftTheSet(ids: readonly ValidatorId[]): boolean {
    return ids.every((id) => {
      const entry = this.#manager.keys.get(id);
      if (entry?.ok !== true) return true;
      const status =
        this.#manager.chain.validators.get(entry.key.address)?.status ?? ChainStatus.absent;
      return (
        status !== ChainStatus.staked &&
        this.#manager.book.open.get(id) === undefined &&
        !this.#manager.chain.mempool.has(entry.key.address)
      );
    });
  }

  #missingLeaving(ids: readonly ValidatorId[]): Missing[] {
    const phases = new Map(this.#manager.plan().map((d) => [d.key, d]));
    return ids
      .filter((id) => !this.#leftTheSet([id]))
      .map((id) => ({
        id,
        phase: phases.get(id)?.phase ?? 'unknown',
        reason: phases.get(id)?.reason ?? 'still staked',
      }));
  }

  /** Validators not yet where `request` wants them (after the replicas were patched). */
  #missingAfter(statefulSet: string, request: ScaleRequest): Missing[] {
    const decisions = new Map(this.#manager.plan().map((d) => [d.key, d]));
    const entries = this.#entries(statefulSet);
    const wanted = entries.filter((e) => e.wanted && (e.ordinal ?? 0) < request.replicas);
    const missing: Missing[] = [];
    if (wanted.length < request.replicas) {
      missing.push({
        id: '-',
        phase: 'pending',
        reason: `${wanted.length} of ${request.replicas} ordinals are known to the manager yet`,
      });
    }
    for (const entry of wanted) {
      const decision = decisions.get(entry.id);
      const key = this.#manager.keys.get(entry.id);
      const address = key?.ok === true ? key.key.address : undefined;
      const staked =
        address !== undefined &&
        this.#manager.chain.validators.get(address)?.status === ChainStatus.staked;
      const active =
        staked &&
        hasProvenItself(
          { signers: this.#manager.chain.signers, stakeHeights: this.#manager.book.stakeHeights },
          address,
          entry.id,
        );
      const ok = request.wait === WaitFor.active ? active : staked;
      if (!ok)
        missing.push({
          id: entry.id,
          phase: decision?.phase ?? Phase.pending,
          reason: decision?.reason ?? 'not known yet',
        });
    }
    const leaving = entries.filter((e) => (e.ordinal ?? 0) >= request.replicas).map((e) => e.id);
    for (const id of leaving)
      if (!this.#leftTheSet([id]))
        missing.push({
          id,
          phase: decisions.get(id)?.phase ?? 'unknown',
          reason: 'still in the validator set',
        });
    return missing;
  }

  /**
   * Waits until `condition` holds, re-checking on every phase change and chain height (and at
   * least every second); with `drive`, commits blocks by triggering views meanwhile.
   */
  async #waitUntil(
    condition: () => boolean,
    options: { deadline: number; drive: boolean; signal: AbortSignal },
  ): Promise<boolean> {
    const manager = this.#manager;
    if (condition()) return true;
    return new Promise<boolean>((resolve) => {
      let settled = false;
      let cancelTimer: (() => void) | undefined;
      let driving = false;
      const finish = (value: boolean): void => {
        if (settled) return;
        settled = true;
        cancelTimer?.();
        manager.events.off('phase', check);
        manager.events.off('action', check);
        manager.events.off('height', check);
        options.signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = (): void => finish(false);
      const drive = (): void => {
        if (!options.drive || driving || settled) return;
        driving = true;
        manager.adapter
          .triggerView(options.signal)
          .catch((error: unknown) =>
            manager.logger.debug({ error: String(error) }, 'trigger view failed'),
          )
          .finally(() => {
            driving = false;
            manager.chain.poke();
          });
      };
      function check(): void {
        if (settled) return;
        if (condition()) finish(true);
        else if (manager.clock.now() >= options.deadline) finish(false);
        else drive();
      }
      const tick = (): void => {
        check();
        if (!settled)
          cancelTimer = manager.clock.setTimer(
            tick,
            Math.min(FALLBACK_CHECK_MS, Math.max(0, options.deadline - manager.clock.now())),
          );
      };
      manager.events.on('phase', check);
      manager.events.on('action', check);
      manager.events.on('height', check);
      options.signal.addEventListener('abort', onAbort, { once: true });
      tick();
    });
  }

  async #patchReplicas(name: string, replicas: number): Promise<void> {
    const { apps, namespace } = this.#manager.kube;
    try {
      await apps.patchNamespacedStatefulSetScale(
        { name, namespace, body: { spec: { replicas } } },
        mergePatch,
      );
    } catch (error: unknown) {
      throw new ManagerError(
        'KUBE_UNAVAILABLE',
        `could not patch the scale of StatefulSet ${name}: ${describeApiError(error)}`,
        { cause: error },
      );
    }
  }

  async #setScaleTarget(name: string, target: number | undefined): Promise<void> {
    const { apps, namespace } = this.#manager.kube;
    try {
      await apps.patchNamespacedStatefulSet(
        {
          name,
          namespace,
          body: {
            metadata: {
              annotations: {
                [Annotations.scaleTarget]: target === undefined ? null : String(target),
              },
            },
          },
        },
        mergePatch,
      );
    } catch (error: unknown) {
      throw new ManagerError(
        'KUBE_UNAVAILABLE',
        `could not annotate StatefulSet ${name}: ${describeApiError(error)}`,
        { cause: error },
      );
    }
  }

  /**
   * Marks (or unmarks) a pod draining. A pod that is gone (404: deleted since the cache saw it)
   * has nothing to mark: its replacement is judged by the StatefulSet's recorded scale target.
   */
  async #annotatePod(name: string, value: 'true' | null): Promise<void> {
    const { core, namespace } = this.#manager.kube;
    try {
      await core.patchNamespacedPod(
        { name, namespace, body: { metadata: { annotations: { [Annotations.draining]: value } } } },
        mergePatch,
      );
    } catch (error: unknown) {
      if (apiStatus(error) === 404) return;
      throw new ManagerError(
        'KUBE_UNAVAILABLE',
        `could not annotate pod ${name}: ${describeApiError(error)}`,
        { cause: error },
      );
    }
  }

  #result(parts: {
    name: string;
    previous: number;
    request: ScaleRequest;
    started: number;
    drained: ValidatorId[];
    outcome: ScaleOutcome;
    missing: Missing[];
  }): ScaleResult {
    return {
      statefulSet: parts.name,
      previous: parts.previous,
      replicas: parts.request.replicas,
      wait: parts.request.wait,
      outcome: parts.outcome,
      done: parts.outcome === ScaleOutcome.done,
      elapsedMs: this.#manager.clock.now() - parts.started,
      drained: parts.drained,
      missing: parts.missing,
      height: this.#manager.chain.height,
    };
  }
}
