// The Deployment controller (pkg/controller/deployment): pods through ReplicaSets. The new
// ReplicaSet `<deployment>-<pod-template-hash>` carries the template with the hash label, the
// deployment's annotations and `deployment.kubernetes.io/revision` (one past the old ones; an
// old ReplicaSet whose template comes back, as after `kubectl rollout undo`, is reused and gets
// the new revision); RollingUpdate scales it up within maxSurge and the old ones down within
// maxUnavailable (rolling.go), Recreate scales the old ones to zero first (recreate.go); old
// ReplicaSets beyond revisionHistoryLimit are deleted; Events `ScalingReplicaSet`; status and
// the Available/Progressing conditions `kubectl rollout status` reads (sync.go calculateStatus).
import { rfc3339, type Clock } from '../clock.ts';
import type { EventRecorder } from '../event-recorder.ts';
import { clone, isObject, objects, type JsonObject } from '../json.ts';
import { kindOf } from '../kinds.ts';
import { controllerOf, ownerKeyOf, templateOf } from './owned-pods.ts';
import { replicaSets } from './replicaset-controller.ts';
import type { ResourceApi } from '../resource-api.ts';
import { sameTemplate, templateHash } from './template-hash.ts';
import type { KubeObject } from '../types.ts';
import { WorkQueue, splitKey } from '../work-queue.ts';

const deployments = kindOf('apps', 'deployments');
export const TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
const DESIRED_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
const MAX_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
/** Annotations of a Deployment not copied to its ReplicaSets (deployment/util annotationsToSkip). */
const SKIPPED_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_ANNOTATION,
  MAX_ANNOTATION,
  'deprecated.deployment.rollback.to',
]);

const num = (value: unknown, fallback = 0): number =>
  typeof value === 'number' ? value : fallback;
const specOf = (o: KubeObject): JsonObject => (isObject(o.spec) ? o.spec : {});
const statusOf = (o: KubeObject): JsonObject => (isObject(o.status) ? o.status : {});
const replicasOf = (o: KubeObject): number => num(specOf(o).replicas);
export const revisionOf = (o: KubeObject): number =>
  Number(o.metadata.annotations?.[REVISION_ANNOTATION] ?? '0') || 0;

/** An int-or-percent of `total`: percentages rounded up (surge) or down (unavailable). */
function scaled(value: unknown, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const percent = /^(\d+)%$/.exec(typeof value === 'string' ? value : '25%')?.[1];
  const amount = (Number(percent ?? '25') * total) / 100;
  return roundUp ? Math.ceil(amount) : Math.floor(amount);
}

/** The template of a ReplicaSet without its hash label (equalIgnoreHash). */
function withoutHash(template: unknown): unknown {
  if (!isObject(template)) return template;
  const copy = clone(template);
  if (isObject(copy.metadata) && isObject(copy.metadata.labels)) {
    const labels = Object.entries(copy.metadata.labels).filter(([k]) => k !== TEMPLATE_HASH_LABEL);
    if (labels.length === 0) delete copy.metadata.labels;
    else copy.metadata.labels = Object.fromEntries(labels);
  }
  return copy;
}

