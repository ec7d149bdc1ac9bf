// Events written by the emulator's own controllers and kubelets, as their real counterparts
// write them: core/v1 Events from client-go's legacy recorder (tools/record/event.go `makeEvent`:
// name `<object>.<hex nanoseconds>`, source and reporting component, first/last timestamp, count;
// an identical repeat bumps count and lastTimestamp instead, as events_cache.go's eventLogger
// does), and events.k8s.io/v1 Events from the new recorder (tools/events: eventTime, action,
// reportingController; a repeat becomes a `series`), as the scheduler writes `Scheduled`.
import { randomUUID } from 'node:crypto';
import { microTime, rfc3339, type Clock } from './clock.ts';
import { coreEventDefaults } from './event-conversion.ts';
import { clone, type JsonObject } from './json.ts';
import { apiVersionOf, kindOf, type KindInfo } from './kinds.ts';
import type { ResourceApi } from './resource-api.ts';
import type { KubeObject } from './types.ts';

const coreEvents = kindOf('', 'events');
const namespaces = kindOf('', 'namespaces');

/** Who records: `source.component` / `reportingController`, and the host (instance). */
export interface EventSource {
  component: string;
  host?: string;
}

export type EventType = 'Normal' | 'Warning';

/** How many distinct events the recorder remembers for aggregation (client-go: 4096). */
const CACHE_SIZE = 4096;

export class EventRecorder {
  readonly #api: ResourceApi;
  readonly #clock: Clock;
  /** Aggregation key → the stored Event's name and namespace. */
  readonly #seen = new Map<string, { namespace: string; name: string }>();
  #lastNanos = 0n;

  constructor(options: { api: ResourceApi; clock: Clock }) {
    this.#api = options.api;
    this.#clock = options.clock;
  }

  /** `<object>.<hex nanoseconds>`, increasing from one event to the next (names sort by time). */
  #name(object: KubeObject): string {
    const nanos = BigInt(this.#clock.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
    this.#lastNanos = nanos > this.#lastNanos ? nanos : this.#lastNanos + 1n;
    return `${object.metadata.name ?? ''}.${this.#lastNanos.toString(16)}`;
  }

  /**
   * Stores a new Event as the API would (uid, creationTimestamp, Go's zero fields), straight into
   * the store: Events have no validation or defaults worth the generic path's copies, and a pod
   * start writes several (the fast path keeps a 1,000-pod scale within a few % of its cost).
   */
  #create(namespace: string, event: KubeObject & { metadata: { name: string } }): void {
    if (this.#api.peek(namespaces, '', namespace) === undefined) return;
    if (this.#api.peek(coreEvents, namespace, event.metadata.name) !== undefined) return;
    const stored = event;
    stored.metadata.namespace = namespace;
    stored.metadata.uid = randomUUID();
    stored.metadata.creationTimestamp = rfc3339(this.#clock.now());
    coreEventDefaults(stored);
    this.#api.store.create(coreEvents.storage, stored);
  }

  /** Stores a changed copy of a stored Event (a repeat). */
  #update(event: KubeObject): void {
    this.#api.store.update(coreEvents.storage, event);
  }

  #remember(key: string, namespace: string, name: string): void {
    if (this.#seen.size >= CACHE_SIZE) this.#seen.delete(this.#seen.keys().next().value ?? '');
    this.#seen.set(key, { namespace, name });
  }

  /** A core/v1 Event about `object` (a legacy-recorder event); never throws. */
  record(options: {
    object: KubeObject;
    info: KindInfo;
    source: EventSource;
    type: EventType;
    reason: string;
    message: string;
    fieldPath?: string;
  }): void {
    const { object, info, source, type, reason, message } = options;
    const namespace = object.metadata.namespace ?? 'default';
    const involved: JsonObject = {
      kind: info.kind,
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name ?? '',
      uid: object.metadata.uid ?? '',
      apiVersion: apiVersionOf(info),
      resourceVersion: object.metadata.resourceVersion ?? '',
      ...(options.fieldPath === undefined ? {} : { fieldPath: options.fieldPath }),
    };
    const key = JSON.stringify([
      source.component,
      source.host ?? '',
      involved.kind,
      involved.namespace,
      involved.name,
      involved.uid,
      involved.apiVersion,
      involved.fieldPath ?? '',
      type,
      reason,
      message,
    ]);
    const now = rfc3339(this.#clock.now());
    try {
      const previous = this.#seen.get(key);
      const stored =
        previous === undefined
          ? undefined
          : this.#api.peek(coreEvents, previous.namespace, previous.name);
      if (stored !== undefined) {
        const next = clone(stored);
        next.count = (typeof stored.count === 'number' ? stored.count : 1) + 1;
        next.lastTimestamp = now;
        this.#update(next);
        return;
      }
      const name = this.#name(object);
      this.#create(namespace, {
        metadata: { name, namespace },
        involvedObject: involved,
        reason,
        message,
        source: {
          component: source.component,
          ...(source.host === undefined ? {} : { host: source.host }),
        },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: source.component,
        reportingInstance: source.host ?? '',
      });
      this.#remember(key, namespace, name);
    } catch {
      // An event that cannot be written (its namespace is being deleted…) is dropped, as
      // client-go's recorder drops it after its retries.
    }
  }

  /** An events.k8s.io/v1 Event (the new recorder): a repeat becomes a series. Never throws. */
  recordNew(options: {
    object: KubeObject;
    info: KindInfo;
    controller: string;
    instance: string;
    type: EventType;
    reason: string;
    action: string;
    note: string;
  }): void {
    const { object, info, controller, instance, type, reason, action, note } = options;
    const namespace = object.metadata.namespace ?? 'default';
    const regarding: JsonObject = {
      kind: info.kind,
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name ?? '',
      uid: object.metadata.uid ?? '',
      apiVersion: apiVersionOf(info),
      resourceVersion: object.metadata.resourceVersion ?? '',
    };
    const key = JSON.stringify([
      'new',
      controller,
      instance,
      regarding.uid,
      type,
      reason,
      action,
      note,
    ]);
    const now = microTime(this.#clock.now());
    try {
      const previous = this.#seen.get(key);
      const stored =
        previous === undefined
          ? undefined
          : this.#api.peek(coreEvents, previous.namespace, previous.name);
      if (stored !== undefined) {
        const next = clone(stored);
        const series = next.series as { count?: number } | undefined;
        next.series = { count: (series?.count ?? 1) + 1, lastObservedTime: now };
        this.#update(next);
        return;
      }
      const name = this.#name(object);
      // Stored in the core form, as the apiserver converts events.k8s.io/v1 (event-conversion.ts).
      this.#create(namespace, {
        metadata: { name, namespace },
        involvedObject: regarding,
        reason,
        message: note,
        type,
        action,
        eventTime: now,
        reportingComponent: controller,
        reportingInstance: instance,
        source: {},
        firstTimestamp: null,
        lastTimestamp: null,
      });
      this.#remember(key, namespace, name);
    } catch {
      // dropped, as above
    }
  }
}
