// Helpers controllers share: the pods an owner controls, and how a controller reacts to pods.
import { isObject, type JsonObject } from '../json.ts';
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
