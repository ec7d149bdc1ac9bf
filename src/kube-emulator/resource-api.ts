// The API semantics of kube-api.md §4 over the store: create, replace, patch, delete, scale,
// status, with the errors a real apiserver gives. HTTP routes and controllers both write here.
import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { rfc3339, type Clock } from './clock.ts';
import { applyJsonPatch } from './patch/json-patch.ts';
import { clone, deepEqual, isObject, type JsonObject } from './json.ts';
import { apiVersionOf, kindOf, storageKind, type KindInfo } from './kinds.ts';
import {
  fromStructured,
  selectorToString,
  type StructuredSelector,
} from './selectors/label-selector.ts';
import { applyMergePatch } from './patch/merge-patch.ts';
import { applyConfiguration, recordUpdate } from './patch/managed-fields.ts';
import { randomSuffix, validateName } from './names.ts';
import {
  ApiError,
  qualifiedResource,
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  notFound,
  unsupportedMediaType,
  type StatusTarget,
} from './status-errors.ts';
import type { Store } from './store.ts';
import {
  assertConditionalUpdate,
  assertNoResourceVersionOnCreate,
  assertPreconditions,
} from './storage-rules.ts';
import { applyStrategicMergePatch } from './patch/strategic-merge-patch.ts';
import { isKubeObject, type KubeObject } from './types.ts';
import {
  ephemeralContainersUpdateCauses,
  keepOnlyEphemeralContainers,
} from './admission/pod-rules.ts';

export const PatchType = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

export type Subresource = 'status' | 'scale' | 'ephemeralcontainers' | undefined;

export const Propagation = {
  background: 'Background',
  foreground: 'Foreground',
  orphan: 'Orphan',
} as const;
export type Propagation = (typeof Propagation)[keyof typeof Propagation];

/** Which object a write is about. */
export interface ObjectRef {
  info: KindInfo;
  namespace: string;
  name: string;
}

export interface WriteOptions {
  subresource?: Subresource;
  dryRun?: boolean;
  /**
   * The field manager of a client's write (metadata.managedFields); internal writers
   * (controllers, kubelets) leave it out and their writes are not tracked.
   */
  manager?: string;
}

export interface PatchOptions extends WriteOptions {
  contentType: string;
  fieldManager?: string;
  /** Server-side apply's `force`: take the conflicting fields from their managers. */
  force?: boolean;
  /**
   * Sees the object a patch produced (a server-side apply's applied object, or the result of a
   * JSON, merge or strategic merge patch) before it is stored: field validation goes here.
   */
  inspect?: (object: KubeObject, applied: boolean) => void;
}

export interface DeleteOptions {
  propagationPolicy?: Propagation;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** What a delete did: removed at once, or left in place with a deletionTimestamp. */
export interface DeleteResult {
  object: KubeObject;
  removed: boolean;
}

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

/** The namespaces NamespaceLifecycle never lets go. */
const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

export function targetOf(info: KindInfo, name?: string): StatusTarget {
  return { group: info.group, resource: info.resource, ...(name === undefined ? {} : { name }) };
}

/** A namespace's `spec.finalizers` (the namespace controller's `kubernetes`). */
function namespaceFinalizers(object: KubeObject): unknown[] {
  const spec = isObject(object.spec) ? object.spec : {};
  return Array.isArray(spec.finalizers) ? spec.finalizers : [];
}

function namespaceOf(object: KubeObject): string {
  return object.metadata.namespace ?? '';
}

/** Everything an update compares to decide whether `generation` moves: all but metadata and status. */
function specOf(object: KubeObject): JsonObject {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = object;
  return rest;
}

export class ResourceApi {
  readonly store: Store;
  readonly #clock: Clock;
  readonly #random: () => number;

  constructor(options: { store: Store; clock: Clock; random?: () => number }) {
    this.store = options.store;
    this.#clock = options.clock;
    this.#random = options.random ?? Math.random;
  }

  /** The current time on the emulator's clock. */
  now(): number {
    return this.#clock.now();
  }

