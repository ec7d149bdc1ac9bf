// A StatefulSet's PersistentVolumeClaims, as the real controller keeps them (Kubernetes
// pkg/controller/statefulset/stateful_set_utils.go and stateful_pod_control.go): one claim per
// volumeClaimTemplate and ordinal, named `<template>-<set>-<ordinal>`, labelled with the
// template's labels plus the set's selector, created before the pod; the pod mounts it in place
// of any volume of the same name (updateStorage). Owner references follow
// `persistentVolumeClaimRetentionPolicy` (default Retain/Retain: none, so claims outlive scale
// downs and the set) — updateClaimOwnerRefForSetAndPod: whenDeleted=Delete makes the set the
// claim's controller, whenScaled=Delete makes the pod of a scaled-down ordinal its controller,
// so the garbage collector deletes the claim with its owner.
import { clone, isObject, objects, type JsonObject } from '../json.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { KubeObject, OwnerReference } from '../types.ts';
import { claimInfo } from '../kinds.ts';

type Policy = 'Retain' | 'Delete';

export interface RetentionPolicy {
  whenDeleted: Policy;
  whenScaled: Policy;
}

/** getPersistentVolumeClaimRetentionPolicy: Retain for anything missing or unknown. */
export function retentionPolicy(set: KubeObject): RetentionPolicy {
  const spec = isObject(set.spec) ? set.spec : {};
  const policy = isObject(spec.persistentVolumeClaimRetentionPolicy)
    ? spec.persistentVolumeClaimRetentionPolicy
    : {};
  const read = (value: unknown): Policy => (value === 'Delete' ? 'Delete' : 'Retain');
  return { whenDeleted: read(policy.whenDeleted), whenScaled: read(policy.whenScaled) };
}

function templates(set: KubeObject): JsonObject[] {
  const spec = isObject(set.spec) ? set.spec : {};
  return objects(spec.volumeClaimTemplates);
}

function templateName(template: JsonObject): string {
  const meta = isObject(template.metadata) ? template.metadata : {};
  return typeof meta.name === 'string' ? meta.name : '';
}

/** getPersistentVolumeClaimName. */
export function claimName(set: KubeObject, template: string, ordinal: number): string {
  return `${template}-${set.metadata.name ?? ''}-${ordinal}`;
}

/** The claims of one ordinal (getPersistentVolumeClaims), keyed by template name. */
function claimsOf(set: KubeObject, ordinal: number): Map<string, KubeObject> {
  const spec = isObject(set.spec) ? set.spec : {};
  const selector = isObject(spec.selector) ? spec.selector : {};
  const matchLabels = isObject(selector.matchLabels)
    ? (selector.matchLabels as Record<string, string>)
    : {};
  const claims = new Map<string, KubeObject>();
  for (const template of templates(set)) {
    const name = templateName(template);
    const meta = isObject(template.metadata) ? template.metadata : {};
    const labels = isObject(meta.labels) ? (meta.labels as Record<string, string>) : {};
    claims.set(name, {
      metadata: {
        name: claimName(set, name, ordinal),
        namespace: set.metadata.namespace ?? '',
        labels: { ...labels, ...matchLabels },
        ...(isObject(meta.annotations)
          ? { annotations: { ...(meta.annotations as Record<string, string>) } }
          : {}),
      },
      spec: isObject(template.spec) ? clone(template.spec) : {},
    });
  }
  return claims;
}

/** updateStorage: the pod's volumes with each template's claim in place of a same-named volume. */
export function withClaimVolumes(set: KubeObject, podSpec: JsonObject, ordinal: number): void {
  const claims = claimsOf(set, ordinal);
  if (claims.size === 0) return;
  const volumes: JsonObject[] = [...claims].map(([name, claim]) => ({
    name,
    persistentVolumeClaim: { claimName: claim.metadata.name ?? '' },
  }));
  for (const volume of objects(podSpec.volumes)) {
    if (!claims.has(typeof volume.name === 'string' ? volume.name : '')) volumes.push(volume);
  }
  podSpec.volumes = volumes;
}

/**
 * createPersistentVolumeClaims: creates the ordinal's missing claims. Returns why the pod must
 * not be created yet: a claim still being deleted, or (whenScaled=Delete) a claim that still
 * belongs to an earlier pod of that name (PodClaimIsStale) — the garbage collector removes it.
 */
export function ensureClaims(
  api: ResourceApi,
  set: KubeObject,
  ordinal: number,
  podName: string,
): string | undefined {
  const namespace = set.metadata.namespace ?? '';
  const scaledDelete = retentionPolicy(set).whenScaled === 'Delete';
  for (const claim of claimsOf(set, ordinal).values()) {
    const name = claim.metadata.name ?? '';
    const existing = api.peek(claimInfo, namespace, name);
    if (existing === undefined) {
      api.create(claimInfo, namespace, claim);
      continue;
    }
    if (existing.metadata.deletionTimestamp !== undefined) return `pvc ${name} is being deleted`;
    const stale = existing.metadata.ownerReferences?.some(
      (ref) => ref.kind === 'Pod' && ref.apiVersion === 'v1' && ref.name === podName,
    );
    if (scaledDelete && stale === true) return `pvc ${name} belongs to an earlier pod ${podName}`;
  }
  return undefined;
}

function controllerRef(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion,
    kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

function matches(
  ref: OwnerReference,
  owner: KubeObject,
  apiVersion: string,
  kind: string,
): boolean {
  return ref.apiVersion === apiVersion && ref.kind === kind && ref.name === owner.metadata.name;
}

/**
 * updateClaimOwnerRefForSetAndPod for every claim of `pod` (ordinal `ordinal`, `scaledDown` when
 * the ordinal is at or above replicas): references to the set and the pod are scrubbed, then set
 * again as the policy says. A claim with another controller is left alone (hasUnexpectedController).
 */
export function updateClaimOwners(
  api: ResourceApi,
  set: KubeObject,
  pod: KubeObject,
  placement: { ordinal: number; scaledDown: boolean },
): void {
  const policy = retentionPolicy(set);
  const namespace = set.metadata.namespace ?? '';
  for (const wanted of claimsOf(set, placement.ordinal).values()) {
    const claim = api.peek(claimInfo, namespace, wanted.metadata.name ?? '');
    if (claim === undefined || claim.metadata.deletionTimestamp !== undefined) continue;
    const refs = claim.metadata.ownerReferences ?? [];
    const ours = (ref: OwnerReference): boolean =>
      matches(ref, set, 'apps/v1', 'StatefulSet') || matches(ref, pod, 'v1', 'Pod');
    if (refs.some((ref) => ref.controller === true && !ours(ref))) continue;
    const next = refs.filter((ref) => !ours(ref));
    if (
      policy.whenDeleted === 'Delete' &&
      !(policy.whenScaled === 'Delete' && placement.scaledDown)
    )
      next.push(controllerRef(set, 'apps/v1', 'StatefulSet'));
    if (policy.whenScaled === 'Delete' && placement.scaledDown)
      next.push(controllerRef(pod, 'v1', 'Pod'));
    if (JSON.stringify(next) === JSON.stringify(refs)) continue;
    const updated = clone(claim);
    if (next.length === 0) delete updated.metadata.ownerReferences;
    else updated.metadata.ownerReferences = next;
    api.write(claimInfo, updated);
  }
}
