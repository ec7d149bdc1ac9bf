// The time source every timer of the emulator goes through, so tests can inject their own.

/** Cancels a pending timer; calling it after the timer fired does nothing. */
export type Cancel = () => void;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. The timer never keeps the process alive. */
  setTimeout(fn: () => void, ms: number): Cancel;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * RFC 3339 to the second, as Kubernetes writes every metav1.Time (`creationTimestamp`, a
 * container's `startedAt`: `2026-11-29T14:04:05Z`): apimachinery's pkg/apis/meta/v1/time.go
 * marshals with `t.UTC().AppendFormat(buf, time.RFC3339)`, which drops the fraction.
 */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** RFC 3339 with microseconds, as Kubernetes writes MicroTime fields. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