  /** The stored form of an object as `info` serves it: converted, with kind and apiVersion. */
  serve(info: KindInfo, stored: KubeObject): KubeObject {
    const converted =
      info.conversion === undefined ? stored : (info.conversion.fromStorage(stored) as KubeObject);
    return { ...converted, apiVersion: apiVersionOf(info), kind: info.kind };
  }

  #stored(info: KindInfo, namespace: string, name: string): KubeObject {
    const object = this.store.get(info.storage, info.namespaced ? namespace : '', name);
    if (object === undefined) throw notFound(targetOf(info, name));
    return object;
  }

  get(info: KindInfo, namespace: string, name: string, subresource?: Subresource): KubeObject {
    const stored = this.#stored(info, namespace, name);
    return subresource === 'scale' ? this.#scaleOf(info, stored) : this.serve(info, stored);
  }

  /** Reads a stored object for internal callers, without copying (do not mutate it). */
  peek(info: KindInfo, namespace: string, name: string): KubeObject | undefined {
    return this.store.get(info.storage, info.namespaced ? namespace : '', name);
  }

  #assertNamespace(info: KindInfo, namespace: string): void {
    if (!info.namespaced) return;
    if (this.store.get(kindOf('', 'namespaces').storage, '', namespace) === undefined) {
      throw notFound({ group: '', resource: 'namespaces', name: namespace });
    }
  }

  /**
   * NamespaceLifecycle admission (plugin/pkg/admission/namespace/lifecycle/admission.go): no
   * new content in a namespace being deleted.
   */
  #assertNotTerminating(info: KindInfo, namespace: string, name: string): void {
    if (!info.namespaced) return;
    const ns = this.store.get(kindOf('', 'namespaces').storage, '', namespace);
    if (ns?.metadata.deletionTimestamp === undefined) return;
    throw new ApiError({
      code: 403,
      reason: 'Forbidden',
      message: `${qualifiedResource(targetOf(info))} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
      details: {
        name,
        ...(info.group === '' ? {} : { group: info.group }),
        kind: info.resource,
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${namespace} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      },
    });
  }

  create(
    info: KindInfo,
    namespace: string,
    body: unknown,
    options: WriteOptions & { appliedBy?: string } = {},
  ): KubeObject {
    if (!isKubeObject(body))
      throw badRequest('the body of the request must be an object with metadata');
    const object = clone(
      info.conversion === undefined ? body : (info.conversion.toStorage(body) as KubeObject),
    );
    const meta = object.metadata;
    if (info.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = namespace;
    } else delete meta.namespace;
    if (meta.name === undefined || meta.name === '') {
      if (typeof meta.generateName !== 'string' || meta.generateName === '') {
        throw invalid({ ...targetOf(info), kind: info.kind }, [
          {
            reason: 'FieldValueRequired',
            field: 'metadata.name',
            message: 'Required value: name or generateName is required',
          },
        ]);
      }
      meta.name = this.#generateName(info, namespace, meta.generateName);
    }
    const name = meta.name;
    const target = { ...targetOf(info, name), kind: info.kind };
    const nameProblems = validateName(name, info.resource === 'namespaces');
    if (nameProblems.length > 0) throw invalid(target, nameProblems);
    this.#assertNamespace(info, namespace);
    this.#assertNotTerminating(info, namespace, name);
    if (this.peek(info, namespace, name) !== undefined) throw alreadyExists(targetOf(info, name));
    const givenRv = meta.resourceVersion;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.#clock.now());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    delete meta.selfLink;
    if (info.hasGeneration) meta.generation = 1;
    else delete meta.generation;
    delete object.apiVersion;
    delete object.kind;
    info.rules.admit?.(object);
    info.rules.defaults?.(object);
    const causes = info.rules.validate?.(object, undefined) ?? [];
    if (causes.length > 0) throw invalid(target, causes);
    if (options.dryRun !== true) assertNoResourceVersionOnCreate(givenRv);
    if (options.manager !== undefined && info.conversion === undefined) {
      if (options.appliedBy !== undefined) {
        const applied = applyConfiguration(
          {
            info,
            manager: options.appliedBy,
            subresource: undefined,
            now: this.#clock.now(),
            force: true,
          },
          { metadata: {} },
          body,
        );
        object.metadata.managedFields = applied.metadata.managedFields;
      } else {
        recordUpdate(
          { info, manager: options.manager, subresource: undefined, now: this.#clock.now() },
          undefined,
          object,
        );
      }
    }
    if (options.dryRun === true) return this.serve(info, object);
    return this.serve(info, this.store.create(info.storage, object));
  }

  #generateName(info: KindInfo, namespace: string, prefix: string): string {
    for (let attempt = 0; attempt < 8; attempt++) {
      const name = `${prefix}${randomSuffix(5, this.#random)}`;
      if (this.peek(info, namespace, name) === undefined) return name;
    }
    throw alreadyExists(targetOf(info, prefix));
  }

  /** PUT: replaces the object (or only its status, or its scale). */
  replace(ref: ObjectRef, body: unknown, options: WriteOptions = {}): KubeObject {
    const { info, namespace, name } = ref;
    if (!isKubeObject(body))
      throw badRequest('the body of the request must be an object with metadata');
    const existing = this.#stored(info, namespace, name);
    if (options.subresource === 'scale') return this.#writeScale(info, existing, body, options);
    const incoming = clone(
      info.conversion === undefined ? body : (info.conversion.toStorage(body) as KubeObject),
    );
    if (incoming.metadata.name !== undefined && incoming.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    if (
      info.namespaced &&
      incoming.metadata.namespace !== undefined &&
      incoming.metadata.namespace !== namespace
    ) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    return this.#update(info, existing, incoming, options);
  }

  /**
   * The common update path: optimistic concurrency on `metadata.resourceVersion`, status kept
   * apart from the main resource, immutable metadata kept, generation bumped on spec changes,
   * no write at all when nothing changed.
   */
  #update(
    info: KindInfo,
    existing: KubeObject,
    incoming: KubeObject,
    options: WriteOptions & { keepManagedFields?: boolean; internal?: boolean },
  ): KubeObject {
    const name = existing.metadata.name ?? '';
    assertUpdatable(info, existing, incoming, options);
    let next: KubeObject;
    if (options.subresource === 'status') {
      next = { ...clone(existing), status: clone(incoming.status) };
      if (incoming.status === undefined) delete next.status;
    } else if (options.subresource === 'ephemeralcontainers') {
      next = keepOnlyEphemeralContainers(existing, incoming);
    } else {
      next = mainResourceUpdate(info, existing, incoming, options.keepManagedFields === true);
    }
    if (options.manager !== undefined && info.conversion === undefined) {
      recordUpdate(
        {
          info,
          manager: options.manager,
          subresource: options.subresource,
          now: this.#clock.now(),
        },
        this.serve(info, existing),
        next,
      );
    }
    const causes = info.rules.validate?.(next, existing) ?? [];
    if (options.subresource === 'ephemeralcontainers')
      causes.push(...ephemeralContainersUpdateCauses(next, existing));
    if (causes.length > 0) throw invalid({ ...targetOf(info, name), kind: info.kind }, causes);
    if (info.hasGeneration && !deepEqual(specOf(next), specOf(existing))) {
      next.metadata.generation = (existing.metadata.generation ?? 0) + 1;
    }
    next.metadata.resourceVersion = existing.metadata.resourceVersion ?? '';
    if (deepEqual(next, existing)) return this.serve(info, existing);
    if (options.dryRun === true) return this.serve(info, next);
    if (finishesDeletion(info, next)) {
      const removed = this.store.remove(info.storage, namespaceOf(existing), name);
      return this.serve(info, removed ?? next);
    }
    return this.serve(info, this.store.update(info.storage, next));
  }

  /** Internal writers (controllers, kubelets): replace the whole stored object. */
  write(info: KindInfo, object: KubeObject, subresource?: Subresource): KubeObject {
    const existing = this.#stored(info, namespaceOf(object), object.metadata.name ?? '');
    const next = clone(object);
    delete next.metadata.resourceVersion; // internal writes are computed from the current state
    return this.#update(info, existing, next, {
      internal: true,
      ...(subresource === undefined ? {} : { subresource }),
    });
  }

  patch(ref: ObjectRef, body: unknown, options: PatchOptions): KubeObject {
    const { info, namespace, name } = ref;
    const type = options.contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    const accepted = Object.values(PatchType);
    if (!(accepted as string[]).includes(type)) throw unsupportedMediaType(type, accepted);
    let patchBody = body;
    if (type === PatchType.apply) {
      const applyObject = applyBody(body, options);
      patchBody = applyObject;
      const applied = this.#serverSideApply(ref, applyObject, options);
      if (applied !== undefined) return applied;
    }
    const existing = this.#stored(info, namespace, name);
    const current =
      options.subresource === 'scale' ? this.#scaleOf(info, existing) : this.serve(info, existing);
    const patched = this.#applyPatch(type, current, patchBody);
    if (!isKubeObject(patched)) throw badRequest('the patched object has no metadata');
    if (options.subresource === 'scale') return this.#writeScale(info, existing, patched, options);
    if (patched.metadata.name !== name) throw badRequest('the patch may not change metadata.name');
    if (type !== PatchType.apply && options.subresource === undefined)
      options.inspect?.(patched, false);
    const incoming =
      info.conversion === undefined ? patched : (info.conversion.toStorage(patched) as KubeObject);
    return this.#update(info, existing, clone(incoming), options);
  }

  /**
   * A server-side apply that creates the object, or merges into it by field ownership; undefined
   * when it is an ordinary patch after all (a subresource, or a kind stored in another version).
   */
  #serverSideApply(
    ref: ObjectRef,
    patchBody: KubeObject,
    options: PatchOptions,
  ): KubeObject | undefined {
    const { info, namespace, name } = ref;
    if (options.subresource !== undefined) return undefined;
    const existing = this.peek(info, namespace, name);
    const manager = options.fieldManager ?? '';
    if (existing === undefined) {
      const created = clone(patchBody);
      created.metadata.name ??= name;
      return this.create(info, namespace, created, {
        ...(options.dryRun === undefined ? {} : { dryRun: options.dryRun }),
        manager,
        appliedBy: manager,
      });
    }
    if (info.conversion !== undefined) return undefined;
    const applied = applyConfiguration(
      {
        info,
        manager,
        subresource: undefined,
        now: this.#clock.now(),
        force: options.force === true,
      },
      this.serve(info, existing),
      patchBody,
    );
    if (applied.metadata.name !== name) throw badRequest('the patch may not change metadata.name');
    const { manager: _manager, ...rest } = options;
    return this.#update(info, existing, applied, { ...rest, keepManagedFields: true });
  }

  #applyPatch(type: string, current: KubeObject, body: unknown): unknown {
    switch (type) {
      case PatchType.json:
        return applyJsonPatch(current, body);
      case PatchType.merge:
        if (!isObject(body)) throw badRequest('a merge patch must be a JSON object');
        return applyMergePatch(clone(current), body);
      case PatchType.strategic:
      case PatchType.apply:
        return applyStrategicMergePatch(current, body);
      default:
        throw unsupportedMediaType(type, Object.values(PatchType));
    }
  }

  #scaleOf(info: KindInfo, stored: KubeObject): KubeObject {
    if (!info.subresources.includes('scale'))
      throw notFound(targetOf(info, stored.metadata.name ?? ''));
    const spec = isObject(stored.spec) ? stored.spec : {};
    const status = isObject(stored.status) ? stored.status : {};
    let selector: string;
    try {
      selector = selectorToString(fromStructured(spec.selector as StructuredSelector | undefined));
    } catch {
      selector = '';
    }
    const meta = stored.metadata;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: meta.name ?? '',
        namespace: meta.namespace ?? '',
        uid: meta.uid ?? '',
        resourceVersion: meta.resourceVersion ?? '',
        creationTimestamp: meta.creationTimestamp ?? '',
      },
      spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 0 },
      status: { replicas: typeof status.replicas === 'number' ? status.replicas : 0, selector },
    };
  }

  /** A Scale write changes only `spec.replicas` of the owner, with the usual RV check. */
  #writeScale(
    info: KindInfo,
    existing: KubeObject,
    scale: KubeObject,
    options: WriteOptions,
  ): KubeObject {
    if (!info.subresources.includes('scale'))
      throw notFound(targetOf(info, existing.metadata.name ?? ''));
    const name = existing.metadata.name ?? '';
    const replicas = isObject(scale.spec) ? scale.spec.replicas : undefined;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid({ group: 'autoscaling', resource: 'scale', name, kind: 'Scale' }, [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.replicas',
          message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
        },
      ]);
    }
    const wantedRv = scale.metadata.resourceVersion;
    if (
      wantedRv !== undefined &&
      wantedRv !== '' &&
      wantedRv !== existing.metadata.resourceVersion
    ) {
      throw conflict(targetOf(info, name));
    }
    const next = clone(existing);
    (next.spec as JsonObject).replicas = replicas;
    const written = this.#update(info, existing, next, {
      dryRun: options.dryRun ?? false,
      ...(options.manager === undefined ? {} : { manager: options.manager, subresource: 'scale' }),
    });
    return this.#scaleOf(info, this.peek(info, namespaceOf(existing), name) ?? written);
  }

  /**
   * DELETE. Pods bound to a node terminate gracefully (the kubelet removes them later); objects
   * with finalizers wait for them; Foreground waits for dependents (the garbage collector
   * finishes it); Orphan strips the dependents' owner references first.
   */
  delete(
    info: KindInfo,
    namespace: string,
    name: string,
    options: DeleteOptions = {},
  ): DeleteResult {
    const existing = this.#stored(info, namespace, name);
    assertDeletePreconditions(info, name, existing, options.preconditions);
    if (options.dryRun === true) return { object: this.serve(info, existing), removed: false };
    const policy = options.propagationPolicy ?? Propagation.background;
    // Orphan: pods lose nothing but their dependents' references at once; every other kind gets
    // the `orphan` finalizer, which the garbage collector handles (orphans the dependents, then
    // removes it): deletionFinalizersForGarbageCollection in the registry's store.go.
    if (policy === Propagation.orphan && info.resource === 'pods') this.#orphanDependents(existing);
    const now = this.#clock.now();
    if (info.resource === 'pods')
      return this.#deletePod(info, existing, options.gracePeriodSeconds);
    if (info.resource === 'namespaces') return this.#deleteNamespace(info, existing);
    const finalizers = [...(existing.metadata.finalizers ?? [])];
    if (
      policy === Propagation.foreground &&
      this.dependentsOf(existing.metadata.uid ?? '').length > 0
    ) {
      if (!finalizers.includes(FOREGROUND_FINALIZER)) finalizers.push(FOREGROUND_FINALIZER);
    }
    if (policy === Propagation.orphan && !finalizers.includes(ORPHAN_FINALIZER))
      finalizers.push(ORPHAN_FINALIZER);
    if (finalizers.length > 0) {
      const next = clone(existing);
      next.metadata.finalizers = finalizers;
      next.metadata.deletionTimestamp ??= rfc3339(now);
      next.metadata.deletionGracePeriodSeconds ??= 0;
      return { object: this.serve(info, this.store.update(info.storage, next)), removed: false };
    }
    return { object: this.serve(info, this.removeNow(info, existing)), removed: true };
  }

  #deletePod(
    info: KindInfo,
    existing: KubeObject,
    requestedGrace: number | undefined,
  ): DeleteResult {
    const spec = isObject(existing.spec) ? existing.spec : {};
    const specGrace =
      typeof spec.terminationGracePeriodSeconds === 'number'
        ? spec.terminationGracePeriodSeconds
        : 30;
    // rest.BeforeDelete: a negative grace period counts as 1 s.
    const asked = requestedGrace ?? specGrace;
    const grace = asked < 0 ? 1 : asked;
    const bound = typeof spec.nodeName === 'string' && spec.nodeName !== '';
    const phase = isObject(existing.status) ? existing.status.phase : undefined;
    const finished = phase === 'Succeeded' || phase === 'Failed';
    if (!bound || grace === 0 || finished) {
      // A finalizer holds even an immediate delete: the pod stays with a deletionTimestamp and
      // grace 0 until its finalizers are removed (registry Store.Delete, updateForGracefulDeletionAndFinalizers).
      if ((existing.metadata.finalizers ?? []).length > 0) {
        const next = clone(existing);
        next.metadata.deletionTimestamp ??= rfc3339(this.#clock.now());
        next.metadata.deletionGracePeriodSeconds = 0;
        return { object: this.serve(info, this.store.update(info.storage, next)), removed: false };
      }
      return { object: this.serve(info, this.removeNow(info, existing)), removed: true };
    }
    const current = existing.metadata.deletionGracePeriodSeconds;
    if (current !== undefined && current <= grace)
      return { object: this.serve(info, existing), removed: false };
    const next = clone(existing);
    next.metadata.deletionTimestamp = rfc3339(this.#clock.now() + grace * 1000);
    next.metadata.deletionGracePeriodSeconds = grace;
    return { object: this.serve(info, this.store.update(info.storage, next)), removed: false };
  }

  /**
   * A namespace goes `Terminating` (the namespace REST Delete, pkg/registry/core/namespace/
   * storage/storage.go): the namespace controller deletes its content, then its `kubernetes`
   * finalizer and the namespace. `default`, `kube-system` and `kube-public` are never deleted
   * (the NamespaceLifecycle admission plugin).
   */
  #deleteNamespace(info: KindInfo, existing: KubeObject): DeleteResult {
    const name = existing.metadata.name ?? '';
    if (IMMORTAL_NAMESPACES.has(name))
      throw new ApiError({
        code: 403,
        reason: 'Forbidden',
        message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
        details: { name, kind: 'namespaces' },
      });
    if (
      namespaceFinalizers(existing).length === 0 &&
      (existing.metadata.finalizers ?? []).length === 0
    )
      return { object: this.serve(info, this.removeNow(info, existing)), removed: true };
    if (existing.metadata.deletionTimestamp !== undefined)
      return { object: this.serve(info, existing), removed: false };
    const next = clone(existing);
    next.metadata.deletionTimestamp = rfc3339(this.#clock.now());
    next.metadata.deletionGracePeriodSeconds = 0;
    next.status = { ...(isObject(existing.status) ? existing.status : {}), phase: 'Terminating' };
    return { object: this.serve(info, this.store.update(info.storage, next)), removed: false };
  }

  /** Removes an object from the store at once (the end of any deletion). */
  removeNow(info: KindInfo, object: KubeObject): KubeObject {
    const removed = this.store.remove(
      info.storage,
      info.namespaced ? namespaceOf(object) : '',
      object.metadata.name ?? '',
    );
    return removed ?? object;
  }

  /** Every stored object (any table) with an owner reference to `uid`. */
  dependentsOf(uid: string): { info: KindInfo; object: KubeObject }[] {
    if (uid === '') return [];
    const found: { info: KindInfo; object: KubeObject }[] = [];
    for (const storage of this.store.tables()) {
      for (const object of this.store.list(storage)) {
        if (object.metadata.ownerReferences?.some((ref) => ref.uid === uid) === true) {
          found.push({ info: storageKind(storage), object });
        }
      }
    }
    return found;
  }

  /** Removes every dependent's owner reference to `owner` (the collector's orphaning). */
  orphanDependents(owner: KubeObject): void {
    this.#orphanDependents(owner);
  }

  #orphanDependents(owner: KubeObject): void {
    const uid = owner.metadata.uid ?? '';
    for (const { info, object } of this.dependentsOf(uid)) {
      const next = clone(object);
      const refs = (next.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid);
      if (refs.length === 0) delete next.metadata.ownerReferences;
      else next.metadata.ownerReferences = refs;
      this.store.update(info.storage, next);
    }
  }
}

