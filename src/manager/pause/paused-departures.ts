// Says out loud when the cluster removes validator pods while the managers are paused (issue 30,
// item 6; planner/paused-departure.ts): once per pod, a Warning Event and a log line when such a
// pod is held (its validator staked, until when, and what then), and again when the pause gives
// way and its validator is unstaked; and it looks at the validator again at the moment its hold
// ends, since on a chain that makes no block by itself nothing else would.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { ActionKind, type ActionRecord, type DesiredState, type ValidatorId } from '../model.ts';
import { isoSecond, pausedDeparture } from '../planner/paused-departure.ts';
import { Wait, type Decision } from '../planner/plan.ts';

export interface PausedDeparturesOptions {
  clock: Clock;
  logger: Logger;
  marginMs: number;
  event: (id: ValidatorId, type: 'Warning', reason: string, message: string) => void;
  /** Looks at a validator again (the work queue). */
  enqueue: (id: ValidatorId) => void;
}

export class PausedDepartures {
  readonly #o: PausedDeparturesOptions;
  /** `uid|held` and `uid|yielded` already reported; the hold's timer by pod uid. */
  readonly #reported = new Set<string>();
  readonly #timers = new Map<string, () => void>();

  constructor(options: PausedDeparturesOptions) {
    this.#o = options;
  }

  /** Called with every refresh of the plan; `open`: the journal's open actions by validator. */
  observe(
    decisions: readonly Decision[],
    desired: DesiredState,
    open: ReadonlyMap<ValidatorId, ActionRecord>,
    paused: boolean,
  ): void {
    if (!paused) {
      this.#clearTimers();
      this.#reported.clear(); // a pause later says it all again
      return;
    }
    const now = this.#o.clock.now();
    for (const d of decisions) {
      if (d.id === undefined) continue;
      // Going now, or gone out already (its unstake open): the pause gave way to the departure.
      const going =
        (d.action === ActionKind.unstake && d.waitingFor === undefined) ||
        open.get(d.id)?.kind === ActionKind.unstake;
      if (d.action !== ActionKind.unstake && !going) continue;
      const entry = desired.validators.get(d.id);
      const departure = pausedDeparture(entry, this.#o.marginMs);
      const uid = entry?.pod?.uid;
      if (departure === undefined || uid === undefined) continue;
      const id = d.id;
      if (d.waitingFor === Wait.paused) {
        this.#once(`${uid}|held`, id, 'PausedDeparture', d.reason);
        if (!this.#timers.has(uid) && departure.yieldAt > now)
          this.#timers.set(
            uid,
            this.#o.clock.setTimer(() => {
              this.#timers.delete(uid);
              this.#o.enqueue(id);
            }, departure.yieldAt - now),
          );
      } else if (going && now >= departure.yieldAt)
        this.#once(
          `${uid}|yielded`,
          id,
          'PauseYielded',
          `the managers are paused, but pod ${departure.pod} is killed at ${isoSecond(departure.killAt)}: validator ${id} is unstaked now, while its node still votes (resume to end the pause)`,
        );
    }
  }

  stop(): void {
    this.#clearTimers();
  }

  #once(key: string, id: ValidatorId, reason: string, message: string): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#o.logger.warn({ validator: id, reason }, message);
    this.#o.event(id, 'Warning', reason, message);
  }

  #clearTimers(): void {
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
  }
}
