// The namespace controller (pkg/controller/namespace/deletion/namespaced_resources_deleter.go,
// v1.32): a namespace being deleted (`Terminating`) has its content deleted as any client's
// delete would be (pods gracefully, so their preStop hooks run), its status conditions say what
// remains, and once nothing is left the `kubernetes` finalizer goes and so does the namespace.
import type { Clock } from '../clock.ts';
import { clone, isObject, type JsonObject } from '../json.ts';
import { kinds, kindOf, type KindInfo } from '../kinds.ts';
import { rfc3339 } from '../clock.ts';
import type { ResourceApi } from '../resource-api.ts';
import { WorkQueue } from '../work-queue.ts';

const namespaces = kindOf('', 'namespaces');
export const KUBERNETES_FINALIZER = 'kubernetes';

/** The stored kinds a namespace holds (each table once). */
function namespacedKinds(): KindInfo[] {
  return kinds.filter(
    (info) => info.namespaced && info.conversion === undefined && info.verbs === undefined,
  );
}

export class NamespaceController {
  readonly #api: ResourceApi;
  readonly #clock: Clock;
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;

  constructor(options: { api: ResourceApi; clock: Clock }) {
    this.#api = options.api;
    this.#clock = options.clock;
    this.#queue = new WorkQueue({
      handle: (key) => this.#sync(key),
      clock: options.clock,
      retryMs: 200,
    });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      if (event.storage === namespaces.storage) {
        if (event.object.metadata.deletionTimestamp !== undefined)
          this.#queue.add(event.object.metadata.name ?? '');
        return;
      }
      // Content that goes (or changes) in a terminating namespace: look again.
      const namespace = event.object.metadata.namespace ?? '';
      if (namespace === '') return;
      const ns = this.#api.peek(namespaces, '', namespace);
      if (ns?.metadata.deletionTimestamp !== undefined) this.#queue.add(namespace);
    });
  }

  stop(): void {
    this.#unsubscribe();
    this.#queue.stop();
  }

  #sync(name: string): void {
    const ns = this.#api.peek(namespaces, '', name);
    if (ns?.metadata.deletionTimestamp === undefined) return;
    const remaining = new Map<string, number>();
    for (const info of namespacedKinds()) {
      const objects = this.#api.store.list(info.storage, name);
      if (objects.length === 0) continue;
      remaining.set(info.resource, objects.length);
      for (const object of objects) {
        if (object.metadata.deletionTimestamp !== undefined) continue;
        try {
          this.#api.delete(info, name, object.metadata.name ?? '');
        } catch {
          // gone meanwhile, or held: looked at again on its next change
        }
      }
    }
    this.#writeConditions(name, remaining);
    if (remaining.size > 0) return;
    const current = this.#api.peek(namespaces, '', name);
    if (current === undefined) return;
    const next = clone(current);
    const spec = isObject(next.spec) ? next.spec : {};
    spec.finalizers = (Array.isArray(spec.finalizers) ? spec.finalizers : []).filter(
      (f) => f !== KUBERNETES_FINALIZER,
    );
    next.spec = spec;
    if (
      (spec.finalizers as unknown[]).length === 0 &&
      (next.metadata.finalizers ?? []).length === 0
    )
      this.#api.removeNow(namespaces, current);
    else this.#api.write(namespaces, next);
  }

  /** The conditions the controller reports (NamespaceContentRemaining and its siblings). */
  #writeConditions(name: string, remaining: ReadonlyMap<string, number>): void {
    const current = this.#api.peek(namespaces, '', name);
    if (current === undefined) return;
    const now = rfc3339(this.#clock.now());
    const condition = (
      type: string,
      status: string,
      reason: string,
      message: string,
    ): JsonObject => ({
      type,
      status,
      lastTransitionTime: now,
      reason,
      message,
    });
    const left = [...remaining].map(
      ([resource, count]) => `${resource} has ${count} resource instances`,
    );
    const conditions = [
      condition(
        'NamespaceDeletionDiscoveryFailure',
        'False',
        'ResourcesDiscovered',
        'All resources successfully discovered',
      ),
      condition(
        'NamespaceDeletionGroupVersionParsingFailure',
        'False',
        'ParsedGroupVersions',
        'All legacy kube types successfully parsed',
      ),
      condition(
        'NamespaceDeletionContentFailure',
        'False',
        'ContentDeleted',
        'All content successfully deleted, may be waiting on finalization',
      ),
      remaining.size > 0
        ? condition(
            'NamespaceContentRemaining',
            'True',
            'SomeResourcesRemain',
            `Some resources are remaining: ${left.join(', ')}`,
          )
        : condition(
            'NamespaceContentRemaining',
            'False',
            'ContentRemoved',
            'All content successfully removed',
          ),
      condition(
        'NamespaceFinalizersRemaining',
        'False',
        'ContentHasNoFinalizers',
        'All content-preserving finalizers finished',
      ),
    ];
    const status = isObject(current.status) ? current.status : {};
    const before = Array.isArray(status.conditions) ? (status.conditions as JsonObject[]) : [];
    const same = (a: JsonObject[], b: JsonObject[]): boolean =>
      a.length === b.length &&
      a.every(
        (c, i) => c.type === b[i]?.type && c.status === b[i]?.status && c.message === b[i]?.message,
      );
    if (same(before, conditions)) return;
    const next = clone(current);
    next.status = { ...status, phase: 'Terminating', conditions };
    this.#api.write(namespaces, next, 'status');
  }
}
