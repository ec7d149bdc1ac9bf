// Phase bookkeeping, in one place: what each validator's phase was at the last look, the changes
// since (streamed as `phase` events), and the gauges that count phases. The manager feeds it every
// plan it refreshes; a metrics scrape sets the same gauges from the plan of that moment.
import type { Metrics } from './metrics.ts';
import { DecisionCode, type ValidatorId } from './model.ts';
import { Phase, type Decision } from './planner/plan.ts';

/** A phase change of one validator (also streamed by GET /v1/events). */
export interface PhaseChange {
  key: string;
  id: ValidatorId | undefined;
  from: Phase | undefined;
  to: Phase;
  reason: string;
}

/** Each validator's phase at the last `observe`, and the changes from one look to the next. */
export class PhaseTracker {
  #last = new Map<string, { phase: Phase; id: ValidatorId | undefined }>();

  /** The phase of `key` at the last look. */
  phaseOf(key: string): Phase | undefined {
    return this.#last.get(key)?.phase;
  }

  /** Whether `key` was in the last plan seen. */
  has(key: string): boolean {
    return this.#last.has(key);
  }

  /**
   * Diffs `decisions` against the last look: a change per validator whose phase moved (in plan
   * order), then one per validator no longer planned (it went `unstaked`, "no longer tracked").
   */
  observe(decisions: readonly Decision[]): PhaseChange[] {
    const next = new Map<string, { phase: Phase; id: ValidatorId | undefined }>();
    const changes: PhaseChange[] = [];
    for (const d of decisions) {
      next.set(d.key, { phase: d.phase, id: d.id });
      const from = this.#last.get(d.key)?.phase;
      if (from !== d.phase)
        changes.push({ key: d.key, id: d.id, from, to: d.phase, reason: d.reason });
    }
    for (const [key, last] of this.#last) {
      if (!next.has(key))
        changes.push({
          key,
          id: last.id,
          from: last.phase,
          to: Phase.unstaked,
          reason: 'no longer tracked',
        });
    }
    this.#last = next;
    return changes;
  }
}

/**
 * Sets the gauges a plan determines: validators per phase, staked and active validators, and the
 * ones that cannot vote on a chain without state sync (staked but silent, or refused).
 */
export function setPlanGauges(metrics: Metrics, decisions: readonly Decision[]): void {
  const counts = new Map<Phase, number>();
  const cannotVote = { staked: 0, refused: 0 };
  for (const d of decisions) {
    counts.set(d.phase, (counts.get(d.phase) ?? 0) + 1);
    if (d.code === DecisionCode.noStateSync)
      cannotVote[d.phase === Phase.staked ? 'staked' : 'refused']++;
  }
  for (const phase of Object.values(Phase)) metrics.phases.set({ phase }, counts.get(phase) ?? 0);
  metrics.validators.set(
    { view: 'staked' },
    (counts.get(Phase.staked) ?? 0) + (counts.get(Phase.active) ?? 0),
  );
  metrics.validators.set({ view: 'active' }, counts.get(Phase.active) ?? 0);
  metrics.cannotVote.set({ state: 'staked' }, cannotVote.staked);
  metrics.cannotVote.set({ state: 'refused' }, cannotVote.refused);
}
