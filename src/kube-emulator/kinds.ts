// The table of served kinds: adding a kind is one entry here (plus, optionally, its rules).
import { eventFromStorage, eventToStorage } from './event-conversion.ts';
import type { JsonObject } from './json.ts';
import { kindRules, type KindRules } from './admission/kind-rules.ts';

export interface KindInfo {
  /** API group, '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural used in paths and in `details.kind` (`statefulsets`). */
  readonly resource: string;
  readonly kind: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /**
   * Subresources served by the generic handler: `status`, `scale`, and pods'
   * `ephemeralcontainers` (the Pod itself, of which an update may change only
   * `spec.ephemeralContainers`: pkg/registry/core/pod/storage/storage.go EphemeralContainersREST).
   */
  readonly subresources: readonly ('status' | 'scale' | 'ephemeralcontainers')[];
  /** The store table: kinds served under two groups (events) share one. */
  readonly storage: string;
  /** Field selector labels beyond `metadata.name`/`metadata.namespace`, with the stored path. */
  readonly fieldLabels: Readonly<Record<string, readonly string[]>>;
  /** Whether `metadata.generation` counts spec changes. */
  readonly hasGeneration: boolean;
  /** Defaults and validation of this kind. */
  readonly rules: KindRules;
  /** The verbs discovery lists, when not the full CRUD set (the reviews: only `create`). */
  readonly verbs?: readonly string[];
  /** Subresources served by extra-routes.ts (`log`, `exec`, `token`…), as discovery lists them. */
  readonly extraSubresources?: readonly ExtraSubresource[];
  /** Conversion to and from the stored form, for a kind served over another's store. */
  readonly conversion?: {
    toStorage(object: JsonObject): JsonObject;
    fromStorage(object: JsonObject): JsonObject;
  };
}

/** A discovery row for a subresource served outside the generic handler. */
export interface ExtraSubresource {
  readonly name: string;
  readonly kind: string;
  readonly verbs: readonly string[];
  readonly group?: string;
  readonly version?: string;
}

const none: Readonly<Record<string, readonly string[]>> = {};

const eventFieldLabels: Record<string, string[]> = {
  'involvedObject.kind': ['involvedObject', 'kind'],
  'involvedObject.namespace': ['involvedObject', 'namespace'],
  'involvedObject.name': ['involvedObject', 'name'],
  'involvedObject.uid': ['involvedObject', 'uid'],
  'involvedObject.apiVersion': ['involvedObject', 'apiVersion'],
  'involvedObject.resourceVersion': ['involvedObject', 'resourceVersion'],
  'involvedObject.fieldPath': ['involvedObject', 'fieldPath'],
  reason: ['reason'],
  reportingComponent: ['reportingComponent'],
  source: ['source', 'component'],
  type: ['type'],
};

type Entry = Omit<KindInfo, 'storage' | 'rules' | 'categories' | 'fieldLabels' | 'hasGeneration'> &
  Partial<Pick<KindInfo, 'storage' | 'categories' | 'fieldLabels' | 'hasGeneration'>>;