export class DeploymentController {
  readonly #api: ResourceApi;
  readonly #clock: Clock;
  readonly #events: EventRecorder | undefined;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock; events?: EventRecorder }) {
    this.#api = options.api;
    this.#clock = options.clock;
    this.#events = options.events;
    this.#queue = new WorkQueue({ handle: (key) => this.#reconcile(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      const own = ownerKeyOf(event, deployments.storage, 'Deployment');
      if (own !== undefined) {
        this.#queue.add(own);
        return;
      }
      if (event.storage !== replicaSets.storage) return;
      const ref = controllerOf(event.object);
      if (ref?.kind === 'Deployment')
        this.#queue.add(`${event.object.metadata.namespace ?? ''}/${ref.name}`);
    });
    for (const d of this.#api.store.list(deployments.storage)) {
      this.#queue.add(`${d.metadata.namespace ?? ''}/${d.metadata.name ?? ''}`);
    }
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #owned(deployment: KubeObject): KubeObject[] {
    return this.#api.store
      .list(replicaSets.storage, deployment.metadata.namespace ?? '')
      .filter(
        (rs) =>
          controllerOf(rs)?.uid === deployment.metadata.uid &&
          rs.metadata.deletionTimestamp === undefined,
      );
  }

  #reconcile(key: string): void {
    const [namespace, name] = splitKey(key);
    let deployment = this.#api.peek(deployments, namespace, name);
    if (deployment === undefined || deployment.metadata.deletionTimestamp !== undefined) return;
    const spec = specOf(deployment);
    const replicas = num(spec.replicas, 1);
    const owned = this.#owned(deployment);
    const template = templateOf(deployment).template;
    let newRS = owned.find((rs) => sameTemplate(withoutHash(specOf(rs).template), template));
    const oldRSs = owned.filter((rs) => rs !== newRS);
    const maxOld = Math.max(0, ...oldRSs.map(revisionOf));
    let created = false;
    if (spec.paused !== true) {
      if (newRS === undefined) {
        newRS = this.#createReplicaSet(deployment, maxOld + 1, oldRSs);
        created = newRS !== undefined;
      } else if (revisionOf(newRS) <= maxOld) {
        newRS = this.#setRevision(newRS, maxOld + 1);
      }
      deployment = this.#syncRevision(deployment, newRS) ?? deployment;
      const strategy = isObject(spec.strategy) ? spec.strategy : {};
      if (strategy.type === 'Recreate') this.#recreate(deployment, newRS, oldRSs, replicas);
      else this.#rolling(deployment, newRS, oldRSs, strategy);
      this.#cleanup(oldRSs, num(spec.revisionHistoryLimit, 10));
    }
    this.#writeStatus(deployment, newRS, created);
  }

  #createReplicaSet(
    deployment: KubeObject,
    revision: number,
    oldRSs: readonly KubeObject[],
  ): KubeObject | undefined {
    const namespace = deployment.metadata.namespace ?? '';
    const { template, labels } = templateOf(deployment);
    const spec = specOf(deployment);
    let collisions = num(statusOf(deployment).collisionCount);
    for (let attempt = 0; attempt < 5; attempt++) {
      const hash = templateHash(template, 10, collisions);
      const rsName = `${deployment.metadata.name ?? ''}-${hash}`;
      if (this.#api.peek(replicaSets, namespace, rsName) !== undefined) {
        collisions++;
        continue;
      }
      const annotations: Record<string, string> = {};
      for (const [k, v] of Object.entries(deployment.metadata.annotations ?? {}))
        if (!SKIPPED_ANNOTATIONS.has(k)) annotations[k] = v;
      const replicas = num(spec.replicas, 1);
      annotations[REVISION_ANNOTATION] = String(revision);
      annotations[DESIRED_ANNOTATION] = String(replicas);
      annotations[MAX_ANNOTATION] = String(replicas + this.#surge(deployment));
      const selector = isObject(spec.selector) ? clone(spec.selector) : {};
      selector.matchLabels = {
        ...(isObject(selector.matchLabels) ? selector.matchLabels : {}),
        [TEMPLATE_HASH_LABEL]: hash,
      };
      const rsTemplate = clone(template);
      const meta = isObject(rsTemplate.metadata) ? rsTemplate.metadata : {};
      meta.labels = { ...labels, [TEMPLATE_HASH_LABEL]: hash };
      rsTemplate.metadata = meta;
      const strategy = isObject(spec.strategy) ? spec.strategy : {};
      // Recreate starts the new set only once the old pods are gone; RollingUpdate starts at 0
      // and lets the rolling step scale it.
      const rs = this.#api.create(replicaSets, namespace, {
        metadata: {
          name: rsName,
          labels: { ...labels, [TEMPLATE_HASH_LABEL]: hash },
          annotations,
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: deployment.metadata.name ?? '',
              uid: deployment.metadata.uid ?? '',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          replicas: strategy.type === 'Recreate' || oldRSs.length > 0 ? 0 : replicas,
          minReadySeconds: num(spec.minReadySeconds),
          selector,
          template: rsTemplate,
        },
      });
      if (collisions !== num(statusOf(deployment).collisionCount)) {
        const next = clone(deployment);
        next.status = { ...statusOf(deployment), collisionCount: collisions };
        this.#api.write(deployments, next, 'status');
      }
      const initial = replicasOf(rs);
      if (initial > 0) this.#scaleEvent(deployment, rs, initial, 0);
      return this.#api.peek(replicaSets, namespace, rsName) ?? rs;
    }
    return undefined;
  }

  /** An old ReplicaSet that becomes the new one again: the next revision, the old in history. */
  #setRevision(rs: KubeObject, revision: number): KubeObject {
    const next = clone(rs);
    const annotations = { ...next.metadata.annotations };
    const previous = annotations[REVISION_ANNOTATION];
    if (previous !== undefined) {
      const history = annotations[REVISION_HISTORY_ANNOTATION];
      annotations[REVISION_HISTORY_ANNOTATION] =
        history === undefined || history === '' ? previous : `${history},${previous}`;
    }
    annotations[REVISION_ANNOTATION] = String(revision);
    next.metadata.annotations = annotations;
    return this.#api.write(replicaSets, next);
  }

  /** The Deployment carries its new ReplicaSet's revision (and change cause). */
  #syncRevision(deployment: KubeObject, newRS: KubeObject | undefined): KubeObject | undefined {
    if (newRS === undefined) return undefined;
    const revision = String(revisionOf(newRS));
    if (deployment.metadata.annotations?.[REVISION_ANNOTATION] === revision) return undefined;
    const next = clone(deployment);
    next.metadata.annotations = { ...next.metadata.annotations, [REVISION_ANNOTATION]: revision };
    return this.#api.write(deployments, next);
  }

  #surge(deployment: KubeObject): number {
    const strategy = isObject(specOf(deployment).strategy)
      ? (specOf(deployment).strategy as JsonObject)
      : {};
    if (strategy.type === 'Recreate') return 0;
    const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
    return scaled(rolling.maxSurge, num(specOf(deployment).replicas, 1), true);
  }

  #scale(deployment: KubeObject, rs: KubeObject, to: number): KubeObject {
    const from = replicasOf(rs);
    if (from === to) return rs;
    const next = clone(rs);
    (next.spec as JsonObject).replicas = to;
    const replicas = num(specOf(deployment).replicas, 1);
    next.metadata.annotations = {
      ...next.metadata.annotations,
      [DESIRED_ANNOTATION]: String(replicas),
      [MAX_ANNOTATION]: String(replicas + this.#surge(deployment)),
    };
    const written = this.#api.write(replicaSets, next);
    this.#scaleEvent(deployment, rs, to, from);
    return written;
  }

  #scaleEvent(deployment: KubeObject, rs: KubeObject, to: number, from: number): void {
    this.#events?.record({
      object: deployment,
      info: deployments,
      source: { component: 'deployment-controller' },
      type: 'Normal',
      reason: 'ScalingReplicaSet',
      message: `Scaled ${to > from ? 'up' : 'down'} replica set ${rs.metadata.name ?? ''} to ${to} from ${from}`,
    });
  }

  #recreate(
    deployment: KubeObject,
    newRS: KubeObject | undefined,
    oldRSs: readonly KubeObject[],
    replicas: number,
  ): void {
    for (const rs of oldRSs) if (replicasOf(rs) > 0) this.#scale(deployment, rs, 0);
    const oldRunning = oldRSs.some((rs) => num(statusOf(rs).replicas) > 0);
    if (newRS !== undefined && !oldRunning) this.#scale(deployment, newRS, replicas);
  }

  #rolling(
    deployment: KubeObject,
    newRS: KubeObject | undefined,
    oldRSs: readonly KubeObject[],
    strategy: JsonObject,
  ): void {
    const replicas = num(specOf(deployment).replicas, 1);
    const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
    const surge = scaled(rolling.maxSurge, replicas, true);
    let unavailable = scaled(rolling.maxUnavailable, replicas, false);
    if (surge === 0 && unavailable === 0) unavailable = 1;
    let current = newRS;
    // Scale the new ReplicaSet up within maxSurge (NewRSNewReplicas), or down to the target.
    if (current !== undefined) {
      const total = [current, ...oldRSs].reduce((sum, rs) => sum + replicasOf(rs), 0);
      const have = replicasOf(current);
      let want = have;
      if (have > replicas) want = replicas;
      else if (have < replicas && total < replicas + surge)
        want = have + Math.min(replicas + surge - total, replicas - have);
      current = this.#scale(deployment, current, want);
    }
    // Scale old ReplicaSets down while minAvailable holds (reconcileOldReplicaSets).
    const all = current === undefined ? [...oldRSs] : [current, ...oldRSs];
    const minAvailable = replicas - unavailable;
    const newUnavailable =
      current === undefined ? 0 : replicasOf(current) - num(statusOf(current).availableReplicas);
    let budget = all.reduce((sum, rs) => sum + replicasOf(rs), 0) - minAvailable - newUnavailable;
    const oldest = [...oldRSs].sort((a, b) =>
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''),
    );
    // First the old pods that are not available anyway (cleanupUnhealthyReplicas)…
    for (const rs of oldest) {
      if (budget <= 0) return;
      const unhealthy = replicasOf(rs) - num(statusOf(rs).availableReplicas);
      const cut = Math.min(Math.max(0, unhealthy), budget);
      if (cut > 0) {
        this.#scale(deployment, rs, replicasOf(rs) - cut);
        budget -= cut;
      }
    }
    // …then available ones, as far as the available count above minAvailable allows.
    const available = all.reduce((sum, rs) => sum + num(statusOf(rs).availableReplicas), 0);
    let cut = Math.min(budget, available - minAvailable);
    for (const rs of oldest) {
      if (cut <= 0) return;
      const latest =
        this.#api.peek(replicaSets, rs.metadata.namespace ?? '', rs.metadata.name ?? '') ?? rs;
      const down = Math.min(replicasOf(latest), cut);
      if (down > 0) {
        this.#scale(deployment, latest, replicasOf(latest) - down);
        cut -= down;
      }
    }
  }

  /** Deletes old, empty ReplicaSets beyond revisionHistoryLimit, oldest revision first. */
  #cleanup(oldRSs: readonly KubeObject[], limit: number): void {
    const empty = oldRSs
      .map(
        (rs) =>
          this.#api.peek(replicaSets, rs.metadata.namespace ?? '', rs.metadata.name ?? '') ?? rs,
      )
      .filter((rs) => replicasOf(rs) === 0 && num(statusOf(rs).replicas) === 0)
      .sort((a, b) => revisionOf(a) - revisionOf(b));
    for (const rs of empty.slice(0, Math.max(0, empty.length - limit))) {
      this.#api.delete(replicaSets, rs.metadata.namespace ?? '', rs.metadata.name ?? '');
    }
  }

  #writeStatus(deployment: KubeObject, newRS: KubeObject | undefined, created: boolean): void {
    const current = this.#api.peek(
      deployments,
      deployment.metadata.namespace ?? '',
      deployment.metadata.name ?? '',
    );
    if (current === undefined) return;
    const spec = specOf(current);
    const replicas = num(spec.replicas, 1);
    const all = this.#owned(current);
    const latestNew =
      newRS === undefined ? undefined : all.find((rs) => rs.metadata.uid === newRS.metadata.uid);
    const sum = (field: string): number =>
      all.reduce((total, rs) => total + num(statusOf(rs)[field]), 0);
    const total = sum('replicas');
    const available = sum('availableReplicas');
    const updated = latestNew === undefined ? 0 : num(statusOf(latestNew).replicas);
    const strategy = isObject(spec.strategy) ? spec.strategy : {};
    const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
    const maxUnavailable =
      strategy.type === 'Recreate' ? 0 : scaled(rolling.maxUnavailable, replicas, false);
    const previous = statusOf(current);
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
    const rsName = latestNew?.metadata.name ?? current.metadata.name ?? '';
    const complete = updated === replicas && total === replicas && available === replicas;
    const availableEnough = available >= replicas - maxUnavailable;
    const progressing = complete
      ? condition(
          'Progressing',
          true,
          'NewReplicaSetAvailable',
          `ReplicaSet "${rsName}" has successfully progressed.`,
        )
      : created
        ? condition(
            'Progressing',
            true,
            'NewReplicaSetCreated',
            `Created new replica set "${rsName}"`,
          )
        : condition(
            'Progressing',
            true,
            'ReplicaSetUpdated',
            `ReplicaSet "${rsName}" is progressing.`,
          );
    const next = clone(current);
    next.status = {
      observedGeneration: current.metadata.generation ?? 1,
      replicas: total,
      updatedReplicas: updated,
      readyReplicas: sum('readyReplicas'),
      availableReplicas: available,
      ...(total - available > 0 ? { unavailableReplicas: total - available } : {}),
      conditions: [
        condition(
          'Available',
          availableEnough,
          availableEnough ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          availableEnough
            ? 'Deployment has minimum availability.'
            : 'Deployment does not have minimum availability.',
        ),
        progressing,
      ],
      ...(typeof previous.collisionCount === 'number'
        ? { collisionCount: previous.collisionCount }
        : {}),
    };
    this.#api.write(deployments, next, 'status');
  }
}
