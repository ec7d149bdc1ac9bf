// PersistentVolumeClaims without a storage system: a claim is Bound at once to a volume named
// `pvc-<uid>` (what a dynamic provisioner names it; no PersistentVolume object is served), and a
// claim being deleted keeps its `kubernetes.io/pvc-protection` finalizer until no pod that still
// runs (bound to the node, not Succeeded or Failed) mounts it — the pvc-protection controller's
// rule (pkg/controller/volume/pvcprotection/pvc_protection_controller.go, podUsesPVC). The
// process kubelet gives each claim a folder that lives as long as the claim (pod-claims.ts).
import type { Clock } from '../clock.ts';
import { clone, isObject, objects } from '../json.ts';
import { PVC_PROTECTION_FINALIZER } from '../admission/kind-rules.ts';
import { claimInfo, podInfo } from '../kinds.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { KubeObject } from '../types.ts';
import { WorkQueue, splitKey } from '../work-queue.ts';

/** The claim names a pod's volumes mount. */
export function claimNamesOf(pod: KubeObject): string[] {
  const spec = isObject(pod.spec) ? pod.spec : {};
  return objects(spec.volumes).flatMap((volume) => {
    const source = isObject(volume.persistentVolumeClaim) ? volume.persistentVolumeClaim : {};
    return typeof source.claimName === 'string' ? [source.claimName] : [];
  });
}

/** A pod that may still have the claim mounted: scheduled, and not finished. */
function usesClaim(pod: KubeObject, claim: string): boolean {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const phase = isObject(pod.status) ? pod.status.phase : undefined;
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '') return false;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  return claimNamesOf(pod).includes(claim);
}

export class PvcController {
  readonly #api: ResourceApi;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock }) {
    this.#api = options.api;
    this.#queue = new WorkQueue({ handle: (key) => this.#reconcile(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      const meta = event.object.metadata;
      const namespace = meta.namespace ?? '';
      if (event.storage === claimInfo.storage && event.type !== 'DELETED') {
        this.#queue.add(`${namespace}/${meta.name ?? ''}`);
      } else if (event.storage === podInfo.storage) {
        // A pod that goes (or finishes) may release a claim waiting to be deleted.
        for (const claim of claimNamesOf(event.object)) this.#queue.add(`${namespace}/${claim}`);
      }
    });
    for (const claim of this.#api.store.list(claimInfo.storage)) {
      this.#queue.add(`${claim.metadata.namespace ?? ''}/${claim.metadata.name ?? ''}`);
    }
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #reconcile(key: string): void {
    const [namespace, name] = splitKey(key);
    const claim = this.#api.peek(claimInfo, namespace, name);
    if (claim === undefined) return;
    if (claim.metadata.deletionTimestamp !== undefined) {
      this.#release(claim);
      return;
    }
    const phase = isObject(claim.status) ? claim.status.phase : undefined;
    if (phase !== 'Bound') this.#bind(claim);
  }

  /** Binds as the PV controller does after provisioning: volumeName, annotations, status. */
  #bind(claim: KubeObject): void {
    const spec = isObject(claim.spec) ? claim.spec : {};
    const next = clone(claim);
    const nextSpec = isObject(next.spec) ? next.spec : {};
    nextSpec.volumeName ??= `pvc-${claim.metadata.uid ?? ''}`;
    next.metadata.annotations = {
      ...next.metadata.annotations,
      'pv.kubernetes.io/bind-completed': 'yes',
      'pv.kubernetes.io/bound-by-controller': 'yes',
    };
    const written = this.#api.write(claimInfo, next);
    const resources = isObject(spec.resources) ? spec.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    const bound = clone(written);
    bound.status = {
      phase: 'Bound',
      accessModes: Array.isArray(spec.accessModes) ? spec.accessModes.map(String) : [],
      capacity: { storage: requests.storage },
    };
    this.#api.write(claimInfo, bound, 'status');
  }

  /** Lets a claim being deleted go once no running pod mounts it. */
  #release(claim: KubeObject): void {
    const finalizers = claim.metadata.finalizers ?? [];
    if (!finalizers.includes(PVC_PROTECTION_FINALIZER)) return;
    const name = claim.metadata.name ?? '';
    const pods = this.#api.store.list(podInfo.storage, claim.metadata.namespace ?? '');
    if (pods.some((pod) => usesClaim(pod, name))) return;
    const next = clone(claim);
    next.metadata.finalizers = finalizers.filter((f) => f !== PVC_PROTECTION_FINALIZER);
    this.#api.write(claimInfo, next);
  }
}
