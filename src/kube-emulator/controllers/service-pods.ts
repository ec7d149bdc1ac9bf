// What the Endpoints and EndpointSlice controllers share: which Services a pod change concerns,
// which pods a Service selects and may list (k8s.io/endpointslice/util ShouldPodBeInEndpoints,
// ShouldSetHostname), and the port a Service port reaches on a pod (pkg/api/v1/pod FindPort).
import { isObject, objects, type JsonObject } from '../json.ts';
import { kindOf, podInfo } from '../kinds.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { StoreEvent } from '../store.ts';
import type { KubeObject } from '../types.ts';
import { objectKey } from '../work-queue.ts';

export const services = kindOf('', 'services');

const spec = (object: KubeObject): JsonObject => (isObject(object.spec) ? object.spec : {});
const status = (object: KubeObject): JsonObject => (isObject(object.status) ? object.status : {});

/** A Service's selector as a map, or undefined when it has none (no managed endpoints). */
export function serviceSelector(service: KubeObject): Record<string, string> | undefined {
  const selector = spec(service).selector;
  return isObject(selector) ? (selector as Record<string, string>) : undefined;
}

function selects(selector: Record<string, string>, pod: KubeObject | undefined): boolean {
  if (pod === undefined) return false;
  const labels = pod.metadata.labels ?? {};
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/** Whether a Service gets endpoints from the controllers: a selector, and not ExternalName. */
export function managesEndpoints(service: KubeObject): boolean {
  return spec(service).type !== 'ExternalName' && serviceSelector(service) !== undefined;
}

export function isHeadless(service: KubeObject): boolean {
  return spec(service).clusterIP === 'None';
}

/** The Service keys (`namespace/name`) a store event concerns (the service, or a pod it selects). */
export function serviceKeysOf(api: ResourceApi, event: StoreEvent): string[] {
  const meta = event.object.metadata;
  const namespace = meta.namespace ?? '';
  if (event.storage === services.storage) return [objectKey(namespace, meta.name ?? '')];
  if (event.storage !== podInfo.storage) return [];
  return api.store
    .list(services.storage, namespace)
    .filter((service) => {
      const selector = serviceSelector(service);
      return (
        selector !== undefined &&
        (selects(selector, event.object) || selects(selector, event.previous))
      );
    })
    .map((service) => objectKey(namespace, service.metadata.name ?? ''));
}

/** The queue keys of every Service: what a Service controller syncs once at start. */
export function allServiceKeys(api: ResourceApi): string[] {
  return api.store
    .list(services.storage)
    .map((service) => objectKey(service.metadata.namespace ?? '', service.metadata.name ?? ''));
}

/** The pods of a Service's namespace its selector matches. */
export function selectedPods(api: ResourceApi, service: KubeObject): KubeObject[] {
  const selector = serviceSelector(service);
  if (selector === undefined) return [];
  return api.store
    .list(podInfo.storage, service.metadata.namespace ?? '')
    .filter((pod) => selects(selector, pod));
}

/** podutil.IsPodReady: the pod's Ready condition is True (whether or not it is being deleted). */
export function isReadyCondition(pod: KubeObject): boolean {
  return objects(status(pod).conditions).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Pods Succeeded or Failed (podutil.IsPodTerminal). */
function isTerminal(pod: KubeObject): boolean {
  const phase = status(pod).phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The pod's IPv4 address (the services here are SingleStack IPv4), if it has one. */
export function podAddress(pod: KubeObject): string | undefined {
  const ips = objects(status(pod).podIPs).map((entry) =>
    typeof entry.ip === 'string' ? entry.ip : '',
  );
  const first = ips.find((ip) => ip !== '' && !ip.includes(':'));
  if (first !== undefined) return first;
  const ip = status(pod).podIP;
  return typeof ip === 'string' && ip !== '' && !ip.includes(':') ? ip : undefined;
}

/** ShouldPodBeInEndpoints: not terminal, has an IP, and not terminating unless included. */
export function shouldPodBeInEndpoints(pod: KubeObject, includeTerminating: boolean): boolean {
  if (isTerminal(pod) || podAddress(pod) === undefined) return false;
  return includeTerminating || pod.metadata.deletionTimestamp === undefined;
}

/** ShouldSetHostname: the pod's hostname, when its subdomain is this Service's name. */
export function endpointHostname(pod: KubeObject, service: KubeObject): string | undefined {
  const hostname = spec(pod).hostname;
  return typeof hostname === 'string' &&
    hostname !== '' &&
    spec(pod).subdomain === service.metadata.name &&
    pod.metadata.namespace === service.metadata.namespace
    ? hostname
    : undefined;
}

/**
 * FindPort: a numeric targetPort as is; a named one the container port of that name and the
 * service port's protocol; undefined when no container declares it ("no suitable port").
 */
export function findPort(pod: KubeObject, servicePort: JsonObject): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  if (typeof target !== 'string') return undefined;
  const protocol = servicePort.protocol ?? 'TCP';
  for (const container of objects(spec(pod).containers)) {
    for (const port of objects(container.ports)) {
      if (port.name === target && (port.protocol ?? 'TCP') === protocol)
        return typeof port.containerPort === 'number' ? port.containerPort : undefined;
    }
  }
  return undefined;
}

/** The service ports, each with the pod port it reaches (skipping those the pod lacks). */
export function portsOnPod(
  service: KubeObject,
  pod: KubeObject,
): { port: JsonObject; number: number }[] {
  return objects(spec(service).ports).flatMap((port) => {
    const number = findPort(pod, port);
    return number === undefined ? [] : [{ port, number }];
  });
}

/** `targetRef` of an endpoint: the pod by kind, namespace, name and uid. */
export function podReference(pod: KubeObject): JsonObject {
  return {
    kind: 'Pod',
    namespace: pod.metadata.namespace ?? '',
    name: pod.metadata.name ?? '',
    uid: pod.metadata.uid ?? '',
  };
}

/**
 * The time of the newest change the endpoints reflect (the endpoints.kubernetes.io/
 * last-change-trigger-time annotation): the Service's creation and each pod's creation or Ready
 * transition, RFC 3339 as Go writes it (whole seconds here).
 */
export function lastChangeTriggerTime(service: KubeObject, pods: readonly KubeObject[]): string {
  const times = [service.metadata.creationTimestamp ?? ''];
  for (const pod of pods) {
    times.push(pod.metadata.creationTimestamp ?? '');
    const ready = objects(status(pod).conditions).find((c) => c.type === 'Ready');
    if (typeof ready?.lastTransitionTime === 'string') times.push(ready.lastTransitionTime);
  }
  return (
    times
      .filter((t) => t !== '')
      .sort()
      .at(-1) ?? ''
  );
}

/** The annotations with the last-change-trigger-time set to `trigger` (removed when empty). */
export function withTriggerTime(
  annotations: Record<string, string> | undefined,
  trigger: string,
): Record<string, string> {
  const rest = Object.fromEntries(
    Object.entries(annotations ?? {}).filter(([key]) => key !== LAST_CHANGE_ANNOTATION),
  );
  return trigger === '' ? rest : { ...rest, [LAST_CHANGE_ANNOTATION]: trigger };
}

export const LAST_CHANGE_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
