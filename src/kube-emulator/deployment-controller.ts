// A minimal Deployment controller: pods `<deploy>-<hash>-<suffix>` labelled `pod-template-hash`
// (no ReplicaSet in between), old pods removed once the new ones are ready, and the status and
// conditions `kubectl rollout status deployment/x` waits for.
import { rfc3339, type Clock } from './clock.ts';
import { clone, isObject, objects, type JsonObject } from './json.ts';
import { kindOf } from './kinds.ts';
import { podInfo, splitKey } from './kubelet.ts';
import { randomSuffix } from './names.ts';
import { ownedPods, ownerKeyOf, podFromTemplate, templateOf } from './owned-pods.ts';
import { isPodReady } from './pod-status.ts';
import type { ResourceApi } from './resource-api.ts';
import { templateHash } from './template-hash.ts';
import type { KubeObject } from './types.ts';
import { WorkQueue } from './work-queue.ts';

const deployments = kindOf('apps', 'deployments');
export const TEMPLATE_HASH_LABEL = 'pod-template-hash';

export class DeploymentController {
  readonly #api: ResourceApi;
  readonly #clock: Clock;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock }) {
    this.#api = options.api;
    this.#clock = options.clock;
    this.#queue = new WorkQueue({ handle: (key) => this.#reconcile(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      const key = ownerKeyOf(event, deployments.storage, 'Deployment');
      if (key !== undefined) this.#queue.add(key);
    });
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #reconcile(key: string): void {
    const [namespace, name] = splitKey(key);
    const deployment = this.#api.peek(deployments, namespace, name);
    if (deployment === undefined || deployment.metadata.deletionTimestamp !== undefined) return;
    const spec = isObject(deployment.spec) ? deployment.spec : {};
    const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
    const hash = templateHash(templateOf(deployment).template);
    const live = ownedPods(this.#api, deployment).filter(
      (pod) => pod.metadata.deletionTimestamp === undefined,
    );
    const current = live.filter((pod) => pod.metadata.labels?.[TEMPLATE_HASH_LABEL] === hash);
    const old = live.filter((pod) => pod.metadata.labels?.[TEMPLATE_HASH_LABEL] !== hash);
    for (let i = current.length; i < replicas; i++) this.#createPod(deployment, hash);
    // Surplus pods go, the not-ready and the newest first.
    const surplus = [...current]
      .sort(
        (a, b) =>
          Number(isPodReady(a)) - Number(isPodReady(b)) ||
          (b.metadata.name ?? '').localeCompare(a.metadata.name ?? ''),
      )
      .slice(0, Math.max(0, current.length - replicas));
    for (const pod of surplus) this.#deletePod(pod);
    const strategy = isObject(spec.strategy) ? spec.strategy.type : undefined;
    const readyNew = current.filter(isPodReady).length;
    if (strategy === 'Recreate' || readyNew >= replicas)
      for (const pod of old) this.#deletePod(pod);
    this.#writeStatus(deployment, hash, replicas);
  }

  #createPod(deployment: KubeObject, hash: string): void {
    const namespace = deployment.metadata.namespace ?? '';
    const fresh = (): string => `${deployment.metadata.name ?? ''}-${hash}-${randomSuffix()}`;
    let name = fresh();
    while (this.#api.peek(podInfo, namespace, name) !== undefined) name = fresh();
    const pod = podFromTemplate({
      owner: deployment,
      ownerKind: 'Deployment',
      name,
      labels: { ...templateOf(deployment).labels, [TEMPLATE_HASH_LABEL]: hash },
    });
    this.#api.create(podInfo, namespace, pod);
  }

  #deletePod(pod: KubeObject): void {
    this.#api.delete(podInfo, pod.metadata.namespace ?? '', pod.metadata.name ?? '');
  }

  #writeStatus(deployment: KubeObject, hash: string, replicas: number): void {
    const current = this.#api.peek(
      deployments,
      deployment.metadata.namespace ?? '',
      deployment.metadata.name ?? '',
    );
    if (current === undefined) return;
    const pods = ownedPods(this.#api, current);
    const updated = pods.filter((pod) => pod.metadata.labels?.[TEMPLATE_HASH_LABEL] === hash);
    const ready = pods.filter(isPodReady).length;
    const done = updated.length === replicas && pods.length === replicas && ready >= replicas;
    const previous = isObject(current.status) ? current.status : {};
    const now = rfc3339(this.#clock.now());
    const condition = (
      type: string,
      status: boolean,
      reason: string,
      message: string,
    ): JsonObject => {
      const old = objects(previous.conditions).find((c) => c.type === type);
      const value = status ? 'True' : 'False';
      const same = old?.status === value && old.reason === reason;
      return {
        type,
        status: value,
        lastUpdateTime: same ? old.lastUpdateTime : now,
        lastTransitionTime: old?.status === value ? old.lastTransitionTime : now,
        reason,
        message,
      };
    };
    const name = current.metadata.name ?? '';
    const next = clone(current);
    next.status = {
      observedGeneration: current.metadata.generation ?? 1,
      replicas: pods.length,
      updatedReplicas: updated.length,
      readyReplicas: ready,
      availableReplicas: ready,
      ...(pods.length > ready ? { unavailableReplicas: pods.length - ready } : {}),
      conditions: [
        condition(
          'Available',
          ready >= replicas,
          ready >= replicas ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          ready >= replicas
            ? 'Deployment has minimum availability.'
            : 'Deployment does not have minimum availability.',
        ),
        condition(
          'Progressing',
          true,
          done ? 'NewReplicaSetAvailable' : 'ReplicaSetUpdated',
          done
            ? `ReplicaSet "${name}-${hash}" has successfully progressed.`
            : `ReplicaSet "${name}-${hash}" is progressing.`,
        ),
      ],
    };
    this.#api.write(deployments, next, 'status');
  }
}
