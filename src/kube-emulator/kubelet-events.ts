// Events the fake kubelets write about a pod's containers (`Killing`, `FailedPreStopHook`,
// `FailedPostStartHook`), shaped as a kubelet's event recorder writes them: a core/v1 Event named
// `<pod>.<16 hex>`, source `kubelet` on the node, the container as `spec.containers{name}`.
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.ts';
import { rfc3339 } from './clock.ts';
import { kindOf } from './kinds.ts';
import { NODE_NAME } from './kubelet.ts';
import type { ResourceApi } from './resource-api.ts';
import type { KubeObject } from './types.ts';

const events = kindOf('', 'events');

export interface PodEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** The container the event is about (its `fieldPath`). */
  container?: string;
}

/** Writes an Event about `pod`; a failure to write one never stops what the kubelet is doing. */
export function recordPodEvent(
  api: ResourceApi,
  clock: Clock,
  pod: KubeObject,
  event: PodEvent,
): void {
  const namespace = pod.metadata.namespace ?? '';
  const now = rfc3339(clock.now());
  try {
    api.create(events, namespace, {
      metadata: { name: `${pod.metadata.name ?? ''}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        namespace,
        name: pod.metadata.name ?? '',
        uid: pod.metadata.uid ?? '',
        ...(event.container === undefined
          ? {}
          : { fieldPath: `spec.containers{${event.container}}` }),
      },
      reason: event.reason,
      message: event.message,
      type: event.type,
      source: { component: 'kubelet', host: NODE_NAME },
      reportingComponent: 'kubelet',
      reportingInstance: NODE_NAME,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
  } catch {
    // The namespace may be going away with the pod.
  }
}
