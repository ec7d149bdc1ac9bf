// What the manager keeps of a pod in its informer cache: the fields it reads (pod-view.ts,
// desired-state.ts, kubernetes-source.ts, the event recorder) and nothing else. A pod from a real
// API server carries its whole spec, managedFields and container statuses (2–8 KiB of JSON, about
// ten times that in objects); at 1,000 validators the full objects were most of what the cache
// held (issue 15: "keep the informer caches lean"). A field read from a pod must be kept here:
// test/manager/lean-pod.unit.test.ts renders every pod view from the lean and the full pod alike.
import type {
  V1Container,
  V1ContainerState,
  V1ContainerStatus,
  V1Pod,
  V1ObjectMeta,
  V1PodCondition,
  V1PodStatus,
} from '@kubernetes/client-node';

/** `object` without its undefined fields (the cache holds no empty keys). */
const defined = <T extends object>(object: { [K in keyof T]: T[K] | undefined }): T =>
  Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;

function leanContainer(container: V1Container): V1Container {
  return defined<V1Container>({ name: container.name, ports: container.ports });
}

function leanCondition(condition: V1PodCondition): V1PodCondition {
  return { type: condition.type, status: condition.status };
}

/** Only a running state, and only its start: when the node read its key (pod-view.ts). */
function leanState(state: V1ContainerState | undefined): V1ContainerState | undefined {
  const startedAt = state?.running?.startedAt;
  return startedAt === undefined ? undefined : { running: { startedAt } };
}

function leanContainerStatus(status: V1ContainerStatus): V1ContainerStatus {
  return defined<V1ContainerStatus>({
    name: status.name,
    ready: status.ready,
    restartCount: status.restartCount,
    image: status.image,
    imageID: status.imageID,
    state: leanState(status.state),
  });
}

/** The pod as the manager's cache keeps it. */
export function leanPod(pod: V1Pod): V1Pod {
  const { metadata, spec, status } = pod;
  return defined<V1Pod>({
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata:
      metadata === undefined
        ? undefined
        : defined<V1ObjectMeta>({
            name: metadata.name,
            namespace: metadata.namespace,
            uid: metadata.uid,
            resourceVersion: metadata.resourceVersion,
            creationTimestamp: metadata.creationTimestamp,
            deletionTimestamp: metadata.deletionTimestamp,
            labels: metadata.labels,
            annotations: metadata.annotations,
            ownerReferences: metadata.ownerReferences,
          }),
    // `containers` is required, but a malformed pod must not throw inside the watch's callback.
    spec:
      spec === undefined
        ? undefined
        : { containers: ((spec.containers as V1Container[] | undefined) ?? []).map(leanContainer) },
    status:
      status === undefined
        ? undefined
        : defined<V1PodStatus>({
            phase: status.phase,
            podIP: status.podIP,
            startTime: status.startTime,
            conditions: status.conditions?.map(leanCondition),
            containerStatuses: status.containerStatuses?.map(leanContainerStatus),
          }),
  });
}
