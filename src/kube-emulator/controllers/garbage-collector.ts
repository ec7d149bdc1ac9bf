// Garbage collection through ownerReferences (pkg/controller/garbagecollector): dependents of a
// deleted owner are deleted, an owner deleted with Orphan keeps its `orphan` finalizer until its
// dependents lost their references to it, an owner in Foreground deletion goes once its dependents are gone,
// and an object whose owners are all absent (no object of that name, or one with another uid:
// `classifyReferences` calls such a reference dangling) is deleted; with a solid owner left, the
// dangling references are removed instead. References to kinds the emulator does not serve are
// left alone, as the real collector leaves what it cannot resolve.
import type { Clock } from '../clock.ts';
import { clone, deepEqual } from '../json.ts';
import { kindNamed, storageKind } from '../kinds.ts';
import {
  FOREGROUND_FINALIZER,
  ORPHAN_FINALIZER,
  Propagation,
  type ResourceApi,
} from '../resource-api.ts';
import type { StoreEvent } from '../store.ts';
import type { KubeObject, OwnerReference } from '../types.ts';
import { WorkQueue } from '../work-queue.ts';

export class GarbageCollector {
  readonly #api: ResourceApi;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;
  /** Owners in Foreground deletion, by uid: `storage|namespace|name`. */
  readonly #foreground = new Map<string, string>();

  constructor(options: { api: ResourceApi; clock: Clock }) {
    this.#api = options.api;
    this.#queue = new WorkQueue({ handle: (key) => this.#handle(key), clock: options.clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => this.#observe(event));
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #observe(event: StoreEvent): void {
    const meta = event.object.metadata;
    const uid = meta.uid ?? '';
    // Owners are checked when an object's references appear or change (not on every write).
    if (
      event.type !== 'DELETED' &&
      (meta.ownerReferences?.length ?? 0) > 0 &&
      !deepEqual(meta.ownerReferences, event.previous?.metadata.ownerReferences)
    ) {
      this.#queue.add(`owners|${event.storage}|${meta.namespace ?? ''}|${meta.name ?? ''}`);
    }
    if (event.type === 'DELETED') {
      this.#queue.add(`collect|${uid}`);
      this.#foreground.delete(uid);
      for (const ref of meta.ownerReferences ?? []) {
        if (this.#foreground.has(ref.uid)) this.#queue.add(`foreground|${ref.uid}`);
      }
    } else if (
      meta.deletionTimestamp !== undefined &&
      meta.finalizers?.includes(ORPHAN_FINALIZER) === true
    ) {
      this.#queue.add(`orphan|${event.storage}|${meta.namespace ?? ''}|${meta.name ?? ''}`);
    } else if (
      meta.deletionTimestamp !== undefined &&
      meta.finalizers?.includes(FOREGROUND_FINALIZER) === true
    ) {
      this.#foreground.set(uid, `${event.storage}|${meta.namespace ?? ''}|${meta.name ?? ''}`);
      this.#queue.add(`foreground|${uid}`);
    }
  }

  #handle(key: string): void {
    const [action, uid = ''] = key.split('|');
    if (action === 'collect') this.#collect(uid);
    else if (action === 'owners') this.#checkOwners(key);
    else if (action === 'orphan') this.#orphan(key);
    else this.#finishForeground(uid);
  }

  /** Whether an owner reference points at a live object: true, false (dangling), or unknown. */
  #ownerState(ref: OwnerReference, namespace: string): boolean | undefined {
    const [group, version] = ref.apiVersion.includes('/')
      ? ref.apiVersion.split('/')
      : ['', ref.apiVersion];
    const info = kindNamed(group ?? '', version ?? '', ref.kind);
    if (info === undefined) return undefined;
    const owner = this.#api.store.get(info.storage, info.namespaced ? namespace : '', ref.name);
    return owner !== undefined && owner.metadata.uid === ref.uid;
  }

  /** `attemptToDeleteItem` for an object whose owners may be gone. */
  #checkOwners(key: string): void {
    const [, storage = '', namespace = '', name = ''] = key.split('|');
    const info = storageKind(storage);
    const object: KubeObject | undefined = this.#api.store.get(
      storage,
      info.namespaced ? namespace : '',
      name,
    );
    const refs = object?.metadata.ownerReferences ?? [];
    if (
      object === undefined ||
      refs.length === 0 ||
      object.metadata.deletionTimestamp !== undefined
    )
      return;
    const states = refs.map((ref) => this.#ownerState(ref, namespace));
    if (states.includes(undefined)) return;
    const dangling = refs.filter((_, i) => states[i] === false);
    if (dangling.length === 0) return;
    if (dangling.length < refs.length) {
      const next = clone(object);
      next.metadata.ownerReferences = refs.filter((_, i) => states[i] === true);
      this.#api.write(info, next);
      return;
    }
    this.#api.delete(info, namespace, name, { propagationPolicy: Propagation.background });
  }

  /** Deletes (in the background) every dependent whose only owner was `uid`. */
  #collect(uid: string): void {
    for (const { info, object } of this.#api.dependentsOf(uid)) {
      const refs = (object.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid);
      if (refs.length > 0) {
        const next = clone(object);
        next.metadata.ownerReferences = refs;
        this.#api.write(info, next);
      } else if (object.metadata.deletionTimestamp === undefined) {
        this.#api.delete(info, object.metadata.namespace ?? '', object.metadata.name ?? '', {
          propagationPolicy: Propagation.background,
        });
      }
    }
  }

  /** `orphanDependents` then the `orphan` finalizer removed (garbagecollector.go processDeletingDependentsItem's sibling, attemptToOrphan). */
  #orphan(key: string): void {
    const [, storage = '', namespace = '', name = ''] = key.split('|');
    const info = storageKind(storage);
    const owner = this.#api.store.get(storage, info.namespaced ? namespace : '', name);
    if (owner?.metadata.finalizers?.includes(ORPHAN_FINALIZER) !== true) return;
    this.#api.orphanDependents(owner);
    const next = clone(owner);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter(
      (f) => f !== ORPHAN_FINALIZER,
    );
    this.#api.write(info, next);
  }

  #finishForeground(uid: string): void {
    const where = this.#foreground.get(uid);
    if (where === undefined) return;
    const [storage = '', namespace = '', name = ''] = where.split('|');
    const info = storageKind(storage);
    const owner = this.#api.store.get(storage, info.namespaced ? namespace : '', name);
    if (owner === undefined) return;
    const dependents = this.#api.dependentsOf(uid);
    for (const { info: depInfo, object } of dependents) {
      if (object.metadata.deletionTimestamp !== undefined) continue;
      this.#api.delete(depInfo, object.metadata.namespace ?? '', object.metadata.name ?? '', {
        propagationPolicy: Propagation.foreground,
      });
    }
    if (dependents.length > 0) return;
    const next = clone(owner);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter(
      (f) => f !== FOREGROUND_FINALIZER,
    );
    this.#api.write(info, next);
  }
}
