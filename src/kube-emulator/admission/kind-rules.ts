// Per-kind server-side defaults and validation (the part of a real apiserver's strategies we need).
import { child, isObject, objects, type JsonObject } from '../json.ts';
import { coreEventDefaults } from '../event-conversion.ts';
import { fromStructured, matchesLabels } from '../selectors/label-selector.ts';
import type { StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import { validationCauses } from './rules.ts';
import { prepareServiceUpdate } from './service-rules.ts';

export interface KindRules {
  /** Mutating admission, on create only (before defaults). */
  admit?(object: KubeObject): void;
  /** Fills server-side defaults in place, on create and update. */
  defaults?(object: KubeObject): void;
  /** An update's changes made before defaults and validation (PrepareForUpdate). */
  prepareForUpdate?(object: KubeObject, old: KubeObject): void;
  /** Problems with `object`; `old` is the stored object on update, undefined on create. */
  validate?(object: KubeObject, old: KubeObject | undefined): StatusCause[];
}

function required(field: string): StatusCause {
  return { reason: 'FieldValueRequired', field, message: 'Required value' };
}

/** Probe defaults (SetDefaults_Probe, SetDefaults_HTTPGetAction). */
function defaultProbe(probe: unknown): void {
  if (!isObject(probe)) return;
  probe.timeoutSeconds ??= 1;
  probe.periodSeconds ??= 10;
  probe.successThreshold ??= 1;
  probe.failureThreshold ??= 3;
  if (isObject(probe.httpGet)) {
    probe.httpGet.path ??= '/';
    probe.httpGet.scheme ??= 'HTTP';
  }
}

/**
 * A pod spec's defaults, in pods and in workload templates alike: pkg/apis/core/v1/defaults.go
 * (SetDefaults_PodSpec, _Container, _ContainerPort, _Probe, _SecretVolumeSource,
 * _ConfigMapVolumeSource, _ProjectedVolumeSource, _DownwardAPIVolumeSource `defaultMode: 420`,
 * _ObjectFieldSelector `apiVersion: v1`).
 */
function defaultPodSpec(spec: JsonObject): void {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  for (const volume of objects(spec.volumes)) {
    for (const source of ['secret', 'configMap', 'projected', 'downwardAPI']) {
      const settings = volume[source];
      if (isObject(settings)) settings.defaultMode ??= 420;
    }
  }
  for (const container of [...objects(spec.containers), ...objects(spec.initContainers)])
    defaultContainer(container);
}

/** SetDefaults_Container, _ContainerPort, _Probe and _ObjectFieldSelector for one container. */
function defaultContainer(container: JsonObject): void {
  const image = typeof container.image === 'string' ? container.image : '';
  const tag = /:[^/]+$/.exec(image)?.[0];
  container.imagePullPolicy ??= tag === undefined || tag === ':latest' ? 'Always' : 'IfNotPresent';
  container.terminationMessagePath ??= '/dev/termination-log';
  container.terminationMessagePolicy ??= 'File';
  container.resources ??= {};
  for (const port of objects(container.ports)) port.protocol ??= 'TCP';
  for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'])
    defaultProbe(container[probe]);
  for (const variable of objects(container.env)) {
    const from = isObject(variable.valueFrom) ? variable.valueFrom : undefined;
    if (from !== undefined && isObject(from.fieldRef)) from.fieldRef.apiVersion ??= 'v1';
  }
}

function validatePodSpec(spec: unknown, field: string): StatusCause[] {
  if (!isObject(spec)) return [required(field)];
  const containers = objects(spec.containers);
  if (containers.length === 0) return [required(`${field}.containers`)];
  // Each container's own rules are rules.ts's (pod containers, pod template containers).
  return [];
}

/** Selector present, well formed, and matching the template's labels. */
function validateSelector(object: KubeObject): StatusCause[] {
  const spec = isObject(object.spec) ? object.spec : {};
  if (!isObject(spec.selector)) return [required('spec.selector')];
  const template = isObject(spec.template) ? spec.template : {};
  const labels = isObject(template.metadata) ? template.metadata.labels : undefined;
  try {
    const selector = fromStructured(spec.selector);
    if (selector.length === 0) {
      return [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.selector',
          message: 'Invalid value: empty selector is invalid for deployment',
        },
      ];
    }
    if (!matchesLabels(selector, labels as Record<string, string> | undefined)) {
      return [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.template.metadata.labels',
          message: 'Invalid value: `selector` does not match template `labels`',
        },
      ];
    }
  } catch (error: unknown) {
    return [{ reason: 'FieldValueInvalid', field: 'spec.selector', message: String(error) }];
  }
  return validatePodSpec(template.spec, 'spec.template.spec');
}

