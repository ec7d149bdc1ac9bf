// Helpers controllers share: the pods an owner controls, and how a controller reacts to pods.
import { clone, isObject, type JsonObject } from '../json.ts';
import {
  fromStructured,
  matchesLabels,
  type StructuredSelector,
} from '../selectors/label-selector.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { StoreEvent } from '../store.ts';
import type { KubeObject, OwnerReference } from '../types.ts';
import { podInfo } from '../kinds.ts';

/** The controller owner reference of an object, if any. */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** Pods in the owner's namespace whose controller reference is the owner. */
export function ownedPods(api: ResourceApi, owner: KubeObject): KubeObject[] {
  const uid = owner.metadata.uid;
  return api.store
    .list(podInfo.storage, owner.metadata.namespace ?? '')
    .filter((pod) => controllerOf(pod)?.uid === uid);
}

/**
 * The key (`namespace/name`) of the owner a store event concerns for a controller of `kind`
 * stored in `storage`: the object itself, or the controller of a pod.
 */
export function ownerKeyOf(event: StoreEvent, storage: string, kind: string): string | undefined {
  const meta = event.object.metadata;
  if (event.storage === storage) return `${meta.namespace ?? ''}/${meta.name ?? ''}`;
  if (event.storage !== podInfo.storage) return undefined;
  const ref = controllerOf(event.object);
  return ref?.kind === kind ? `${meta.namespace ?? ''}/${ref.name}` : undefined;
}

/** The pod template of a workload spec, and its labels. */
export function templateOf(owner: KubeObject): {
  template: JsonObject;
  labels: Record<string, string>;
} {
  const spec = isObject(owner.spec) ? owner.spec : {};
  const template = isObject(spec.template) ? spec.template : {};
  const meta = isObject(template.metadata) ? template.metadata : {};
  return { template, labels: isObject(meta.labels) ? (meta.labels as Record<string, string>) : {} };
}

/** A new pod from a template, owned (as controller) by `owner`. */
export function podFromTemplate(options: {
  owner: KubeObject;
  ownerKind: string;
  name: string;
  labels: Record<string, string>;
  specExtra?: JsonObject;
}): KubeObject {
  const { owner, ownerKind, name, labels, specExtra } = options;
  const { template } = templateOf(owner);
  const meta = isObject(template.metadata) ? template.metadata : {};
  const spec = isObject(template.spec) ? structuredClone(template.spec) : {};
  return {
    metadata: {
      name,
      namespace: owner.metadata.namespace ?? '',
      labels,
      ...(isObject(meta.annotations)
        ? { annotations: { ...(meta.annotations as Record<string, string>) } }
        : {}),
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: ownerKind,
          name: owner.metadata.name ?? '',
          uid: owner.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { ...spec, ...specExtra },
  };
}

/**
 * ClaimPods (pkg/controller/controller_ref_manager.go PodControllerRefManager): a pod of the
 * owner's namespace with no controller, not being deleted, whose labels match the owner's selector
 * (and that `filter` accepts) is adopted — a controller reference with blockOwnerDeletion is added;
 * a pod the owner controls whose labels no longer match is released (its reference removed). An
 * owner being deleted adopts nothing (canAdopt); an empty or invalid selector claims nothing.
 */
export function claimPods(
  api: ResourceApi,
  owner: KubeObject,
  kind: string,
  filter: (pod: KubeObject) => boolean = () => true,
): void {
  const spec = isObject(owner.spec) ? owner.spec : {};
  let selector: ReturnType<typeof fromStructured>;
  try {
    selector = fromStructured(spec.selector as StructuredSelector | undefined);
  } catch {
    return;
  }
  if (selector.length === 0) return;
  const uid = owner.metadata.uid ?? '';
  for (const pod of api.store.list(podInfo.storage, owner.metadata.namespace ?? '')) {
    if (pod.metadata.deletionTimestamp !== undefined) continue;
    const ref = controllerOf(pod);
    const matches = matchesLabels(selector, pod.metadata.labels);
    if (ref === undefined) {
      if (!matches || owner.metadata.deletionTimestamp !== undefined || !filter(pod)) continue;
      const next = clone(pod);
      next.metadata.ownerReferences = [
        ...(pod.metadata.ownerReferences ?? []),
        {
          apiVersion: 'apps/v1',
          kind,
          name: owner.metadata.name ?? '',
          uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ];
      api.write(podInfo, next);
    } else if (ref.uid === uid && !matches) {
      const next = clone(pod);
      next.metadata.ownerReferences = (pod.metadata.ownerReferences ?? []).filter(
        (r) => r.uid !== uid,
      );
      if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
      api.write(podInfo, next);
    }
  }
}

/** Whether a store event is a pod without a controller (any owner of its namespace may adopt it). */
export function isOrphanPodEvent(event: StoreEvent): boolean {
  return (
    event.storage === podInfo.storage &&
    event.type !== 'DELETED' &&
    controllerOf(event.object) === undefined
  );
}
