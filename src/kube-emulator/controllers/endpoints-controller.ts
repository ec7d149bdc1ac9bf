// The Endpoints controller (pkg/controller/endpoint/endpoints_controller.go syncService): for each
// Service with a selector (not ExternalName), an Endpoints object of the same name whose subsets
// hold the selected pods that have an IP and are not terminal, ready ones in `addresses` and the
// others in `notReadyAddresses` (all in `addresses` with publishNotReadyAddresses, which also keeps
// terminating pods), each service port resolved on the pod (FindPort; a pod without the named port
// is left out of that port), repacked so pods offering the same ports share a subset
// (RepackSubsets). Labels are the Service's, plus `service.kubernetes.io/headless` for a headless
// one; the annotation `endpoints.kubernetes.io/last-change-trigger-time`. The Endpoints of a
// deleted Service are deleted. Order inside a subset: by IP, then pod uid (LessEndpointAddress);
// ports and subsets are ordered by name here, where the real controller orders them by a hash.
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

export const endpointsInfo = kindOf('', 'endpoints');

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

interface Address {
  address: JsonObject;
  ready: boolean;
}

/** The subsets of a Service's endpoints, repacked by the set of ports each address offers. */
function subsetsOf(service: KubeObject, pods: readonly KubeObject[]): JsonObject[] {
  const spec = (service.spec ?? {}) as JsonObject;
  const publishNotReady = spec.publishNotReadyAddresses === true;
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  /** Port key (sorted JSON of the port list) → its ports and addresses. */
  const groups = new Map<string, { ports: JsonObject[]; addresses: Address[] }>();
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
    const hostname = endpointHostname(pod, service);
    const address: JsonObject = {
      ip: podAddress(pod) ?? '',
      ...(hostname === undefined ? {} : { hostname }),
      nodeName: text((pod.spec as JsonObject | undefined)?.nodeName),
      targetRef: podReference(pod),
    };
    const ready = publishNotReady || isReadyCondition(pod);
    // Allow headless service not to have ports; other services without ports get no subset.
    if (ports.length === 0 && !isHeadless(service)) continue;
    const podPorts: JsonObject[] = portsOnPod(service, pod).map(({ port, number }) => ({
      ...(typeof port.name === 'string' && port.name !== '' ? { name: port.name } : {}),
      port: number,
      protocol: port.protocol ?? 'TCP',
      ...(port.appProtocol === undefined ? {} : { appProtocol: port.appProtocol }),
    }));
    if (ports.length > 0 && podPorts.length === 0) continue;
    podPorts.sort(
      (a, b) => text(a.name).localeCompare(text(b.name)) || Number(a.port) - Number(b.port),
    );
    const key = JSON.stringify(podPorts);
    const group = groups.get(key) ?? { ports: podPorts, addresses: [] as Address[] };
    group.addresses.push({ address, ready });
    groups.set(key, group);
  }
  const byAddress = (a: Address, b: Address): number =>
    String(a.address.ip).localeCompare(String(b.address.ip)) ||
    String((a.address.targetRef as JsonObject).uid).localeCompare(
      String((b.address.targetRef as JsonObject).uid),
    );
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, group]) => {
      const sorted = [...group.addresses].sort(byAddress);
      const ready = sorted.filter((a) => a.ready).map((a) => a.address);
      const notReady = sorted.filter((a) => !a.ready).map((a) => a.address);
      return {
        ...(ready.length > 0 ? { addresses: ready } : {}),
        ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}),
        ...(group.ports.length > 0 ? { ports: group.ports } : {}),
      };
    });
}

export class EndpointsController {
  readonly #api: ResourceApi;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock }) {
    this.#api = options.api;
    this.#queue = new WorkQueue({ handle: (key) => this.#sync(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      for (const key of serviceKeysOf(this.#api, event)) this.#queue.add(key);
      // An Endpoints object deleted by hand comes back; one left without its Service goes.
      if (event.storage === endpointsInfo.storage)
        this.#queue.add(
          objectKey(event.object.metadata.namespace ?? '', event.object.metadata.name ?? ''),
        );
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
    const current = this.#api.peek(endpointsInfo, namespace, name);
    if (service === undefined) {
      if (current !== undefined && current.metadata.deletionTimestamp === undefined)
        this.#api.delete(endpointsInfo, namespace, name);
      return;
    }
    if (!managesEndpoints(service) || service.metadata.deletionTimestamp !== undefined) return;
    const pods = selectedPods(this.#api, service);
    const subsets = subsetsOf(service, pods);
    const labels: Record<string, string> = { ...service.metadata.labels };
    if (isHeadless(service)) labels[HEADLESS_LABEL] = '';
    if (
      current !== undefined &&
      deepEqual(current.subsets ?? [], subsets) &&
      deepEqual(current.metadata.labels ?? {}, labels)
    )
      return;
    const annotations = withTriggerTime(
      current?.metadata.annotations,
      lastChangeTriggerTime(service, pods),
    );
    if (current === undefined) {
      try {
        this.#api.create(endpointsInfo, namespace, {
          metadata: { name, ...(Object.keys(labels).length > 0 ? { labels } : {}), annotations },
          ...(subsets.length > 0 ? { subsets } : {}),
        });
      } catch (error: unknown) {
        // A namespace being terminated takes no new content: the item is dropped, as upstream.
        if (error instanceof ApiError && error.code === 403) return;
        throw error;
      }
      return;
    }
    const next = clone(current);
    if (Object.keys(labels).length > 0) next.metadata.labels = labels;
    else delete next.metadata.labels;
    next.metadata.annotations = annotations;
    if (subsets.length > 0) next.subsets = subsets;
    else delete next.subsets;
    this.#api.write(endpointsInfo, next);
  }
}