/**
 * An update's preconditions: the object's uid when given (DefaultUpdatedObjectInfo.Preconditions),
 * a resourceVersion where the kind forbids unconditional updates (storage-rules.ts) — both only
 * for clients, not internal writers — and the optimistic-concurrency check on the one given.
 */
function assertUpdatable(
  info: KindInfo,
  existing: KubeObject,
  incoming: KubeObject,
  options: WriteOptions & { internal?: boolean },
): void {
  const name = existing.metadata.name ?? '';
  const wantedRv = incoming.metadata.resourceVersion;
  if (options.internal !== true) {
    const uid = incoming.metadata.uid;
    if (uid !== undefined && uid !== '')
      assertPreconditions(
        info,
        {
          namespace: namespaceOf(existing),
          name,
          uid: existing.metadata.uid ?? '',
          resourceVersion: existing.metadata.resourceVersion ?? '',
        },
        { uid },
      );
    if (options.subresource === undefined) assertConditionalUpdate(info, name, wantedRv);
  }
  if (wantedRv !== undefined && wantedRv !== '' && wantedRv !== existing.metadata.resourceVersion)
    throw conflict(targetOf(info, name));
}

/**
 * The object an update of the main resource stores: the status kept apart (when the kind has
 * that subresource), the immutable metadata and the deletion state kept from `existing`, the
 * managed fields kept unless the caller computed them, then the kind's own rules.
 */
