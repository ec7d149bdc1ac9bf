// The StatefulSet controller: ordinal pods created in order (OrderedReady) or all at once
// (Parallel), removed from the highest ordinal, recreated when deleted, rolled on template
// changes, with a status `kubectl rollout status` understands.
import type { Clock } from '../clock.ts';
import type { EventRecorder } from '../event-recorder.ts';
import { clone, isObject, type JsonObject } from '../json.ts';
import { kindOf, podInfo, claimInfo } from '../kinds.ts';
import { controllerOf, ownedPods, ownerKeyOf, podFromTemplate, templateOf } from './owned-pods.ts';
import { isPodReady } from '../kubelets/pod-status.ts';
import type { ResourceApi } from '../resource-api.ts';
import { StatefulSetRevisions } from './controller-revisions.ts';
import { ensureClaims, updateClaimOwners, withClaimVolumes } from './statefulset-claims.ts';
import type { KubeObject } from '../types.ts';
import { WorkQueue, splitKey } from '../work-queue.ts';

const statefulSets = kindOf('apps', 'statefulsets');

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
export const REVISION_LABEL = 'controller-revision-hash';

function ordinalOf(setName: string, pod: KubeObject): number | undefined {
  const name = pod.metadata.name ?? '';
  if (!name.startsWith(`${setName}-`)) return undefined;
  const rest = name.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

const terminating = (pod: KubeObject): boolean => pod.metadata.deletionTimestamp !== undefined;

function failed(pod: KubeObject): boolean {
  const phase = isObject(pod.status) ? pod.status.phase : undefined;
  return phase === 'Failed' || phase === 'Succeeded';
}

export class StatefulSetController {
  readonly #api: ResourceApi;
  readonly #events: EventRecorder | undefined;
  readonly #revisions: StatefulSetRevisions;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock; events?: EventRecorder }) {
    this.#api = options.api;
    this.#events = options.events;
    this.#revisions = new StatefulSetRevisions(options.api);
    this.#queue = new WorkQueue({ handle: (key) => this.#reconcile(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      const key = ownerKeyOf(event, statefulSets.storage, 'StatefulSet');
      if (key !== undefined) this.#queue.add(key);
      // A claim that goes (or changes) may unblock a pod waiting for it; claims carry no
      // reference to their set by default, so every set of the namespace looks again.
      if (event.storage === claimInfo.storage) {
        const namespace = event.object.metadata.namespace ?? '';
        for (const set of this.#api.store.list(statefulSets.storage, namespace))
          this.#queue.add(`${namespace}/${set.metadata.name ?? ''}`);
      }
    });
    for (const set of this.#api.store.list(statefulSets.storage)) {
      this.#queue.add(`${set.metadata.namespace ?? ''}/${set.metadata.name ?? ''}`);
    }
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #reconcile(key: string): void {
    const [namespace, name] = splitKey(key);
    const set = this.#api.peek(statefulSets, namespace, name);
    if (set === undefined || set.metadata.deletionTimestamp !== undefined) return;
    const spec = isObject(set.spec) ? set.spec : {};
    const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
    const parallel = spec.podManagementPolicy === 'Parallel';
    const revision = this.#revisions.sync(set);
    const byOrdinal = new Map<number, KubeObject>();
    for (const pod of ownedPods(this.#api, set)) {
      const ordinal = ordinalOf(name, pod);
      if (ordinal !== undefined) byOrdinal.set(ordinal, pod);
    }
    // Claims follow the retention policy before any scaled-down pod is deleted.
    for (const [ordinal, pod] of byOrdinal)
      updateClaimOwners(this.#api, set, pod, { ordinal, scaledDown: ordinal >= replicas });
    // Failed pods are deleted so that they get recreated.
    for (const pod of byOrdinal.values())
      if (failed(pod) && !terminating(pod)) this.#deletePod(pod);
    this.#scale({ set, replicas, parallel, revision, byOrdinal });
    const currentRevision = this.#writeStatus(set, revision, replicas);
    this.#revisions.truncate(set, () => {
      const live = new Set([revision, ...(currentRevision === undefined ? [] : [currentRevision])]);
      for (const pod of byOrdinal.values()) live.add(pod.metadata.labels?.[REVISION_LABEL] ?? '');
      return live;
    });
  }

  #scale(options: {
    set: KubeObject;
    replicas: number;
    parallel: boolean;
    revision: string;
    byOrdinal: Map<number, KubeObject>;
  }): void {
    const { set, replicas, parallel, revision, byOrdinal } = options;
    let blocked = false;
    for (let ordinal = 0; ordinal < replicas; ordinal++) {
      const pod = byOrdinal.get(ordinal);
      if (pod === undefined) {
        this.#createPod(set, ordinal, revision);
        if (!parallel) return;
        blocked = true;
      } else if (terminating(pod) || !isPodReady(pod)) {
        if (!parallel) return;
        blocked = true;
      }
    }
    const condemned = [...byOrdinal.entries()]
      .filter(([ordinal]) => ordinal >= replicas)
      .sort((a, b) => b[0] - a[0]);
    if (parallel) {
      for (const [, pod] of condemned) if (!terminating(pod)) this.#deletePod(pod);
    } else if (condemned.length > 0) {
      const [first] = condemned;
      if (first !== undefined && !condemned.some(([, pod]) => terminating(pod)))
        this.#deletePod(first[1]);
      return;
    }
    if (blocked || condemned.length > 0) return;
    // Rolling update: replace the highest-ordinal pod still on an old revision, one at a time.
    const outdated = [...byOrdinal.entries()]
      .filter(
        ([ordinal, pod]) =>
          ordinal < replicas && pod.metadata.labels?.[REVISION_LABEL] !== revision,
      )
      .sort((a, b) => b[0] - a[0]);
    const partition = this.#partition(set);
    const next = outdated.find(([ordinal]) => ordinal >= partition);
    if (
      next !== undefined &&
      set.spec !== undefined &&
      (set.spec as JsonObject).updateStrategy !== undefined
    ) {
      const strategy = (set.spec as JsonObject).updateStrategy as JsonObject;
      if (strategy.type !== 'OnDelete') this.#deletePod(next[1]);
    }
  }

  #partition(set: KubeObject): number {
    const strategy =
      isObject(set.spec) && isObject(set.spec.updateStrategy) ? set.spec.updateStrategy : {};
    const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
    return typeof rolling.partition === 'number' ? rolling.partition : 0;
  }

  #createPod(set: KubeObject, ordinal: number, revision: string): void {
    const setName = set.metadata.name ?? '';
    const podName = `${setName}-${ordinal}`;
    const spec = isObject(set.spec) ? set.spec : {};
    const pod = podFromTemplate({
      owner: set,
      ownerKind: 'StatefulSet',
      name: podName,
      labels: {
        ...templateOf(set).labels,
        [REVISION_LABEL]: revision,
        [POD_NAME_LABEL]: podName,
        [POD_INDEX_LABEL]: String(ordinal),
      },
      specExtra: {
        hostname: podName,
        ...(typeof spec.serviceName === 'string' && spec.serviceName !== ''
          ? { subdomain: spec.serviceName }
          : {}),
      },
    });
    if (this.#api.peek(podInfo, set.metadata.namespace ?? '', podName) !== undefined) return;
    // The pod's claims first (a claim still being deleted holds the pod back until it is gone).
    if (ensureClaims(this.#api, set, ordinal, podName) !== undefined) return;
    withClaimVolumes(set, pod.spec as JsonObject, ordinal);
    const created = this.#api.create(podInfo, set.metadata.namespace ?? '', pod);
    updateClaimOwners(this.#api, set, created, { ordinal, scaledDown: false });
    this.#podEvent(set, 'Create', podName);
  }

  #deletePod(pod: KubeObject): void {
    this.#api.delete(podInfo, pod.metadata.namespace ?? '', pod.metadata.name ?? '');
    const owner = controllerOf(pod);
    const set =
      owner === undefined
        ? undefined
        : this.#api.peek(statefulSets, pod.metadata.namespace ?? '', owner.name);
    if (set !== undefined) this.#podEvent(set, 'Delete', pod.metadata.name ?? '');
  }

  /** The Event of stateful_pod_control.go `recordPodEvent` for a pod created or deleted. */
  #podEvent(set: KubeObject, verb: 'Create' | 'Delete', podName: string): void {
    this.#events?.record({
      object: set,
      info: statefulSets,
      source: { component: 'statefulset-controller' },
      type: 'Normal',
      reason: `Successful${verb}`,
      message: `${verb.toLowerCase()} Pod ${podName} in StatefulSet ${set.metadata.name ?? ''} successful`,
    });
  }

  /** Writes the status; returns the current revision. */
  #writeStatus(set: KubeObject, revision: string, replicas: number): string | undefined {
    const current = this.#api.peek(
      statefulSets,
      set.metadata.namespace ?? '',
      set.metadata.name ?? '',
    );
    if (current === undefined) return undefined;
    const pods = ownedPods(this.#api, current).filter(
      (pod) => ordinalOf(current.metadata.name ?? '', pod) !== undefined,
    );
    const previous = isObject(current.status) ? current.status : {};
    const updated = pods.filter((pod) => pod.metadata.labels?.[REVISION_LABEL] === revision);
    const ready = pods.filter(isPodReady).length;
    const rolledOut = updated.length === pods.length && pods.length === replicas;
    const currentRevision =
      rolledOut || typeof previous.currentRevision !== 'string'
        ? revision
        : previous.currentRevision;
    const status: JsonObject = {
      observedGeneration: current.metadata.generation ?? 1,
      replicas: pods.length,
      readyReplicas: ready,
      currentReplicas: pods.filter(
        (pod) => pod.metadata.labels?.[REVISION_LABEL] === currentRevision,
      ).length,
      updatedReplicas: updated.length,
      availableReplicas: ready,
      currentRevision,
      updateRevision: revision,
      collisionCount: 0,
    };
    const next = clone(current);
    next.status = status;
    this.#api.write(statefulSets, next, 'status');
    return currentRevision;
  }
}
