// Why a scale's wait cannot end, found while it waits: a validator whose state only a person can
// change (a key missing, duplicated or malformed, a pod conflict, a terminal failure, a hold),
// a manager paused meanwhile, or a chain that makes no blocks while nobody drives it (a manual
// pacemaker without --drive), or a validator that cannot vote on a chain with no state sync for
// late joiners (NO_STATE_SYNC: refused since it would halt the chain, or staked but silent for
// good, so `--wait active` cannot end). The scaler stops waiting with SCALE_BLOCKED and the reason instead
// of waiting out its timeout; the manager itself goes on.
import type { Clock } from '../clock.ts';
import { ManagerError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { DecisionCode } from '../model.ts';
import { Phase } from '../planner/plan.ts';
import type { ReadModel, ViewDriver } from '../read-model.ts';
import { toMissing, type ScaleRequest, type Unmet } from './scaler.ts';

/** A reason the wait cannot end by itself. */
export interface Blocker {
  code: 'VALIDATOR_STUCK' | 'NO_STATE_SYNC' | 'PAUSED' | 'NO_BLOCKS';
  message: string;
}

/** A chain is "making no blocks" once its last block is older than this (and 5 block gaps). */
export const MIN_STALL_MS = 10_000;
/**
 * A validator counts as stuck once it has been so for this long: the Secret and the pods are
 * read through caches, and a key added together with the scale may arrive a moment later.
 */
export const STUCK_FOR_MS = 1_000;
const STALL_GAPS = 5;
const CHECK_MS = 500;

export interface BlockerInput {
  paused: boolean;
  drive: boolean;
  /** Who is not there yet, with the planner's phase, code and reason. */
  missing: readonly Unmet[];
  /** The manager's clock now, and when it last saw the height move (or the wait began). */
  now: number;
  quietSince: number;
  /** The chain's own gap between its last two blocks (header times), when known. */
  blockGapMs: number | undefined;
}

/**
 * True for a phase and reason that stay as they are until someone changes the cluster: a key
 * problem, a conflict, a terminal failure, a hold. A service URL that cannot be filled yet (no
 * pod IP) is not one of them: it fills itself.
 */
export function isStuck(missing: Unmet): boolean {
  if (missing.phase === Phase.held) return true;
  return missing.phase === Phase.failed && missing.code !== DecisionCode.serviceUrlUnfilled;
}

/** The first reason the wait cannot end, or undefined while it still can. */
export function findBlocker(input: BlockerInput): Blocker | undefined {
  if (input.missing.length === 0) return undefined;
  const stuck = input.missing.filter(isStuck);
  if (stuck.length > 0)
    return {
      code: 'VALIDATOR_STUCK',
      message: stuck.map((m) => `${m.id} is ${m.phase}: ${m.reason}`).join('; '),
    };
  const silent = input.missing.filter((m) => m.code === DecisionCode.noStateSync);
  if (silent.length > 0)
    return {
      code: 'NO_STATE_SYNC',
      message: silent.map((m) => `${m.id} is ${m.phase}: ${m.reason}`).join('; '),
    };
  if (input.paused)
    return {
      code: 'PAUSED',
      message: 'the manager was paused meanwhile; `cluster-manager resume` lets it go on',
    };
  if (!input.drive) {
    // Both times are the manager's (the chain's clock may be off); the chain's own pace, from
    // two of its headers, only widens the window for a chain that is slow by design.
    const stallMs = Math.max(MIN_STALL_MS, (input.blockGapMs ?? 0) * STALL_GAPS);
    const quiet = input.now - input.quietSince;
    if (quiet >= stallMs)
      return {
        code: 'NO_BLOCKS',
        message:
          `the chain has made no block in the last ${Math.round(quiet / 1000)} s and this scale needs blocks; ` +
          'a chain with a manual pacemaker makes them only when driven: pass --drive (or run trigger-view)',
      };
  }
  return undefined;
}

/**
 * Watches a scale's wait for a blocker: `signal` aborts when one is found (or when `outer`
 * aborts); `throwIfBlocked` then raises SCALE_BLOCKED naming it.
 */
/** What a BlockerWatch reads: the manager's state, block times, the clock; it logs the blocker. */
export interface BlockerPorts {
  read: Pick<ReadModel, 'chain' | 'paused'>;
  driver: Pick<ViewDriver, 'blockTime'>;
  clock: Clock;
  logger: Logger;
}

export class BlockerWatch {
  readonly #p: BlockerPorts;
  readonly #request: ScaleRequest;
  readonly #missing: () => Unmet[];
  readonly #controller = new AbortController();
  #height: number;
  #quietSince: number;
  #stuckSince: number | undefined;
  #blocker: Blocker | undefined;
  #cancel: (() => void) | undefined;
  #stopped = false;

  constructor(
    ports: BlockerPorts,
    request: ScaleRequest,
    missing: () => Unmet[],
    outer: AbortSignal,
  ) {
    this.#p = ports;
    this.#request = request;
    this.#missing = missing;
    this.#height = ports.read.chain.height;
    this.#quietSince = ports.clock.now();
    if (outer.aborted) this.#controller.abort(outer.reason);
    else
      outer.addEventListener('abort', () => this.#controller.abort(outer.reason), { once: true });
    this.#schedule(0);
  }

  /** Aborts when a blocker is found or the outer signal aborts. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  stop(): void {
    this.#stopped = true;
    this.#cancel?.();
  }

  /** Raises SCALE_BLOCKED when the wait ended because of a blocker. */
  throwIfBlocked(scale: { statefulSet: string; previous: number }): void {
    const blocker = this.#blocker;
    if (blocker === undefined) return;
    const { replicas } = this.#request;
    throw new ManagerError(
      'SCALE_BLOCKED',
      `${scale.statefulSet} is set to ${replicas} replicas, but the wait cannot end: ${blocker.message}`,
      {
        details: {
          reason: blocker.code,
          statefulSet: scale.statefulSet,
          previous: scale.previous,
          replicas,
          missing: this.#missing().map(toMissing),
        },
      },
    );
  }

  #schedule(ms: number): void {
    if (this.#stopped || this.#controller.signal.aborted) return;
    this.#cancel = this.#p.clock.setTimer(() => void this.#check(), ms);
  }

  async #check(): Promise<void> {
    const { read, driver, clock, logger } = this.#p;
    const height = read.chain.height;
    if (height !== this.#height) {
      this.#height = height;
      this.#quietSince = clock.now();
    }
    let blockGapMs: number | undefined;
    if (!this.#request.drive) {
      const [last, before] = await Promise.all([
        driver.blockTime(height),
        driver.blockTime(height - 1),
      ]);
      if (last !== undefined && before !== undefined) blockGapMs = Math.max(0, last - before);
    }
    if (this.#stopped || this.#controller.signal.aborted) return;
    const blocker = findBlocker({
      paused: read.paused,
      drive: this.#request.drive,
      missing: this.#missing(),
      now: clock.now(),
      quietSince: this.#quietSince,
      blockGapMs,
    });
    if (blocker?.code === 'VALIDATOR_STUCK' || blocker?.code === 'NO_STATE_SYNC') {
      this.#stuckSince ??= clock.now();
      if (clock.now() - this.#stuckSince < STUCK_FOR_MS) return this.#schedule(CHECK_MS);
    } else this.#stuckSince = undefined;
    if (blocker === undefined) return this.#schedule(CHECK_MS);
    this.#blocker = blocker;
    logger.info({ component: 'scale', blocker: blocker.code }, 'the scale cannot finish');
    this.#controller.abort(new Error(blocker.message));
  }
}