function mainResourceUpdate(
  info: KindInfo,
  existing: KubeObject,
  incoming: KubeObject,
  keepManagedFields: boolean,
): KubeObject {
  const next = incoming;
  delete next.apiVersion;
  delete next.kind;
  if (info.subresources.includes('status')) {
    if (existing.status === undefined) delete next.status;
    else next.status = clone(existing.status);
  }
  const meta = next.metadata;
  const old = existing.metadata;
  meta.name = old.name ?? '';
  if (info.namespaced) meta.namespace = old.namespace ?? '';
  else delete meta.namespace;
  meta.uid = old.uid ?? '';
  meta.creationTimestamp = old.creationTimestamp ?? '';
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.generation;
  if (old.deletionTimestamp !== undefined) meta.deletionTimestamp = old.deletionTimestamp;
  if (old.deletionGracePeriodSeconds !== undefined)
    meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
  if (old.generation !== undefined) meta.generation = old.generation;
  info.rules.prepareForUpdate?.(next, existing);
  if (!keepManagedFields) {
    delete meta.managedFields;
    if (old.managedFields !== undefined) meta.managedFields = clone(old.managedFields);
  }
  info.rules.defaults?.(next);
  return next;
}

/**
 * True when an update leaves a deleted object nothing to wait for: no finalizers, a pod's grace
 * period over, a namespace's own finalizers done. The update then removes it.
 */
