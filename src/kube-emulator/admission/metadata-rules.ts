// The rules of every object's metadata (apimachinery pkg/api/validation/objectmeta.go and
// pkg/apis/meta/v1/validation/validation.go, v0.32.4).
import type { StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import { forbiddenCause, invalidCause, tooLongCause } from './field-errors.ts';
import { isQualifiedName, isValidLabelValue } from './name-formats.ts';

/** TotalAnnotationSizeLimitB: keys and values of all annotations together. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

/** ValidateLabels: keys are qualified names, values label values (path `metadata.labels`). */
export function labelRule(object: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [key, value] of Object.entries(object.metadata.labels ?? {})) {
    for (const message of isQualifiedName(key))
      causes.push(invalidCause('metadata.labels', key, message));
    for (const message of isValidLabelValue(value))
      causes.push(invalidCause('metadata.labels', value, message));
  }
  return causes;
}

/** ValidateAnnotations: keys are qualified names (case aside); 256 KiB in all. */
export function annotationRule(object: KubeObject): StatusCause[] {
  const annotations = object.metadata.annotations ?? {};
  const causes: StatusCause[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const message of isQualifiedName(key.toLowerCase()))
      causes.push(invalidCause('metadata.annotations', key, message));
    size += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_B)
    causes.push(tooLongCause('metadata.annotations', TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return causes;
}

/** ValidateFinalizers → ValidateFinalizerName: each a qualified name. */
export function finalizerRule(object: KubeObject): StatusCause[] {
  return (object.metadata.finalizers ?? []).flatMap((name) =>
    isQualifiedName(name).map((message) => invalidCause('metadata.finalizers', name, message)),
  );
}

/** ValidateOwnerReferences: at most one controller reference. */
export function ownerReferenceRule(object: KubeObject): StatusCause[] {
  const refs = object.metadata.ownerReferences ?? [];
  const controllers = refs.filter((ref) => ref.controller === true);
  if (controllers.length <= 1) return [];
  const names = controllers.map((ref) => `{${ref.kind} ${ref.name} ${ref.uid}}`).join(' ');
  return [
    invalidCause(
      'metadata.ownerReferences',
      refs,
      `Only one reference can have Controller set to true. Found "true" in references for ${names}`,
    ),
  ];
}

/** ValidateObjectMetaUpdate: no new finalizer once the object is being deleted. */
export function finalizersWhileDeletingRule(
  object: KubeObject,
  old: KubeObject | undefined,
): StatusCause[] {
  if (old?.metadata.deletionTimestamp === undefined) return [];
  const before = new Set(old.metadata.finalizers ?? []);
  const added = [...new Set(object.metadata.finalizers ?? [])].filter((f) => !before.has(f)).sort();
  if (added.length === 0) return [];
  return [
    forbiddenCause(
      'metadata.finalizers',
      `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
    ),
  ];
}
