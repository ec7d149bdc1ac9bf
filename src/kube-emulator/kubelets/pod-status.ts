// Builds a pod's status the way a kubelet reports it: phase, conditions, container statuses.
import { rfc3339 } from '../clock.ts';
import { isObject, objects, type JsonObject } from '../json.ts';
import type { KubeObject } from '../types.ts';

export type ContainerState =
  | { type: 'waiting'; reason: string; message?: string }
  | { type: 'running'; startedAt: number }
  | {
      type: 'terminated';
      exitCode: number;
      reason: string;
      startedAt?: number;
      finishedAt: number;
    };

export interface ContainerReport {
  name: string;
  state: ContainerState;
  ready: boolean;
  restartCount: number;
  /** The state the container was in before its last restart. */
  lastState?: ContainerState;
}

export interface PodReport {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  /** Whether the pod is scheduled (bound) yet. */
  scheduled: boolean;
  containers: readonly ContainerReport[];
  /** `kubectl debug` containers (status.ephemeralContainerStatuses, left out when none). */
  ephemeralContainers?: readonly ContainerReport[];
  podIP?: string;
  hostIP?: string;
  startTime?: number;
  now: number;
}

function stateJson(state: ContainerState): JsonObject {
  switch (state.type) {
    case 'waiting':
      return {
        waiting: {
          reason: state.reason,
          ...(state.message === undefined ? {} : { message: state.message }),
        },
      };
    case 'running':
      return { running: { startedAt: rfc3339(state.startedAt) } };
    case 'terminated':
      return {
        terminated: {
          exitCode: state.exitCode,
          reason: state.reason,
          ...(state.startedAt === undefined ? {} : { startedAt: rfc3339(state.startedAt) }),
          finishedAt: rfc3339(state.finishedAt),
        },
      };
  }
}

/** The pod's new status; conditions keep their lastTransitionTime while their status holds. */
export function podStatus(pod: KubeObject, report: PodReport): JsonObject {
  const previous = isObject(pod.status) ? pod.status : {};
  const oldConditions = objects(previous.conditions);
  const images = new Map(
    objects((pod.spec as JsonObject | undefined)?.containers).map((c) => [c.name, c.image]),
  );
  const ephemeralImages = new Map(
    objects((pod.spec as JsonObject | undefined)?.ephemeralContainers).map((c) => [
      c.name,
      c.image,
    ]),
  );
  const allReady = report.containers.length > 0 && report.containers.every((c) => c.ready);
  const started = report.containers.some((c) => c.state.type !== 'waiting' || c.restartCount > 0);
  const condition = (type: string, status: boolean, reason?: string): JsonObject => {
    const value = status ? 'True' : 'False';
    const old = oldConditions.find((c) => c.type === type);
    const lastTransitionTime = old?.status === value ? old.lastTransitionTime : rfc3339(report.now);
    return {
      type,
      status: value,
      lastProbeTime: null,
      lastTransitionTime,
      ...(reason === undefined || status ? {} : { reason }),
    };
  };
  const conditions = report.scheduled
    ? [
        condition('PodReadyToStartContainers', started),
        condition('Initialized', true),
        condition('Ready', allReady, 'ContainersNotReady'),
        condition('ContainersReady', allReady, 'ContainersNotReady'),
        condition('PodScheduled', true),
      ]
    : [condition('PodScheduled', false, 'Unschedulable')];
  return {
    ...previous,
    phase: report.phase,
    conditions,
    ...(report.hostIP === undefined
      ? {}
      : { hostIP: report.hostIP, hostIPs: [{ ip: report.hostIP }] }),
    ...(report.podIP === undefined ? {} : { podIP: report.podIP, podIPs: [{ ip: report.podIP }] }),
    ...(report.startTime === undefined ? {} : { startTime: rfc3339(report.startTime) }),
    containerStatuses: report.containers.map((c) => containerStatus(c, images)),
    ...(report.ephemeralContainers === undefined || report.ephemeralContainers.length === 0
      ? {}
      : {
          ephemeralContainerStatuses: report.ephemeralContainers.map((c) =>
            containerStatus(c, ephemeralImages),
          ),
        }),
    qosClass: previous.qosClass ?? 'BestEffort',
  };
}

function containerStatus(c: ContainerReport, images: ReadonlyMap<unknown, unknown>): JsonObject {
  const image = images.get(c.name);
  return {
    name: c.name,
    image: typeof image === 'string' ? image : '',
    imageID: '',
    ...(c.state.type === 'waiting' && c.restartCount === 0
      ? {}
      : { containerID: `emulator://${c.name}-${c.restartCount}` }),
    ready: c.ready,
    started: c.state.type === 'running',
    restartCount: c.restartCount,
    state: stateJson(c.state),
    lastState: c.lastState === undefined ? {} : stateJson(c.lastState),
  };
}

/** Whether a pod is Running and its Ready condition is True (and it is not being deleted). */
export function isPodReady(pod: KubeObject): boolean {
  const status = isObject(pod.status) ? pod.status : {};
  return (
    pod.metadata.deletionTimestamp === undefined &&
    status.phase === 'Running' &&
    objects(status.conditions).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/** The names of a pod's containers. */
export function containerNames(pod: KubeObject): string[] {
  const spec = isObject(pod.spec) ? pod.spec : {};
  return objects(spec.containers).map((c) => (typeof c.name === 'string' ? c.name : ''));
}