function unchanged(
  object: KubeObject,
  old: KubeObject | undefined,
  fields: readonly string[],
): boolean {
  if (old === undefined) return true;
  const spec = isObject(object.spec) ? object.spec : {};
  const oldSpec = isObject(old.spec) ? old.spec : {};
  return fields.every((field) => JSON.stringify(spec[field]) === JSON.stringify(oldSpec[field]));
}

const statefulSet: KindRules = {
  defaults(object) {
    const spec = child(object, 'spec');
    spec.replicas ??= 1;
    spec.podManagementPolicy ??= 'OrderedReady';
    // SetDefaults_StatefulSet: an empty update strategy is RollingUpdate from partition 0.
    const update = child(spec, 'updateStrategy');
    if (update.type === undefined || update.type === '') {
      update.type = 'RollingUpdate';
      update.rollingUpdate ??= { partition: 0 };
    }
    spec.revisionHistoryLimit ??= 10;
    spec.persistentVolumeClaimRetentionPolicy ??= { whenDeleted: 'Retain', whenScaled: 'Retain' };
    defaultPodSpec(child(child(spec, 'template'), 'spec'));
    object.status ??= { replicas: 0, availableReplicas: 0 };
  },
  validate(object, old) {
    const causes = validateSelector(object);
    if (
      !unchanged(object, old, [
        'selector',
        'serviceName',
        'podManagementPolicy',
        'volumeClaimTemplates',
      ])
    ) {
      causes.push({
        reason: 'FieldValueForbidden',
        field: 'spec',
        message:
          "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      });
    }
    return causes;
  },
};

const deployment: KindRules = {
  defaults(object) {
    const spec = child(object, 'spec');
    spec.replicas ??= 1;
    // SetDefaults_Deployment (pkg/apis/apps/v1/defaults.go): an empty strategy is RollingUpdate,
    // whose missing bounds are 25 %.
    const strategy = child(spec, 'strategy');
    strategy.type ??= 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const rolling = child(strategy, 'rollingUpdate');
      rolling.maxUnavailable ??= '25%';
      rolling.maxSurge ??= '25%';
    }
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
    defaultPodSpec(child(child(spec, 'template'), 'spec'));
  },
  validate(object, old) {
    const causes = validateSelector(object);
    if (!unchanged(object, old, ['selector'])) {
      causes.push({
        reason: 'FieldValueInvalid',
        field: 'spec.selector',
        message: 'Invalid value: field is immutable',
      });
    }
    return causes;
  },
};

/**
 * What only pods get: SetDefaults_Pod (`enableServiceLinks`) and the default admission plugins:
 * ServiceAccount (`serviceAccountName: default`; its token volume is not added, the process
 * kubelet gives the pod a kubeconfig instead), Priority (`priority: 0`, `preemptionPolicy`),
 * DefaultTolerationSeconds (not-ready and unreachable tolerated for 300 s).
 */
function admitPod(spec: JsonObject): void {
  spec.enableServiceLinks ??= true;
  spec.serviceAccountName ??=
    typeof spec.serviceAccount === 'string' ? spec.serviceAccount : 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  spec.priority ??= 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  if (!Array.isArray(spec.tolerations)) spec.tolerations = [];
  const tolerations = spec.tolerations as JsonObject[];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerations.some((t) => t.key === key))
      tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
}

const pod: KindRules = {
  defaults(object) {
    defaultPodSpec(child(object, 'spec'));
    admitPod(child(object, 'spec'));
    const status = child(object, 'status');
    status.phase ??= 'Pending';
    status.qosClass ??= 'BestEffort';
  },
  validate(object) {
    return validatePodSpec(object.spec, 'spec');
  },
};

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const secret: KindRules = {
  defaults(object) {
    object.type ??= 'Opaque';
    const stringData = object.stringData;
    if (isObject(stringData)) {
      const data = child(object, 'data');
      for (const [key, value] of Object.entries(stringData)) {
        data[key] = Buffer.from(String(value), 'utf8').toString('base64');
      }
    }
    delete object.stringData;
  },
  validate(object) {
    const data = isObject(object.data) ? object.data : {};
    return Object.entries(data)
      .filter(([, value]) => typeof value !== 'string' || !base64.test(value))
      .map(([key]) => ({
        reason: 'FieldValueInvalid',
        field: `data[${key}]`,
        message: 'Invalid value: illegal base64 data',
      }));
  },
};

let nextClusterIp = 1;

let nextNodePort = 0;

/**
 * Service defaults (SetDefaults_Service) and what the service REST strategy allocates: a
 * cluster IP (IPv4 only: `ipFamilies: [IPv4]`, `ipFamilyPolicy: SingleStack`), node ports for
 * NodePort and LoadBalancer services from 30000-32767, `internalTrafficPolicy: Cluster`,
 * `externalTrafficPolicy: Cluster` where it applies.
 */
