// The ReplicaSet controller (pkg/controller/replicaset): keeps `spec.replicas` active pods named
// `<replicaset>-<5 random>` from the template, controlled by the ReplicaSet; surplus pods go
// not-ready and newest first (the ranking of `getPodsToDelete`, simplified); Events
// `SuccessfulCreate` "Created pod: <name>" and `SuccessfulDelete` "Deleted pod: <name>"
// (controller_utils.go); status replicas, fullyLabeledReplicas, readyReplicas,
// availableReplicas, observedGeneration.
import type { Clock } from '../clock.ts';
import type { EventRecorder } from '../event-recorder.ts';
import { clone, isObject } from '../json.ts';
import { kindOf, podInfo } from '../kinds.ts';
import {
  fromStructured,
  matchesLabels,
  type StructuredSelector,
} from '../selectors/label-selector.ts';
import { randomSuffix } from '../names.ts';
import {
  claimPods,
  isOrphanPodEvent,
  ownedPods,
  ownerKeyOf,
  podFromTemplate,
  templateOf,
} from './owned-pods.ts';
import { isPodReady } from '../kubelets/pod-status.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { KubeObject } from '../types.ts';
import { WorkQueue, splitKey } from '../work-queue.ts';

export const replicaSets = kindOf('apps', 'replicasets');

/** Pods that count toward replicas: not being deleted, not finished (`FilterActivePods`). */
export function isActivePod(pod: KubeObject): boolean {
  const phase = isObject(pod.status) ? pod.status.phase : undefined;
  return (
    pod.metadata.deletionTimestamp === undefined && phase !== 'Succeeded' && phase !== 'Failed'
  );
}

export class ReplicaSetController {
  readonly #api: ResourceApi;
  readonly #events: EventRecorder | undefined;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock; events?: EventRecorder }) {
    this.#api = options.api;
    this.#events = options.events;
    this.#queue = new WorkQueue({ handle: (key) => this.#reconcile(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      const key = ownerKeyOf(event, replicaSets.storage, 'ReplicaSet');
      if (key !== undefined) this.#queue.add(key);
      // An orphaned pod (no controller) may be adopted by any ReplicaSet of its namespace.
      if (isOrphanPodEvent(event)) {
        const namespace = event.object.metadata.namespace ?? '';
        for (const set of this.#api.store.list(replicaSets.storage, namespace))
          this.#queue.add(`${namespace}/${set.metadata.name ?? ''}`);
      }
    });
    for (const set of this.#api.store.list(replicaSets.storage)) {
      this.#queue.add(`${set.metadata.namespace ?? ''}/${set.metadata.name ?? ''}`);
    }
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #reconcile(key: string): void {
    const [namespace, name] = splitKey(key);
    const set = this.#api.peek(replicaSets, namespace, name);
    if (set === undefined || set.metadata.deletionTimestamp !== undefined) return;
    // syncReplicaSet claims pods first (adopting orphans that match, releasing those that stop).
    claimPods(this.#api, set, 'ReplicaSet');
    const spec = isObject(set.spec) ? set.spec : {};
    const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
    const active = ownedPods(this.#api, set).filter(isActivePod);
    if (active.length < replicas) {
      for (let i = active.length; i < replicas; i++) this.#createPod(set);
    } else if (active.length > replicas) {
      const condemned = [...active]
        .sort(
          (a, b) =>
            Number(isPodReady(a)) - Number(isPodReady(b)) ||
            (b.metadata.creationTimestamp ?? '').localeCompare(
              a.metadata.creationTimestamp ?? '',
            ) ||
            (b.metadata.name ?? '').localeCompare(a.metadata.name ?? ''),
        )
        .slice(0, active.length - replicas);
      for (const pod of condemned) this.#deletePod(set, pod);
    }
    this.#writeStatus(set);
  }

  #event(set: KubeObject, reason: string, message: string): void {
    this.#events?.record({
      object: set,
      info: replicaSets,
      source: { component: 'replicaset-controller' },
      type: 'Normal',
      reason,
      message,
    });
  }

  #createPod(set: KubeObject): void {
    const namespace = set.metadata.namespace ?? '';
    const prefix = `${set.metadata.name ?? ''}-`;
    let name = `${prefix}${randomSuffix()}`;
    while (this.#api.peek(podInfo, namespace, name) !== undefined)
      name = `${prefix}${randomSuffix()}`;
    const pod = podFromTemplate({
      owner: set,
      ownerKind: 'ReplicaSet',
      name,
      labels: { ...templateOf(set).labels },
    });
    pod.metadata.generateName = prefix;
    this.#api.create(podInfo, namespace, pod);
    this.#event(set, 'SuccessfulCreate', `Created pod: ${name}`);
  }

  #deletePod(set: KubeObject, pod: KubeObject): void {
    this.#api.delete(podInfo, pod.metadata.namespace ?? '', pod.metadata.name ?? '');
    this.#event(set, 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name ?? ''}`);
  }

  #writeStatus(set: KubeObject): void {
    const current = this.#api.peek(
      replicaSets,
      set.metadata.namespace ?? '',
      set.metadata.name ?? '',
    );
    if (current === undefined) return;
    const spec = isObject(current.spec) ? current.spec : {};
    const active = ownedPods(this.#api, current).filter(isActivePod);
    let selector: ReturnType<typeof fromStructured> = [];
    try {
      selector = fromStructured(spec.selector as StructuredSelector | undefined);
    } catch {
      // an invalid selector was refused at write time; count no pod as fully labeled
    }
    const templateLabels = templateOf(current).labels;
    const ready = active.filter(isPodReady).length;
    const next = clone(current);
    next.status = {
      replicas: active.length,
      fullyLabeledReplicas: active.filter(
        (pod) =>
          matchesLabels(selector, pod.metadata.labels) &&
          Object.entries(templateLabels).every(([k, v]) => pod.metadata.labels?.[k] === v),
      ).length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: current.metadata.generation ?? 1,
    };
    this.#api.write(replicaSets, next, 'status');
  }
}
