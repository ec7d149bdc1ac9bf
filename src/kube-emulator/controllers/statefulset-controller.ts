// The StatefulSet controller: ordinal pods created in order (OrderedReady) or all at once
// (Parallel), removed from the highest ordinal, recreated when deleted, rolled on template
// changes, with a status `kubectl rollout status` understands.
import type { Clock } from '../clock.ts';
import type { EventRecorder } from '../event-recorder.ts';
import { clone, isObject, type JsonObject } from '../json.ts';
import { kindOf, podInfo, claimInfo } from '../kinds.ts';
import {
  claimPods,
  controllerOf,
  isOrphanPodEvent,
  ownedPods,
  ownerKeyOf,
  podFromTemplate,
  templateOf,
} from './owned-pods.ts';
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
  readonly #clock: Clock;
  /** Sets with a look scheduled for when a pod becomes available (minReadySeconds). */
  readonly #availabilityChecks = new Set<string>();

  constructor(options: { api: ResourceApi; clock: Clock; events?: EventRecorder }) {
    this.#api = options.api;
    this.#clock = options.clock;
    this.#events = options.events;
    this.#revisions = new StatefulSetRevisions(options.api);
    this.#queue = new WorkQueue({ handle: (key) => this.#reconcile(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      const key = ownerKeyOf(event, statefulSets.storage, 'StatefulSet');
      if (key !== undefined) this.#queue.add(key);
      // A claim that goes (or changes) may unblock a pod waiting for it; claims carry no
      // reference to their set by default, so every set of the namespace looks again.
      // An orphaned pod (no controller) may be adopted by any set of its namespace.
      if (isOrphanPodEvent(event)) {
        const namespace = event.object.metadata.namespace ?? '';
        for (const set of this.#api.store.list(statefulSets.storage, namespace))
          this.#queue.add(`${namespace}/${set.metadata.name ?? ''}`);
      }
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
    this.#claimPods(set);
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

  /**
   * ClaimPods (pkg/controller/controller_ref_manager.go) with the StatefulSet's filter
   * `isMemberOf` (stateful_set_utils.go): a pod without a controller whose labels match the
   * selector and whose name is one of the set's ordinals is adopted (a controller reference is
   * added), as after `kubectl delete sts --cascade=orphan` and a re-create; a pod the set owns
   * whose labels no longer match is released.
   */
  #claimPods(set: KubeObject): void {
    const name = set.metadata.name ?? '';
    claimPods(this.#api, set, 'StatefulSet', (pod) => ordinalOf(name, pod) !== undefined);
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

  /**
   * podutil.IsPodAvailable: Ready for at least minReadySeconds; a pod Ready for less has the
   * set looked at again when it would become available.
   */
  #available(pod: KubeObject, minReadySeconds: number, set: KubeObject): boolean {
    if (!isPodReady(pod)) return false;
    if (minReadySeconds <= 0) return true;
    const conditions =
      isObject(pod.status) && Array.isArray(pod.status.conditions) ? pod.status.conditions : [];
    const ready = (conditions as JsonObject[]).find((c) => c.type === 'Ready');
    const since =
      typeof ready?.lastTransitionTime === 'string' ? Date.parse(ready.lastTransitionTime) : NaN;
    if (Number.isNaN(since)) return false;
    const wait = since + minReadySeconds * 1000 - this.#clock.now();
    if (wait <= 0) return true;
    const key = `${set.metadata.namespace ?? ''}/${set.metadata.name ?? ''}`;
    if (!this.#availabilityChecks.has(key)) {
      this.#availabilityChecks.add(key);
      this.#clock.setTimeout(() => {
        this.#availabilityChecks.delete(key);
        this.#queue.add(key);
      }, wait + 1);
    }
    return false;
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
    // completeRollingUpdate: the current revision moves once every pod is updated and ready.
    const rolledOut =
      updated.length === pods.length && pods.length === replicas && ready === pods.length;
    const minReady =
      typeof (current.spec as JsonObject | undefined)?.minReadySeconds === 'number'
        ? ((current.spec as JsonObject).minReadySeconds as number)
        : 0;
    const available = pods.filter((pod) => this.#available(pod, minReady, current)).length;
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
      availableReplicas: available,
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
