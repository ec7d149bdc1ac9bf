// The disruption controller (pkg/controller/disruption/disruption.go, Kubernetes 1.32) keeps each
// PodDisruptionBudget's status: the pods its selector matches (getPodsForPdb: a nil selector
// none, an empty one all); expectedPods and desiredHealthy (getExpectedPodCount: an integer
// minAvailable counts the pods found; maxUnavailable or a percentage counts the replicas of the
// pods' controllers — a ReplicaSet, or the Deployment owning it, or a StatefulSet — and a pod
// without one fails the sync, failSafe: disruptionsAllowed 0 and DisruptionAllowed False
// SyncFailed); currentHealthy (countHealthyPods: Ready, not being deleted, not an eviction in
// flight); disruptionsAllowed = currentHealthy − desiredHealthy, at least 0; disruptedPods kept
// while the pod is neither gone nor deleting and for at most DeletionTimeout (2 min,
// buildDisruptedPodMap); observedGeneration; the DisruptionAllowed condition.
import type { Clock } from '../clock.ts';
import { rfc3339 } from '../clock.ts';
import { clone, deepEqual, isObject, objects, type JsonObject } from '../json.ts';
import { kindOf, podInfo } from '../kinds.ts';
import type { ResourceApi } from '../resource-api.ts';
import { fromStructured, matchesLabels } from '../selectors/label-selector.ts';
import type { KubeObject } from '../types.ts';
import { WorkQueue, objectKey, splitKey } from '../work-queue.ts';
import { isPodReady, pdbInfo, setDisruptionAllowed } from '../api-server/pod-eviction.ts';

const replicaSets = kindOf('apps', 'replicasets');
const deployments = kindOf('apps', 'deployments');
const statefulSets = kindOf('apps', 'statefulsets');
/** DeletionTimeout: an eviction the controller has not seen carried out is forgotten after it. */
const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

const specOf = (object: KubeObject): JsonObject => (isObject(object.spec) ? object.spec : {});

function controllerOf(object: KubeObject): { kind: string; name: string; uid: string } | undefined {
  const ref = (object.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  return ref === undefined ? undefined : { kind: ref.kind, name: ref.name, uid: ref.uid };
}

/** intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true). */
export function scaled(value: unknown, total: number): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+)%$/.exec(value);
  if (match === null) return undefined;
  return Math.ceil((Number(match[1]) * total) / 100);
}

