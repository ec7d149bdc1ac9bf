// Phase refreshes, a part of the reconcile loop: after a change, the whole plan is computed again
// and diffed against the last one. Phase changes become `phase` events, the plan gauges are set,
// the hook gate and the paused departures see the decisions, and a validator that lacks its key
// or cannot vote is reported (a log line and a Warning Event) once until that changes.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { DecisionCode, type ValidatorId } from '../model.ts';
import { PacedRun } from '../paced-run.ts';
import { PhaseTracker, setPlanGauges, type PhaseChange } from '../phase-tracker.ts';
import type { Decision, Phase } from '../planner/plan.ts';

/** Refreshes wait this long after a change, and ten times their cost after the last one. */
const PHASE_REFRESH_DELAY_MS = 50;
const PHASE_REFRESH_SPACING = 10;

/** What a refresh reads and whom it tells. */
export interface PhaseRefreshOptions {
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Every validator's decision now (journal health overlaid). */
  plan(): Decision[];
  /** Those who act on decisions: hook gate, paused departures, gauges of the queue. */
  observers: ((decisions: readonly Decision[]) => void)[];
  phaseChanged(change: PhaseChange): void;
  /** Where a validator's Warning Event goes, and how it is recorded. */
  warn(id: ValidatorId, reason: string, message: string): void;
}

export class PhaseRefresh {
  readonly #o: PhaseRefreshOptions;
  readonly #phases = new PhaseTracker();
  /**
   * 50 ms after the first change, and no sooner than ten times the last refresh's cost after it
   * ended. A refresh plans every validator (5 ms at a thousand), and every reconcile pass asks for
   * one: in a burst of a thousand the refreshes take at most about a tenth of the CPU, and phase
   * events come at most a few hundred ms late.
   */
  readonly #runs: PacedRun;
  /** Ids whose NO_STATE_SYNC was reported (once per phase, until it changes). */
  readonly #reportedCannotVote = new Map<ValidatorId, Phase>();
  /** Ids whose KEY_MISSING was logged (once, until it changes). */
  readonly #reportedMissing = new Set<ValidatorId>();
  #stopped = false;

  constructor(options: PhaseRefreshOptions) {
    this.#o = options;
    this.#runs = new PacedRun({
      clock: options.clock,
      spacing: PHASE_REFRESH_SPACING,
      minDelayMs: PHASE_REFRESH_DELAY_MS,
      run: () => {
        if (!this.#stopped) this.#refresh();
      },
    });
  }

  /** Asks for a refresh (coalesced and paced). */
  request(): void {
    this.#runs.request();
  }

  /** No refresh runs after this. */
  stop(): void {
    this.#stopped = true;
  }

  /** Diffs phases against the last refresh: emits changes, updates gauges, reports new gaps. */
  #refresh(): void {
    const decisions = this.#o.plan();
    for (const change of this.#phases.observe(decisions)) this.#o.phaseChanged(change);
    for (const decision of decisions) {
      this.#reportKeyMissing(decision);
      this.#reportCannotVote(decision);
    }
    for (const observe of this.#o.observers) observe(decisions);
    for (const id of this.#reportedMissing)
      if (!this.#phases.has(id)) this.#reportedMissing.delete(id);
    for (const id of this.#reportedCannotVote.keys())
      if (!this.#phases.has(id)) this.#reportedCannotVote.delete(id);
    setPlanGauges(this.#o.metrics, decisions);
  }

  /** A wanted validator without a key: logged and an Event, once until that changes. */
  #reportKeyMissing(decision: Decision): void {
    const id = decision.id;
    if (id === undefined) return;
    if (decision.code !== DecisionCode.keyMissing) {
      this.#reportedMissing.delete(id);
      return;
    }
    if (this.#reportedMissing.has(id)) return;
    this.#reportedMissing.add(id);
    this.#o.logger.warn({ validator: id, code: 'KEY_MISSING' }, decision.reason);
    this.#o.warn(id, 'KeyMissing', decision.reason);
  }

  /**
   * A validator that cannot vote (no state sync for late joiners): logged and a Warning Event,
   * once per phase (refused while pending, then staked if it was), until that changes.
   */
  #reportCannotVote(decision: Decision): void {
    const id = decision.id;
    if (id === undefined) return;
    if (decision.code !== DecisionCode.noStateSync) {
      this.#reportedCannotVote.delete(id);
      return;
    }
    if (this.#reportedCannotVote.get(id) === decision.phase) return;
    this.#reportedCannotVote.set(id, decision.phase);
    this.#o.logger.warn(
      { validator: id, code: 'NO_STATE_SYNC', phase: decision.phase },
      decision.reason,
    );
    this.#o.warn(id, 'CannotVote', `validator ${id}: ${decision.reason}`);
  }
}
