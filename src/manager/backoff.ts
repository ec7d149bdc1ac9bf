// The manager's one retry-delay formula: capped exponential growth with a multiplicative jitter,
// used by the work queue, the informers, leader election and the hook gate. Pure: it never reads
// time (callers wait through their injected Clock) and takes its random source as a parameter.

/** A source of uniform draws in [0, 1), like `Math.random` (the default, read at call time). */
export type Random = () => number;

/**
 * A delay that doubles from `initialMs` per attempt up to `maxMs`, then is multiplied by a factor
 * drawn from [`jitter.min`, `jitter.max`] (both ends can be reached once the result is rounded).
 */
export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Factor bounds; `{ min: 1, max: 1 }` (the default) is no jitter. */
  readonly jitter?: JitterRange | undefined;
}

export interface JitterRange {
  readonly min: number;
  readonly max: number;
}

export const NO_JITTER: JitterRange = { min: 1, max: 1 };

/** Doubling stops here: 2^30 times any initial delay is past every cap we use. */
const MAX_DOUBLINGS = 30;

/** `ms` times a factor drawn uniformly from `range`, rounded to a whole millisecond. */
export function jittered(ms: number, range: JitterRange, random: Random = Math.random): number {
  if (range.min === range.max) return Math.round(ms * range.min);
  return Math.round(ms * (range.min + random() * (range.max - range.min)));
}

/**
 * The un-jittered delay before retry number `attempt` (1 = the first retry): `initialMs`, then
 * twice that, and so on, never above `maxMs`.
 */
export function cappedDelay(policy: BackoffPolicy, attempt: number): number {
  const doublings = Math.min(Math.max(attempt - 1, 0), MAX_DOUBLINGS);
  return Math.min(policy.maxMs, policy.initialMs * 2 ** doublings);
}

/** The delay before retry number `attempt`, jittered by the policy's range. */
export function backoffDelay(
  policy: BackoffPolicy,
  attempt: number,
  random: Random = Math.random,
): number {
  return jittered(cappedDelay(policy, attempt), policy.jitter ?? NO_JITTER, random);
}

/** Per-stream state over `backoffDelay`: each `next()` is one more failure, `reset()` a success. */
export class Backoff {
  readonly #policy: BackoffPolicy;
  readonly #random: Random | undefined;
  #attempts = 0;

  constructor(policy: BackoffPolicy, random?: Random) {
    this.#policy = policy;
    this.#random = random;
  }

  /** Failures since the last success. */
  get attempts(): number {
    return this.#attempts;
  }

  /** The delay to wait after one more failure. */
  next(): number {
    this.#attempts++;
    return backoffDelay(this.#policy, this.#attempts, this.#random ?? Math.random);
  }

  /** A success: the next failure waits `initialMs` (jittered) again. */
  reset(): void {
    this.#attempts = 0;
  }
}
