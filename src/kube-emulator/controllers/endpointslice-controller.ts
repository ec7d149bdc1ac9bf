// The EndpointSlice controller (pkg/controller/endpointslice, k8s.io/endpointslice reconciler.go
// and utils.go): for each Service with a selector (not ExternalName), IPv4 EndpointSlices named
// `<service>-<5 random>`, controlled by the Service (so the garbage collector removes them with it),
// labelled with the Service's labels, `kubernetes.io/service-name`,
// `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io` and, for a headless
// Service, `service.kubernetes.io/headless`. One endpoint per selected pod that has an IP and is
// not terminal (podToEndpoint): `conditions.ready` (Ready and not terminating, or
// publishNotReadyAddresses), `serving` (Ready), `terminating` (being deleted), `targetRef`,
// `nodeName` and `hostname`; pods offering the same resolved ports share slices of at most 100
// endpoints. A Service that selects no pod keeps one placeholder slice with no endpoints and no
// ports. Slices are reused by their ports, extra ones deleted.
import type { Clock } from '../clock.ts';
import { clone, deepEqual, type JsonObject } from '../json.ts';
import { kindOf } from '../kinds.ts';
import type { ResourceApi } from '../resource-api.ts';
import { ApiError } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import { WorkQueue, objectKey, splitKey } from '../work-queue.ts';
import {
  endpointHostname,
  HEADLESS_LABEL,
  isReadyCondition,
  isHeadless,
  LAST_CHANGE_ANNOTATION,
  withTriggerTime,
  lastChangeTriggerTime,
  managesEndpoints,
  podAddress,
  podReference,
  portsOnPod,
  selectedPods,
  serviceKeysOf,
  services,
  shouldPodBeInEndpoints,
  allServiceKeys,
} from './service-pods.ts';

export const endpointSlices = kindOf('discovery.k8s.io', 'endpointslices');
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** maxEndpointsPerSlice, the controller's default (--max-endpoints-per-slice). */
const MAX_PER_SLICE = 100;

interface Desired {
  ports: JsonObject[] | null;
  endpoints: JsonObject[] | null;
}

/** podToEndpoint. */
function endpointOf(pod: KubeObject, service: KubeObject): JsonObject {
  const spec = (service.spec ?? {}) as JsonObject;
  const serving = isReadyCondition(pod);
  const terminating = pod.metadata.deletionTimestamp !== undefined;
  const ready = spec.publishNotReadyAddresses === true || (serving && !terminating);
  const nodeName = (pod.spec as JsonObject | undefined)?.nodeName;
  const hostname = endpointHostname(pod, service);
  return {
    addresses: [podAddress(pod) ?? ''],
    conditions: { ready, serving, terminating },
    ...(hostname === undefined ? {} : { hostname }),
    targetRef: podReference(pod),
    ...(typeof nodeName === 'string' && nodeName !== '' ? { nodeName } : {}),
  };
}

/** The slices a Service should have: endpoints grouped by their ports, 100 to a slice. */
function desiredSlices(service: KubeObject, pods: readonly KubeObject[]): Desired[] {
  const groups = new Map<string, { ports: JsonObject[]; endpoints: JsonObject[] }>();
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, true)) continue;
    const ports: JsonObject[] =
      isHeadless(service) && portsOnPod(service, pod).length === 0
        ? []
        : portsOnPod(service, pod).map(({ port, number }) => ({
            name: typeof port.name === 'string' ? port.name : '',
            port: number,
            protocol: port.protocol ?? 'TCP',
            ...(port.appProtocol === undefined ? {} : { appProtocol: port.appProtocol }),
          }));
    const key = JSON.stringify(ports);
    const group = groups.get(key) ?? { ports, endpoints: [] as JsonObject[] };
    group.endpoints.push(endpointOf(pod, service));
    groups.set(key, group);
  }
  const slices: Desired[] = [];
  for (const [, group] of [...groups.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const endpoints = [...group.endpoints].sort((a, b) =>
      String((a.targetRef as JsonObject).name).localeCompare(
        String((b.targetRef as JsonObject).name),
      ),
    );
    for (let i = 0; i < endpoints.length; i += MAX_PER_SLICE)
      slices.push({ ports: group.ports, endpoints: endpoints.slice(i, i + MAX_PER_SLICE) });
  }
  // The placeholder: a Service that selects nothing still has one (empty) slice.
  return slices.length > 0 ? slices : [{ ports: null, endpoints: null }];
}

