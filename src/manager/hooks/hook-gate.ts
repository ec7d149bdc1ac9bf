// Lifecycle hooks around the manager's actions: readiness and pre-* hooks run before a stake or
// an unstake is written to the journal, post-* hooks once the chain shows the effect. Each pre or
// post hook runs once per action, across restarts: its run is recorded in the journal (keyed by
// the action) before it starts, and a recorded success is never run again.
import { backoffDelay, type BackoffPolicy } from '../backoff.ts';
import type { Clock } from '../clock.ts';
import type { HookRunRecord, Journal } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import {
  ActionKind,
  ActionState,
  ChainStatus,
  type ActionRecord,
  type ValidatorId,
} from '../model.ts';
import { Phase, Wait, type Decision } from '../planner/plan.ts';
import { FailurePolicy, HookPoint, type HookDefinition } from './hooks-file.ts';
import { runHook, type HookContext, type HookRunnerPorts, type HookResult } from './hook-runner.ts';

/** A `block` hook that failed is tried again after 1 s, 2 s, 4 s … at most 10 s (no jitter). */
const HOOK_RETRY = { initialMs: 1_000, maxMs: 10_000 } as const satisfies BackoffPolicy;

export interface HookGateOptions {
  hooks: readonly HookDefinition[];
  journal: Journal;
  ports: HookRunnerPorts;
  chainUrl: string;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Records a Kubernetes Event about a validator (the manager's recorder). */
  event: (id: ValidatorId, type: 'Normal' | 'Warning', reason: string, message: string) => void;
  /** A post hook's retry is due: the manager looks at the validators again. */
  onRetryDue: () => void;
}

/** The action waits on a hook. */
export interface HookHold {
  readonly kind: ActionKind;
  readonly reason: string;
  readonly retryInMs: number;
}

/** What `before` needs of a decided action. */
export interface PendingAction {
  readonly id: ValidatorId;
  readonly address: string;
  readonly kind: ActionKind;
  readonly serviceUrl?: string | undefined;
}

export class HookGate {
  readonly #o: HookGateOptions;
  /** Per validator: the action a `block` hook holds, and why (shown in plan and status). */
  readonly #holds = new Map<ValidatorId, HookHold>();
  /** Per validator: a failed `block` post hook being retried (shown in plan and status). */
  readonly #postFailures = new Map<ValidatorId, string>();
  /** `actionKey|hook` → when a failed `block` hook may run again. */
  readonly #notBefore = new Map<string, number>();
  /** `actionKey|hook` of runs that are settled for good (a phase refresh asks the file no more). */
  readonly #settled = new Set<string>();
  /** Post hooks running now, by action key (one run of an action's hooks at a time). */
  readonly #runningPost = new Set<string>();
  readonly #stop = new AbortController();
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(options: HookGateOptions) {
    this.#o = options;
  }

  /** The actions held by a failed `block` hook, by validator (the planner's `hookHolds`). */
  get holds(): ReadonlyMap<ValidatorId, HookHold> {
    return this.#holds;
  }

  /** Hooks of a point, in file order. */
  hooksOf(point: HookPoint): HookDefinition[] {
    return this.#o.hooks.filter((hook) => hook.on === point);
  }

  /**
   * The key of the next stake or unstake of a validator: its kind and the last action of it the
   * chain applied. A stake retried after a drop or a refusal is the same action; the stake after
   * an applied unstake is a new one.
   */
  nextActionKey(id: ValidatorId, kind: ActionKind): string {
    const { journal } = this.#o;
    const last = Math.max(
      journal.lastApplied(id, ActionKind.stake)?.seq ?? 0,
      journal.lastApplied(id, ActionKind.unstake)?.seq ?? 0,
    );
    return `${id}/${kind}/after-${last}`;
  }

  /**
   * Runs the readiness hooks (every time: a check, not an action) and then the pre-* hooks the
   * action has not passed yet, in file order. Undefined: the action may go. A hold: a `block`
   * hook failed (or ran out of time); the action waits and is tried again after `retryInMs`.
   */
  async before(action: PendingAction, signal: AbortSignal): Promise<HookHold | undefined> {
    const readiness = action.kind === ActionKind.stake ? this.hooksOf(HookPoint.readiness) : [];
    const pre = this.hooksOf(
      action.kind === ActionKind.stake ? HookPoint.preStake : HookPoint.preUnstake,
    );
    if (readiness.length === 0 && pre.length === 0) return undefined;
    const actionKey = this.nextActionKey(action.id, action.kind);
    for (const hook of readiness) {
      const context = this.#context(hook, action, `${actionKey}/readiness`);
      const result = await this.#run(hook, context, signal, undefined);
      if (!result.ok && hook.failurePolicy === FailurePolicy.block)
        return this.#hold(action, hook, { error: result.error, retryInMs: HOOK_RETRY.initialMs });
    }
    for (const hook of pre) {
      const run = this.#o.journal.hookRun(actionKey, hook.name);
      if (!this.#shouldRun(hook, run)) continue;
      const wait = this.#waitBeforeRetry(actionKey, hook);
      if (wait > 0)
        return this.#hold(action, hook, { error: run?.error ?? 'failed', retryInMs: wait });
      const context = this.#context(hook, action, actionKey);
      const result = await this.#run(hook, context, signal, actionKey);
      if (result.ok || hook.failurePolicy === FailurePolicy.continue) continue;
      if (result.cancelled)
        return this.#hold(action, hook, { error: result.error, retryInMs: HOOK_RETRY.initialMs });
      return this.#hold(action, hook, {
        error: result.error,
        retryInMs: this.#waitBeforeRetry(actionKey, hook),
      });
    }
    this.#holds.delete(action.id);
    return undefined;
  }