const entries: readonly Entry[] = [
  {
    group: '',
    version: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    singular: 'namespace',
    namespaced: false,
    shortNames: ['ns'],
    subresources: ['status'],
    fieldLabels: { 'status.phase': ['status', 'phase'] },
  },
  {
    group: '',
    version: 'v1',
    resource: 'pods',
    kind: 'Pod',
    singular: 'pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status', 'ephemeralcontainers'],
    extraSubresources: [
      { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
      {
        name: 'eviction',
        kind: 'Eviction',
        verbs: ['create'],
        group: 'policy',
        version: 'v1',
      },
      { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
      { name: 'log', kind: 'Pod', verbs: ['get'] },
      { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    ],
    fieldLabels: {
      'spec.nodeName': ['spec', 'nodeName'],
      'spec.restartPolicy': ['spec', 'restartPolicy'],
      'spec.schedulerName': ['spec', 'schedulerName'],
      'spec.serviceAccountName': ['spec', 'serviceAccountName'],
      'status.phase': ['status', 'phase'],
      'status.podIP': ['status', 'podIP'],
      'status.nominatedNodeName': ['status', 'nominatedNodeName'],
    },
  },
  {
    group: '',
    version: 'v1',
    resource: 'secrets',
    kind: 'Secret',
    singular: 'secret',
    namespaced: true,
    shortNames: [],
    subresources: [],
    fieldLabels: { type: ['type'] },
  },
  {
    group: '',
    version: 'v1',
    resource: 'configmaps',
    kind: 'ConfigMap',
    singular: 'configmap',
    namespaced: true,
    shortNames: ['cm'],
    subresources: [],
  },
  {
    group: '',
    version: 'v1',
    resource: 'services',
    kind: 'Service',
    singular: 'service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    subresources: ['status'],
  },
  {
    group: '',
    version: 'v1',
    resource: 'nodes',
    kind: 'Node',
    singular: 'node',
    namespaced: false,
    shortNames: ['no'],
    subresources: ['status'],
    // pkg/registry/core/node/strategy.go NodeToSelectableFields.
    fieldLabels: { 'spec.unschedulable': ['spec', 'unschedulable'] },
  },
  {
    group: '',
    version: 'v1',
    resource: 'endpoints',
    kind: 'Endpoints',
    singular: 'endpoints',
    namespaced: true,
    shortNames: ['ep'],
    subresources: [],
  },
  {
    group: 'discovery.k8s.io',
    version: 'v1',
    resource: 'endpointslices',
    kind: 'EndpointSlice',
    singular: 'endpointslice',
    namespaced: true,
    shortNames: [],
    subresources: [],
  },
  {
    group: 'policy',
    version: 'v1',
    resource: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    singular: 'poddisruptionbudget',
    namespaced: true,
    shortNames: ['pdb'],
    subresources: ['status'],
    hasGeneration: true,
  },
  {
    group: '',
    version: 'v1',
    resource: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    singular: 'persistentvolumeclaim',
    namespaced: true,
    shortNames: ['pvc'],
    subresources: ['status'],
  },
  {
    group: '',
    version: 'v1',
    resource: 'serviceaccounts',
    kind: 'ServiceAccount',
    singular: 'serviceaccount',
    namespaced: true,
    shortNames: ['sa'],
    subresources: [],
    extraSubresources: [
      {
        name: 'token',
        kind: 'TokenRequest',
        verbs: ['create'],
        group: 'authentication.k8s.io',
        version: 'v1',
      },
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'events',
    kind: 'Event',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    subresources: [],
    fieldLabels: eventFieldLabels,
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    resource: 'events',
    kind: 'Event',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    subresources: [],
    storage: '/events',
    fieldLabels: eventFieldLabels,
    conversion: { toStorage: eventToStorage, fromStorage: eventFromStorage },
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    kind: 'Lease',
    singular: 'lease',
    namespaced: true,
    shortNames: [],
    subresources: [],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'statefulsets',
    kind: 'StatefulSet',
    singular: 'statefulset',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    subresources: ['status', 'scale'],
    hasGeneration: true,
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    singular: 'deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: ['status', 'scale'],
    hasGeneration: true,
  },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'roles',
    kind: 'Role',
    singular: 'role',
    namespaced: true,
    shortNames: [],
    subresources: [],
  },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'rolebindings',
    kind: 'RoleBinding',
    singular: 'rolebinding',
    namespaced: true,
    shortNames: [],
    subresources: [],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'replicasets',
    kind: 'ReplicaSet',
    singular: 'replicaset',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    subresources: ['status', 'scale'],
    hasGeneration: true,
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'controllerrevisions',
    kind: 'ControllerRevision',
    singular: 'controllerrevision',
    namespaced: true,
    shortNames: [],
    subresources: [],
  },
  // Computed on create, never stored (extra-routes.ts).
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    resource: 'selfsubjectaccessreviews',
    kind: 'SelfSubjectAccessReview',
    singular: 'selfsubjectaccessreview',
    namespaced: false,
    shortNames: [],
    subresources: [],
    verbs: ['create'],
  },
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    resource: 'selfsubjectrulesreviews',
    kind: 'SelfSubjectRulesReview',
    singular: 'selfsubjectrulesreview',
    namespaced: false,
    shortNames: [],
    subresources: [],
    verbs: ['create'],
  },
  {
    group: 'authentication.k8s.io',
    version: 'v1',
    resource: 'selfsubjectreviews',
    kind: 'SelfSubjectReview',
    singular: 'selfsubjectreview',
    namespaced: false,
    shortNames: [],
    subresources: [],
    verbs: ['create'],
  },
];

export const kinds: readonly KindInfo[] = entries.map((entry) => ({
  storage: `${entry.group}/${entry.resource}`,
  categories: [],
  fieldLabels: none,
  hasGeneration: false,
  ...entry,
  rules: kindRules(entry.kind),
}));

export function apiVersionOf(info: Pick<KindInfo, 'group' | 'version'>): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

/** The kind served at `group/version/resource`, if any. */
export function findKind(group: string, version: string, resource: string): KindInfo | undefined {
  return kinds.find(
    (info) => info.group === group && info.version === version && info.resource === resource,
  );
}

/** The kind served as `Kind` in `group/version` (owner references name kinds this way). */
export function kindNamed(group: string, version: string, kind: string): KindInfo | undefined {
  return kinds.find(
    (info) => info.group === group && info.version === version && info.kind === kind,
  );
}

/** The kind stored in table `storage` that is served natively (not through a conversion). */
export function storageKind(storage: string): KindInfo {
  const info = kinds.find(
    (candidate) => candidate.storage === storage && candidate.conversion === undefined,
  );
  if (info === undefined) throw new Error(`no kind stored as ${storage}`);
  return info;
}

/** The kind for a `{group, resource}` pair, for internal callers (controllers, kubelets). */
export function kindOf(group: string, resource: string): KindInfo {
  const info = kinds.find(
    (candidate) => candidate.group === group && candidate.resource === resource,
  );
  if (info === undefined) throw new Error(`unknown kind ${resource}.${group}`);
  return info;
}

/** The kinds the controllers and kubelets share. */
export const podInfo = kindOf('', 'pods');
export const claimInfo = kindOf('', 'persistentvolumeclaims');
export const nodeInfo = kindOf('', 'nodes');
