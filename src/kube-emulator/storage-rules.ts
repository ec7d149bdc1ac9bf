// What the apiserver's storage layer refuses, with its own errors (staging/src/k8s.io/apiserver
// pkg/storage/interfaces.go Preconditions.Check, pkg/storage/errors.go StorageError,
// pkg/storage/etcd3/store.go Create, pkg/registry/generic/registry/store.go Update, v0.32.4):
// a create that carries a resourceVersion (500), an update or delete whose uid or
// resourceVersion precondition fails (409 with the StorageError text), an update without a
// resourceVersion of a kind whose strategy forbids unconditional updates (422).
import type { KindInfo } from './kinds.ts';
import { ApiError, conflict, invalid } from './status-errors.ts';
import { invalidRawCause } from './admission/field-errors.ts';

/** The etcd key the apiserver stores an object under (the registry's KeyFunc and prefix). */
export function storageKey(info: KindInfo, namespace: string, name: string): string {
  const prefix = info.resource === 'services' ? 'services/specs' : info.resource;
  return info.namespaced
    ? `/registry/${prefix}/${namespace}/${name}`
    : `/registry/${prefix}/${name}`;
}

/** etcd3 store Create: storage.ErrResourceVersionSetOnCreate, answered as a 500 of no reason. */
export function assertNoResourceVersionOnCreate(resourceVersion: string | undefined): void {
  if (resourceVersion === undefined || !/^\d+$/.test(resourceVersion)) return;
  if (BigInt(resourceVersion) === 0n) return;
  throw new ApiError({
    code: 500,
    reason: '',
    message: 'resourceVersion should not be set on objects to be created',
  });
}

/** Preconditions.Check: a uid (or resourceVersion) precondition that the stored object fails. */
export function assertPreconditions(
  info: KindInfo,
  stored: { namespace: string; name: string; uid: string; resourceVersion: string },
  preconditions: { uid?: string | undefined; resourceVersion?: string | undefined },
): void {
  let failure: string | undefined;
  if (preconditions.uid !== undefined && preconditions.uid !== stored.uid)
    failure = `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${stored.uid}`;
  else if (
    preconditions.resourceVersion !== undefined &&
    preconditions.resourceVersion !== stored.resourceVersion
  )
    failure = `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${stored.resourceVersion}`;
  if (failure === undefined) return;
  const key = storageKey(info, stored.namespace, stored.name);
  throw conflict(
    { group: info.group, resource: info.resource, name: stored.name },
    `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${failure}`,
  );
}

/** Kinds whose REST strategy answers AllowUnconditionalUpdate() false. */
const CONDITIONAL_ONLY = new Set(['coordination.k8s.io/leases']);

/** registry Store.Update: "must be specified for an update" (kind named by its resource). */
export function assertConditionalUpdate(
  info: KindInfo,
  name: string,
  resourceVersion: string | undefined,
): void {
  if (!CONDITIONAL_ONLY.has(`${info.group}/${info.resource}`)) return;
  if (resourceVersion !== undefined && resourceVersion !== '' && resourceVersion !== '0') return;
  throw invalid({ group: info.group, resource: info.resource, kind: info.resource, name }, [
    invalidRawCause('metadata.resourceVersion', '0x0', 'must be specified for an update'),
  ]);
}
