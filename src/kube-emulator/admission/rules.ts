// The validation rules of the emulator's admission, one entry per rule with the Kubernetes 1.32
// source it follows; kind-rules.ts runs the entries of a kind on every create and update, after
// defaults. A rule returns the causes of a 422 Invalid (field-errors.ts).
import { isObject } from '../json.ts';
import type { StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import { configMapRule, configMapUpdateRule, secretRule, secretUpdateRule } from './data-rules.ts';
import {
  annotationRule,
  finalizerRule,
  finalizersWhileDeletingRule,
  labelRule,
  ownerReferenceRule,
} from './metadata-rules.ts';
import {
  ephemeralContainerCauses,
  ephemeralOnCreateRule,
  podSpecContainerCauses,
  podUpdateRule,
} from './pod-rules.ts';
import { serviceUpdateRule } from './service-rules.ts';
import { deploymentRule, statefulSetRule } from './workload-rules.ts';

export interface ValidationRule {
  readonly name: string;
  /** The Kubernetes source the rule follows (kubernetes/kubernetes or staging path, v1.32). */
  readonly source: string;
  /** The kinds it applies to, or every kind. */
  readonly kinds: readonly string[] | 'all';
  check(object: KubeObject, old: KubeObject | undefined): StatusCause[];
}

const APIMACHINERY = 'staging/src/k8s.io/apimachinery/pkg';
const CORE = 'pkg/apis/core/validation/validation.go';

function templateContainers(object: KubeObject): StatusCause[] {
  const spec = isObject(object.spec) ? object.spec : {};
  const template = isObject(spec.template) ? spec.template : {};
  return isObject(template.spec) ? podSpecContainerCauses(template.spec, 'spec.template.spec') : [];
}

export const VALIDATION_RULES: readonly ValidationRule[] = [
  {
    name: 'label keys and values',
    source: `${APIMACHINERY}/apis/meta/v1/validation/validation.go ValidateLabels`,
    kinds: 'all',
    check: labelRule,
  },
  {
    name: 'annotation keys, 256 KiB in all',
    source: `${APIMACHINERY}/api/validation/objectmeta.go ValidateAnnotations`,
    kinds: 'all',
    check: annotationRule,
  },
  {
    name: 'finalizer names',
    source: `${APIMACHINERY}/api/validation/objectmeta.go ValidateFinalizers`,
    kinds: 'all',
    check: finalizerRule,
  },
  {
    name: 'one controller owner reference',
    source: `${APIMACHINERY}/api/validation/objectmeta.go ValidateOwnerReferences`,
    kinds: 'all',
    check: ownerReferenceRule,
  },
  {
    name: 'no new finalizer while deleting',
    source: `${APIMACHINERY}/api/validation/objectmeta.go ValidateObjectMetaUpdate`,
    kinds: 'all',
    check: finalizersWhileDeletingRule,
  },
  {
    name: 'Secret keys, 1 MiB, typed Secret keys',
    source: `${CORE} ValidateSecret`,
    kinds: ['Secret'],
    check: secretRule,
  },
  {
    name: 'Secret type and immutable data',
    source: `${CORE} ValidateSecretUpdate`,
    kinds: ['Secret'],
    check: secretUpdateRule,
  },
  {
    name: 'ConfigMap keys, 1 MiB',
    source: `${CORE} ValidateConfigMap`,
    kinds: ['ConfigMap'],
    check: configMapRule,
  },
  {
    name: 'immutable ConfigMap data',
    source: `${CORE} ValidateConfigMapUpdate`,
    kinds: ['ConfigMap'],
    check: configMapUpdateRule,
  },
  {
    name: 'pod containers: names, images, ports, duplicates',
    source: `${CORE} validateContainers, validateContainerCommon, validateContainerPorts`,
    kinds: ['Pod'],
    check: (object) => (isObject(object.spec) ? podSpecContainerCauses(object.spec, 'spec') : []),
  },
  {
    name: 'pod ephemeral containers: names unique across all containers, target, allowed fields',
    source: `${CORE} validateEphemeralContainers, allowedEphemeralContainerFields`,
    kinds: ['Pod'],
    check: (object) => (isObject(object.spec) ? ephemeralContainerCauses(object.spec, 'spec') : []),
  },
  {
    name: 'no ephemeral containers on create',
    source: `${CORE} ValidatePodCreate`,
    kinds: ['Pod'],
    check: ephemeralOnCreateRule,
  },
  {
    name: 'pod template containers',
    source: `${CORE} ValidatePodTemplateSpec → validateContainers`,
    kinds: ['StatefulSet', 'Deployment', 'ReplicaSet'],
    check: templateContainers,
  },
  {
    name: 'pod spec updates',
    source: `${CORE} ValidatePodUpdate`,
    kinds: ['Pod'],
    check: podUpdateRule,
  },
  {
    name: 'Service cluster IPs never change',
    source: `${CORE} validateUpgradeDowngradeClusterIPs`,
    kinds: ['Service'],
    check: serviceUpdateRule,
  },
  {
    name: 'Deployment spec: counts, strategy, deadlines',
    source: 'pkg/apis/apps/validation/validation.go ValidateDeploymentSpec',
    kinds: ['Deployment'],
    check: deploymentRule,
  },
  {
    name: 'StatefulSet spec counts',
    source: 'pkg/apis/apps/validation/validation.go ValidateStatefulSetSpec',
    kinds: ['StatefulSet'],
    check: statefulSetRule,
  },
];

/** The causes of every rule of `kind` (metadata rules first, as ValidateObjectMeta runs first). */
export function validationCauses(
  kind: string,
  object: KubeObject,
  old: KubeObject | undefined,
): StatusCause[] {
  return VALIDATION_RULES.filter(
    (rule) => rule.kinds === 'all' || rule.kinds.includes(kind),
  ).flatMap((rule) => rule.check(object, old));
}