export class EndpointSliceController {
  readonly #api: ResourceApi;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock }) {
    this.#api = options.api;
    this.#queue = new WorkQueue({ handle: (key) => this.#sync(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      for (const key of serviceKeysOf(this.#api, event)) this.#queue.add(key);
      if (event.storage === endpointSlices.storage) {
        const service = event.object.metadata.labels?.[SERVICE_NAME_LABEL];
        if (
          service !== undefined &&
          event.object.metadata.labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME
        )
          this.#queue.add(objectKey(event.object.metadata.namespace ?? '', service));
      }
    });
    for (const key of allServiceKeys(this.#api)) this.#queue.add(key);
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #sync(key: string): void {
    const [namespace, name] = splitKey(key);
    const service = this.#api.peek(services, namespace, name);
    if (service === undefined || service.metadata.deletionTimestamp !== undefined) return;
    if (!managesEndpoints(service)) return;
    const owned = this.#api.store
      .list(endpointSlices.storage, namespace)
      .filter(
        (slice) =>
          slice.metadata.labels?.[SERVICE_NAME_LABEL] === name &&
          slice.metadata.labels[MANAGED_BY_LABEL] === CONTROLLER_NAME &&
          slice.metadata.deletionTimestamp === undefined,
      )
      .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    const pods = selectedPods(this.#api, service);
    const desired = desiredSlices(service, pods);
    const labels = this.#labels(service);
    const trigger = lastChangeTriggerTime(service, pods);
    const unused = [...owned];
    for (const want of desired) {
      const index = unused.findIndex((slice) => deepEqual(slice.ports ?? null, want.ports));
      const reuse = index >= 0 ? unused.splice(index, 1)[0] : unused.shift();
      try {
        if (reuse === undefined) this.#create(service, want, labels, trigger);
        else this.#update(reuse, want, labels, trigger);
      } catch (error: unknown) {
        // A namespace being terminated takes no new slices.
        if (error instanceof ApiError && error.code === 403) return;
        throw error;
      }
    }
    for (const slice of unused)
      this.#api.delete(endpointSlices, namespace, slice.metadata.name ?? '');
  }

  /** setEndpointSliceLabels: the Service's labels, then the controller's own. */
  #labels(service: KubeObject): Record<string, string> {
    const labels: Record<string, string> = {};
    for (const [key, value] of Object.entries(service.metadata.labels ?? {}))
      if (key !== SERVICE_NAME_LABEL && key !== MANAGED_BY_LABEL) labels[key] = value;
    if (isHeadless(service)) labels[HEADLESS_LABEL] = '';
    labels[SERVICE_NAME_LABEL] = service.metadata.name ?? '';
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME;
    return labels;
  }

  #create(
    service: KubeObject,
    want: Desired,
    labels: Record<string, string>,
    trigger: string,
  ): void {
    this.#api.create(endpointSlices, service.metadata.namespace ?? '', {
      metadata: {
        generateName: `${service.metadata.name ?? ''}-`,
        labels,
        ...(trigger === '' ? {} : { annotations: { [LAST_CHANGE_ANNOTATION]: trigger } }),
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            name: service.metadata.name ?? '',
            uid: service.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      addressType: 'IPv4',
      endpoints: want.endpoints,
      ports: want.ports,
    });
  }

  #update(slice: KubeObject, want: Desired, labels: Record<string, string>, trigger: string): void {
    if (
      deepEqual(slice.endpoints ?? null, want.endpoints) &&
      deepEqual(slice.ports ?? null, want.ports) &&
      deepEqual(slice.metadata.labels ?? {}, labels)
    )
      return;
    const next = clone(slice);
    next.endpoints = want.endpoints;
    next.ports = want.ports;
    next.metadata.labels = labels;
    next.metadata.annotations = withTriggerTime(next.metadata.annotations, trigger);
    this.#api.write(endpointSlices, next);
  }
}