export class DisruptionController {
  readonly #api: ResourceApi;
  readonly #clock: Clock;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock }) {
    this.#api = options.api;
    this.#clock = options.clock;
    this.#queue = new WorkQueue({ handle: (key) => this.#sync(key), clock: options.clock });
    const watched = new Set([
      podInfo.storage,
      replicaSets.storage,
      deployments.storage,
      statefulSets.storage,
    ]);
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      const namespace = event.object.metadata.namespace ?? '';
      if (event.storage === pdbInfo.storage)
        this.#queue.add(objectKey(namespace, event.object.metadata.name ?? ''));
      else if (watched.has(event.storage)) this.#enqueueNamespace(namespace);
    });
    for (const pdb of this.#api.store.list(pdbInfo.storage))
      this.#queue.add(objectKey(pdb.metadata.namespace ?? '', pdb.metadata.name ?? ''));
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #enqueueNamespace(namespace: string): void {
    for (const pdb of this.#api.store.list(pdbInfo.storage, namespace))
      this.#queue.add(objectKey(namespace, pdb.metadata.name ?? ''));
  }

  #pods(pdb: KubeObject): KubeObject[] {
    const selector = specOf(pdb).selector;
    if (!isObject(selector)) return [];
    let parsed;
    try {
      parsed = fromStructured(selector);
    } catch {
      return [];
    }
    return this.#api.store
      .list(podInfo.storage, pdb.metadata.namespace ?? '')
      .filter((pod) => matchesLabels(parsed, pod.metadata.labels));
  }

  /** getExpectedScale: the replicas of the pods' controllers, each counted once. */
  #expectedScale(namespace: string, pods: readonly KubeObject[]): number | string {
    const seen = new Map<string, number>();
    for (const pod of pods) {
      const ref = controllerOf(pod);
      if (ref === undefined) return `found no controller ref for pod "${pod.metadata.name ?? ''}"`;
      const owner = this.#scaleOwner(namespace, ref);
      if (owner === undefined) return `found no controllers for pod "${pod.metadata.name ?? ''}"`;
      seen.set(owner.metadata.uid ?? '', Number(specOf(owner).replicas ?? 1));
    }
    return [...seen.values()].reduce((sum, n) => sum + n, 0);
  }

  /** The finders: a StatefulSet, a ReplicaSet's Deployment, or the ReplicaSet itself. */
  #scaleOwner(
    namespace: string,
    ref: { kind: string; name: string; uid: string },
  ): KubeObject | undefined {
    const same = (object: KubeObject | undefined, uid: string) =>
      object !== undefined && object.metadata.uid === uid ? object : undefined;
    if (ref.kind === 'StatefulSet')
      return same(this.#api.peek(statefulSets, namespace, ref.name), ref.uid);
    if (ref.kind !== 'ReplicaSet') return undefined;
    const set = same(this.#api.peek(replicaSets, namespace, ref.name), ref.uid);
    if (set === undefined) return undefined;
    const parent = controllerOf(set);
    if (parent?.kind === 'Deployment')
      return same(this.#api.peek(deployments, namespace, parent.name), parent.uid);
    return set;
  }

  /** getExpectedPodCount: expectedPods and desiredHealthy, or why they cannot be known. */
  #counts(pdb: KubeObject, pods: readonly KubeObject[]): Counts {
    const spec = specOf(pdb);
    const byScale = spec.maxUnavailable !== undefined || typeof spec.minAvailable === 'string';
    if (!byScale || pods.length === 0) {
      const desired = typeof spec.minAvailable === 'number' ? spec.minAvailable : 0;
      return { expected: pods.length, desired };
    }
    const scale = this.#expectedScale(pdb.metadata.namespace ?? '', pods);
    if (typeof scale === 'string') return { expected: 0, desired: 0, failure: scale };
    const desired =
      spec.maxUnavailable !== undefined
        ? Math.max(0, scale - (scaled(spec.maxUnavailable, scale) ?? 0))
        : (scaled(spec.minAvailable, scale) ?? 0);
    return { expected: scale, desired };
  }

  #sync(key: string): void {
    const [namespace, name] = splitKey(key);
    const pdb = this.#api.peek(pdbInfo, namespace, name);
    if (pdb === undefined || pdb.metadata.deletionTimestamp !== undefined) return;
    const now = this.#clock.now();
    const pods = this.#pods(pdb);
    const next = clone(pdb);
    const status: JsonObject = isObject(next.status) ? next.status : {};
    status.observedGeneration = pdb.metadata.generation ?? 1;
    const { expected, desired, failure } = this.#counts(pdb, pods);
    const previous = isObject(status.disruptedPods) ? status.disruptedPods : {};
    const { disrupted, nextExpiry } = inFlight(previous, pods, now);
    const healthy = pods.filter(
      (pod) =>
        pod.metadata.deletionTimestamp === undefined &&
        disrupted[pod.metadata.name ?? ''] === undefined &&
        isPodReady(pod),
    ).length;
    const allowed = failure === undefined && expected > 0 ? Math.max(0, healthy - desired) : 0;
    Object.assign(status, {
      disruptionsAllowed: allowed,
      currentHealthy: failure === undefined ? healthy : 0,
      desiredHealthy: desired,
      expectedPods: expected,
    });
    if (Object.keys(disrupted).length > 0) status.disruptedPods = disrupted;
    else delete status.disruptedPods;
    setDisruptionAllowed(status, allowed > 0, rfc3339(now));
    if (failure !== undefined) {
      // failSafe: the condition says why (SyncFailed), not that pods are insufficient.
      const condition = objects(status.conditions).find((c) => c.type === 'DisruptionAllowed');
      if (condition !== undefined)
        Object.assign(condition, { reason: 'SyncFailed', message: failure });
    }
    next.status = status;
    if (nextExpiry !== undefined) this.#queue.addAfter(key, nextExpiry - now);
    if (deepEqual(next.status, pdb.status)) return;
    this.#api.write(pdbInfo, next, 'status');
  }
}

interface Counts {
  expected: number;
  desired: number;
  failure?: string;
}

/** buildDisruptedPodMap: evictions still in flight (the pod there, not deleting, not expired). */
function inFlight(
  previous: JsonObject,
  pods: readonly KubeObject[],
  now: number,
): { disrupted: Record<string, string>; nextExpiry: number | undefined } {
  const disrupted: Record<string, string> = {};
  let nextExpiry: number | undefined;
  for (const pod of pods) {
    const at = previous[pod.metadata.name ?? ''];
    if (typeof at !== 'string' || pod.metadata.deletionTimestamp !== undefined) continue;
    const expires = Date.parse(at) + DELETION_TIMEOUT_MS;
    if (expires <= now) continue;
    disrupted[pod.metadata.name ?? ''] = at;
    nextExpiry = Math.min(nextExpiry ?? expires, expires);
  }
  return { disrupted, nextExpiry };
}