function finishesDeletion(info: KindInfo, next: KubeObject): boolean {
  const finalizers = next.metadata.finalizers ?? [];
  return (
    next.metadata.deletionTimestamp !== undefined &&
    finalizers.length === 0 &&
    (info.resource !== 'pods' || next.metadata.deletionGracePeriodSeconds === 0) &&
    (info.resource !== 'namespaces' || namespaceFinalizers(next).length === 0)
  );
}

/** A server-side apply's body as an object: it needs a field manager; YAML text is parsed. */
function applyBody(body: unknown, options: PatchOptions): KubeObject {
  if (options.fieldManager === undefined || options.fieldManager === '') {
    throw badRequest('PATCH, application/apply-patch+yaml requests must have a fieldManager');
  }
  const patchBody: unknown = typeof body === 'string' ? parseYaml(body) : body;
  if (isKubeObject(patchBody) && options.subresource === undefined)
    options.inspect?.(patchBody, true);
  if (!isKubeObject(patchBody)) throw badRequest('the apply body must be an object');
  return patchBody;
}

/**
 * rest.BeforeDelete (apiserver pkg/registry/rest/delete.go): preconditions fail early, the
 * conflict naming the object by its Kind.
 */
function assertDeletePreconditions(
  info: KindInfo,
  name: string,
  existing: KubeObject,
  preconditions: DeleteOptions['preconditions'],
): void {
  const byKind = { group: info.group, resource: info.kind, name };
  if (preconditions?.uid !== undefined && preconditions.uid !== existing.metadata.uid) {
    throw conflict(
      byKind,
      `the UID in the precondition (${preconditions.uid}) does not match the UID in record (${existing.metadata.uid ?? ''}). The object might have been deleted and then recreated`,
    );
  }
  if (
    preconditions?.resourceVersion !== undefined &&
    preconditions.resourceVersion !== existing.metadata.resourceVersion
  ) {
    throw conflict(
      byKind,
      `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${existing.metadata.resourceVersion ?? ''}). The object might have been modified`,
    );
  }
}