const service: KindRules = {
  prepareForUpdate: prepareServiceUpdate,
  defaults(object) {
    const spec = child(object, 'spec');
    spec.type ??= 'ClusterIP';
    spec.sessionAffinity ??= 'None';
    const external = spec.type === 'ExternalName';
    if (!external) {
      if (spec.clusterIP === undefined || spec.clusterIP === '') {
        const n = nextClusterIp++;
        spec.clusterIP = `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
      }
      spec.clusterIPs ??= [spec.clusterIP];
      spec.ipFamilies ??= ['IPv4'];
      spec.ipFamilyPolicy ??= 'SingleStack';
      spec.internalTrafficPolicy ??= 'Cluster';
    }
    const nodePorts = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
    if (nodePorts) spec.externalTrafficPolicy ??= 'Cluster';
    if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
    for (const port of objects(spec.ports)) {
      port.protocol ??= 'TCP';
      port.targetPort ??= port.port;
      if (nodePorts && port.nodePort === undefined) port.nodePort = 30000 + (nextNodePort++ % 2768);
    }
    object.status ??= { loadBalancer: {} };
  },
};

const namespace: KindRules = {
  // The namespace strategy's PrepareForCreate: the `kubernetes` finalizer the namespace
  // controller removes once the namespace's content is gone.
  admit(object) {
    const spec = child(object, 'spec');
    const finalizers = Array.isArray(spec.finalizers) ? (spec.finalizers as unknown[]) : [];
    if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
  },
  defaults(object) {
    const status = child(object, 'status');
    status.phase ??= 'Active';
    const labels = child(object.metadata, 'labels') as Record<string, string>;
    labels['kubernetes.io/metadata.name'] = object.metadata.name ?? '';
  },
};

const roleBinding: KindRules = {
  validate(object, old) {
    if (!isObject(object.roleRef)) return [required('roleRef')];
    if (old !== undefined && JSON.stringify(object.roleRef) !== JSON.stringify(old.roleRef)) {
      return [
        {
          reason: 'FieldValueInvalid',
          field: 'roleRef',
          message: 'Invalid value: cannot change roleRef',
        },
      ];
    }
    return [];
  },
};

/** MicroTime goes out as RFC 3339 with 6 fractional digits, whatever precision came in. */
function microTimes(object: JsonObject, fields: readonly string[]): void {
  for (const field of fields) {
    const value = object[field];
    if (typeof value !== 'string') continue;
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) continue;
    const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
    object[field] =
      `${new Date(ms).toISOString().slice(0, 19)}.${fraction.padEnd(6, '0').slice(0, 6)}Z`;
  }
}

const lease: KindRules = {
  defaults(object) {
    if (isObject(object.spec)) microTimes(object.spec, ['acquireTime', 'renewTime']);
  },
};

const event: KindRules = {
  defaults(object) {
    microTimes(object, ['eventTime']);
    coreEventDefaults(object);
  },
};

/** The finalizer the StorageObjectInUseProtection admission plugin puts on every claim. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

const persistentVolumeClaim: KindRules = {
  admit(object) {
    const finalizers = object.metadata.finalizers ?? [];
    if (!finalizers.includes(PVC_PROTECTION_FINALIZER)) {
      object.metadata.finalizers = [...finalizers, PVC_PROTECTION_FINALIZER];
    }
  },
  defaults(object) {
    const spec = child(object, 'spec');
    spec.volumeMode ??= 'Filesystem';
    const status = child(object, 'status');
    status.phase ??= 'Pending';
  },
  validate(object) {
    const spec = isObject(object.spec) ? object.spec : {};
    const causes: StatusCause[] = [];
    if (!Array.isArray(spec.accessModes) || spec.accessModes.length === 0) {
      causes.push(required('spec.accessModes'));
    }
    const resources = isObject(spec.resources) ? spec.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    if (requests.storage === undefined) causes.push(required('spec.resources[storage]'));
    return causes;
  },
};

const byKind: Readonly<Record<string, KindRules>> = {
  PersistentVolumeClaim: persistentVolumeClaim,
  Lease: lease,
  Event: event,
  StatefulSet: statefulSet,
  Deployment: deployment,
  Pod: pod,
  Secret: secret,
  Service: service,
  Namespace: namespace,
  RoleBinding: roleBinding,
};

export function kindRules(kind: string): KindRules {
  const rules = byKind[kind] ?? {};
  return {
    ...rules,
    validate: (object, old) => [
      ...validationCauses(kind, object, old),
      ...(rules.validate?.(object, old) ?? []),
    ],
  };
}
