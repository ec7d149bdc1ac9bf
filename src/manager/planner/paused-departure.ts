// A validator whose pod the cluster removes while the managers are paused (issue 30, item 6):
// `kubectl scale` 7 → 4 cannot be refused, and the pause held the unstakes until the preStop hooks
// gave up, the nodes exited and three staked rows were left without a node — a halt that `resume`
// could not undo (an unstake needs a block). Now such a pod is held (its preStop hook waits while
// its validator is staked, and the pause holds the unstake) until `pauseDepartureMarginMs` before
// the kubelet kills it; from then its validator is unstaked as if not paused, while its node
// still votes, so that it leaves the set before its node is gone. A resume or a scale back up
// before then keeps it staked.
import type { DesiredValidator } from '../model.ts';

export interface PausedDeparture {
  readonly pod: string;
  /** Epoch ms at which the kubelet kills the pod (its deletionTimestamp). */
  readonly killAt: number;
  /** Epoch ms from which its validator is unstaked despite the pause. */
  readonly yieldAt: number;
}

/**
 * The departure of `entry`'s pod, when the cluster is removing it (terminating) and no longer wants
 * its validator; undefined otherwise, or when the margin is not set.
 */
export function pausedDeparture(
  entry: DesiredValidator | undefined,
  marginMs: number | undefined,
): PausedDeparture | undefined {
  const pod = entry?.pod;
  if (entry === undefined || entry.wanted || marginMs === undefined) return undefined;
  if (pod?.terminating !== true || pod.deletingAt === undefined) return undefined;
  return { pod: pod.name, killAt: pod.deletingAt, yieldAt: pod.deletingAt - marginMs };
}

/** Epoch ms as ISO 8601 to the second, for reasons. */
export function isoSecond(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
