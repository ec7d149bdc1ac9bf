// What the scaler and the departure route need of the workload that runs the validators: its
// StatefulSet (read, replicas patched under a precondition, annotations) and its pods (draining
// marks, whether one exists). The Kubernetes discovery implements it
// (discovery/kubernetes-replicas.ts); a discovery with nothing to scale (static files) refuses.
import type { V1StatefulSet } from '@kubernetes/client-node';
import { ManagerError } from '../errors.ts';
import type { ValidatorId } from '../model.ts';

export interface ReplicaTarget {
  /** Why this discovery cannot scale (501 SCALE_UNSUPPORTED), or undefined when it can. */
  scaleUnsupported(): string | undefined;
  /** The validator StatefulSets currently known (a direct read stands in for a lagging cache). */
  statefulSets(): readonly V1StatefulSet[];
  /** The id of the pod a StatefulSet would create at `ordinal`, when the mapping tells it. */
  idOfNewPod(statefulSet: string, ordinal: number): ValidatorId | undefined;
  /** The StatefulSet as the API server holds it now; throws KUBE_UNAVAILABLE. */
  read(name: string): Promise<V1StatefulSet>;
  /**
   * Patches the scale subresource with `resourceVersion` as a precondition: `conflict` (with the
   * API's words) when that version is gone; throws KUBE_UNAVAILABLE on any other failure.
   */
  patchReplicas(
    name: string,
    replicas: number,
    resourceVersion: string | undefined,
  ): Promise<{ conflict: string } | undefined>;
  /** Merges annotations into the StatefulSet (null removes one); throws KUBE_UNAVAILABLE. */
  annotateStatefulSet(name: string, annotations: Record<string, string | null>): Promise<void>;
  /** Sets (or removes) a pod's annotation; a pod that is gone has nothing to mark. */
  annotatePod(name: string, annotation: string, value: string | null): Promise<void>;
  /** Reads a StatefulSet from the API server into the cache now. */
  confirmStatefulSet(name: string): Promise<void>;
  /** True when a pod of that name exists and the manager's pod selector selects it. */
  podExists(name: string): Promise<boolean>;
}

/** The target of a discovery with nothing to scale: every write is refused, nothing exists. */
export function noReplicaTarget(reason: string): ReplicaTarget {
  const refuse = (): never => {
    throw new ManagerError('SCALE_UNSUPPORTED', reason);
  };
  return {
    scaleUnsupported: () => reason,
    statefulSets: () => [],
    idOfNewPod: () => undefined,
    read: refuse,
    patchReplicas: refuse,
    annotateStatefulSet: refuse,
    annotatePod: refuse,
    confirmStatefulSet: () => Promise.resolve(),
    podExists: () => Promise.resolve(false),
  };
}
