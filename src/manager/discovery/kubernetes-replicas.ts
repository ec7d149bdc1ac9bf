// The scaler's and the departure route's ReplicaTarget over the Kubernetes discovery: the
// StatefulSet's scale subresource (merge patch with a resourceVersion precondition), its
// annotations and the pods' draining marks, through client-node.
import type { V1StatefulSet } from '@kubernetes/client-node';
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { apiStatus, describeApiError, kubeFailure } from '../kube/client.ts';
import type { ReplicaTarget } from '../scale/replica-target.ts';
import type { KubernetesDiscovery } from './kubernetes-source.ts';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export function kubernetesReplicas(discovery: KubernetesDiscovery): ReplicaTarget {
  const { kube } = discovery;
  const { apps, core, namespace } = kube;
  return {
    scaleUnsupported: () => discovery.scaleUnsupported(),
    statefulSets: () => discovery.statefulSets(),
    idOfNewPod: (statefulSet, ordinal) => discovery.idOfNewPod(statefulSet, ordinal),
    confirmStatefulSet: (name) => discovery.confirmStatefulSet(name),

    async read(name): Promise<V1StatefulSet> {
      try {
        return await apps.readNamespacedStatefulSet({ name, namespace });
      } catch (error: unknown) {
        throw kubeFailure(`could not read StatefulSet ${name}`, error);
      }
    },

    async patchReplicas(name, replicas, resourceVersion) {
      try {
        await apps.patchNamespacedStatefulSetScale(
          { name, namespace, body: { metadata: { resourceVersion }, spec: { replicas } } },
          mergePatch,
        );
        return undefined;
      } catch (error: unknown) {
        if (apiStatus(error) === 409) return { conflict: describeApiError(error) };
        throw kubeFailure(`could not patch the scale of StatefulSet ${name}`, error);
      }
    },

    async annotateStatefulSet(name, annotations) {
      try {
        await apps.patchNamespacedStatefulSet(
          { name, namespace, body: { metadata: { annotations } } },
          mergePatch,
        );
      } catch (error: unknown) {
        throw kubeFailure(`could not annotate StatefulSet ${name}`, error);
      }
    },

    async annotatePod(name, annotation, value) {
      try {
        await core.patchNamespacedPod(
          { name, namespace, body: { metadata: { annotations: { [annotation]: value } } } },
          mergePatch,
        );
      } catch (error: unknown) {
        // Gone (deleted since the cache saw it): its replacement is judged by the StatefulSet.
        if (apiStatus(error) === 404) return;
        throw kubeFailure(`could not annotate pod ${name}`, error);
      }
    },

    async podExists(name) {
      try {
        const pod = await core.readNamespacedPod({ name, namespace });
        return discovery.selectsPod(pod);
      } catch {
        return false;
      }
    },
  };
}