  /** The decision as plan and status show it: a hold or a failing post hook named in its reason. */
  overlay(decision: Decision): Decision {
    if (decision.id === undefined) return decision;
    const hold = this.#holds.get(decision.id);
    // A node height that went stale between two tries is asked again just before the next try:
    // until the hook passes, the hook is what the action waits for.
    if (
      hold !== undefined &&
      decision.action === hold.kind &&
      (decision.waitingFor === undefined || decision.waitingFor === Wait.nodeSync)
    )
      return { ...decision, waitingFor: Wait.hook, code: undefined, reason: hold.reason };
    const post = this.#postFailures.get(decision.id);
    if (post !== undefined) return { ...decision, reason: `${decision.reason}; ${post}` };
    return decision;
  }

  /**
   * Starts the post hooks the chain's state calls for: post-stake once a validator the manager
   * staked signs (phase active), post-unstake once one it unstaked has left the set. `latest` is
   * each validator's newest action. Nothing starts unless `canRun` (leading, synced, trusted, not
   * paused).
   */
  observe(
    decisions: readonly Decision[],
    latest: ReadonlyMap<ValidatorId, ActionRecord>,
    canRun: boolean,
  ): void {
    if (!canRun || this.#stop.signal.aborted) return;
    for (const decision of decisions) {
      const id = decision.id;
      if (id === undefined || decision.address === undefined) continue;
      const action = latest.get(id);
      if (action?.state !== ActionState.committed || (action.resultCode ?? 0) !== 0) continue;
      const point =
        action.kind === ActionKind.stake
          ? decision.phase === Phase.active
            ? HookPoint.postStake
            : undefined
          : decision.chainStatus !== ChainStatus.staked &&
              decision.chainStatus !== ChainStatus.paused
            ? HookPoint.postUnstake
            : undefined;
      if (point === undefined) continue;
      const hooks = this.hooksOf(point);
      if (hooks.length === 0) continue;
      const actionKey = `${id}/${action.kind}/${action.seq}`;
      if (this.#runningPost.has(actionKey)) continue;
      const due = hooks.filter((hook) => this.#isDue(actionKey, hook));
      if (due.length === 0) {
        this.#postFailures.delete(id);
        continue;
      }
      this.#runningPost.add(actionKey);
      const work = this.#runPost({
        id,
        address: decision.address,
        point,
        hooks: due,
        actionKey,
      }).finally(() => {
        this.#runningPost.delete(actionKey);
        this.#inFlight.delete(work);
      });
      this.#inFlight.add(work);
    }
  }

  /** Cancels running hooks (their runs are recorded as interrupted) and waits for them. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('the manager is stopping'));
    await Promise.allSettled([...this.#inFlight]);
  }

  async #runPost(run: {
    id: ValidatorId;
    address: string;
    point: HookPoint;
    hooks: readonly HookDefinition[];
    actionKey: string;
  }): Promise<void> {
    const { id, address, point, hooks, actionKey } = run;
    for (const hook of hooks) {
      const wait = this.#waitBeforeRetry(actionKey, hook);
      if (wait > 0) {
        this.#o.clock.setTimer(() => this.#o.onRetryDue(), wait);
        return;
      }
      const context = this.#context(
        hook,
        { id, address, kind: ActionKind.stake },
        actionKey,
        point,
      );
      const result = await this.#run(hook, context, this.#stop.signal, actionKey);
      if (result.ok || hook.failurePolicy === FailurePolicy.continue) continue;
      if (result.cancelled) return;
      this.#postFailures.set(
        id,
        `${point} hook "${hook.name}" failed (${result.error}); trying again`,
      );
      this.#o.clock.setTimer(() => this.#o.onRetryDue(), this.#waitBeforeRetry(actionKey, hook));
      return;
    }
    this.#postFailures.delete(id);
  }

  /** Whether a post hook still has to run for an action (settled answers are remembered). */
  #isDue(actionKey: string, hook: HookDefinition): boolean {
    const key = `${actionKey}|${hook.name}`;
    if (this.#settled.has(key)) return false;
    const due = this.#shouldRun(hook, this.#o.journal.hookRun(actionKey, hook.name));
    if (!due) this.#settled.add(key);
    return due;
  }

  /** Whether a pre or post hook still has to run for an action, given its recorded run. */
  #shouldRun(hook: HookDefinition, run: HookRunRecord | undefined): boolean {
    if (run === undefined) return true;
    switch (run.state) {
      case 'succeeded':
        return false;
      case 'interrupted': // cancelled by a stop of this manager: it did not finish
        return true;
      case 'failed':
        return hook.failurePolicy === FailurePolicy.block;
      case 'running': {
        // Not running here: a manager died while it ran. A `block` hook must be seen to pass;
        // a `continue` hook may have had its effect and is not run a second time.
        if (hook.failurePolicy === FailurePolicy.block) return true;
        this.#o.journal.finishHookRun(run.actionKey, hook.name, {
          state: 'failed',
          error: 'the manager stopped while it ran; not run again (failurePolicy continue)',
        });
        this.#o.logger.warn(
          { validator: run.validatorId, hook: hook.name, actionKey: run.actionKey },
          'a continue hook was running when the manager stopped; it is not run again',
        );
        return false;
      }
    }
  }

  /** Milliseconds until a failed `block` hook of an action may run again (0: now). */
  #waitBeforeRetry(actionKey: string, hook: HookDefinition): number {
    const at = this.#notBefore.get(`${actionKey}|${hook.name}`);
    return at === undefined ? 0 : Math.max(0, at - this.#o.clock.now());
  }

  #hold(
    action: PendingAction,
    hook: HookDefinition,
    { error, retryInMs }: { error: string; retryInMs: number },
  ): HookHold {
    const verb = hook.on === HookPoint.readiness ? 'waiting for' : 'held by';
    const hold: HookHold = {
      kind: action.kind,
      retryInMs,
      reason: `HOOK_FAILED: ${action.kind} ${verb} ${hook.on} hook "${hook.name}": ${error}; trying again in ${Math.ceil(retryInMs / 1000)} s`,
    };
    this.#holds.set(action.id, hold);
    return hold;
  }

  #context(
    hook: HookDefinition,
    action: PendingAction,
    actionKey: string,
    point: HookPoint = hook.on,
  ): HookContext {
    return {
      point,
      validatorId: action.id,
      address: action.address,
      chainUrl: this.#o.chainUrl,
      actionKey,
      serviceUrl: action.serviceUrl,
    };
  }

  /** Runs a hook; journals it when it belongs to an action (`actionKey`); reports the outcome. */
  async #run(
    hook: HookDefinition,
    context: HookContext,
    signal: AbortSignal,
    actionKey: string | undefined,
  ): Promise<HookResult> {
    const { journal, logger, metrics } = this.#o;
    const about = { validator: context.validatorId, hook: hook.name, phase: hook.on };
    const retryKey = `${context.actionKey}|${hook.name}`;
    let attempts = 1;
    if (actionKey !== undefined)
      attempts = journal.startHookRun({
        actionKey,
        hook: hook.name,
        point: hook.on,
        validatorId: context.validatorId,
      }).attempts;
    const result = await runHook(hook, context, this.#o.ports, signal);
    if (actionKey !== undefined)
      journal.finishHookRun(actionKey, hook.name, {
        state: result.ok ? 'succeeded' : result.cancelled ? 'interrupted' : 'failed',
        error: result.ok ? undefined : result.error,
      });
    const outcome = result.ok ? 'succeeded' : result.cancelled ? 'cancelled' : 'failed';
    metrics.hookRuns.inc({ phase: hook.on, hook: hook.name, result: outcome });
    if (result.ok) {
      this.#notBefore.delete(retryKey);
      const note = result.note === undefined ? '' : ` but ${result.note}`;
      if (note !== '')
        logger.warn({ ...about, note: result.note }, `${hook.on} hook succeeded${note}`);
      if (hook.on === HookPoint.readiness) return result;
      if (note === '')
        logger.info({ ...about, durationMs: result.durationMs }, `${hook.on} hook succeeded`);
      this.#o.event(
        context.validatorId,
        'Normal',
        'HookSucceeded',
        `${hook.on} hook "${hook.name}" succeeded${note}`,
      );
      return result;
    }
    if (result.cancelled) return result;
    if (hook.on === HookPoint.readiness) {
      // Not ready yet is a wait, not a failure: no Event per check.
      logger.debug({ ...about, error: result.error }, 'readiness hook: not ready');
      return result;
    }
    const delay = backoffDelay(HOOK_RETRY, attempts);
    if (hook.failurePolicy === FailurePolicy.block)
      this.#notBefore.set(retryKey, this.#o.clock.now() + delay);
    logger.warn(
      { ...about, error: result.error, failurePolicy: hook.failurePolicy, attempts },
      `${hook.on} hook failed`,
    );
    this.#o.event(
      context.validatorId,
      'Warning',
      'HookFailed',
      `${hook.on} hook "${hook.name}" failed (${hook.failurePolicy === FailurePolicy.block ? 'blocking; will try again' : 'continuing'}): ${result.error}`,
    );
    return result;
  }
}
