// The object store: tables of objects, one global resourceVersion, and a bounded event history.
import { objectKey, type KubeObject } from './types.ts';

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One write. `object` is the new state; for DELETED it is the last state, with the delete's RV. */
export interface StoreEvent {
  readonly type: StoreEventType;
  readonly rv: number;
  /** The table written (`apps/statefulsets`, `/pods`). */
  readonly storage: string;
  readonly object: KubeObject;
  /** The state before this write (undefined for ADDED). */
  readonly previous: KubeObject | undefined;
}

export type StoreListener = (event: StoreEvent) => void;

export interface StoreOptions {
  /** How many events the history keeps for watches that resume from an old RV. */
  historySize: number;
  /** The first resourceVersion; random and large by default, like a real cluster's. */
  rvBase?: number;
}

/**
 * Objects handed to the store become its own, and objects it returns are shared: callers copy
 * before changing anything. Every write gets the next global resourceVersion and is announced
 * to listeners synchronously, in order.
 */
export class Store {
  #rv: number;
  /** Watches from an RV below this cannot be served from the history (410 Expired). */
  #floor: number;
  readonly #tables = new Map<string, Map<string, KubeObject>>();
  readonly #ring: (StoreEvent | undefined)[];
  #head = 0;
  #count = 0;
  readonly #listeners = new Set<StoreListener>();

  constructor(options: StoreOptions) {
    this.#rv = options.rvBase ?? 1_000_000 + Math.floor(Math.random() * 1_000_000);
    this.#floor = this.#rv;
    this.#ring = new Array<StoreEvent | undefined>(Math.max(1, options.historySize));
  }

  /** The current global resourceVersion (that of the last write). */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** The oldest RV a watch can resume from. */
  get oldestResumableVersion(): number {
    return this.#floor;
  }

  #table(storage: string): Map<string, KubeObject> {
    let table = this.#tables.get(storage);
    if (table === undefined) {
      table = new Map();
      this.#tables.set(storage, table);
    }
    return table;
  }

  get(storage: string, namespace: string, name: string): KubeObject | undefined {
    return this.#tables.get(storage)?.get(objectKey(namespace, name));
  }

  /** Objects of a table, in one namespace or (namespace undefined) all, sorted by key. */
  list(storage: string, namespace?: string): KubeObject[] {
    const table = this.#tables.get(storage);
    if (table === undefined) return [];
    const items: [string, KubeObject][] = [];
    for (const entry of table) {
      if (namespace === undefined || (entry[1].metadata.namespace ?? '') === namespace)
        items.push(entry);
    }
    items.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return items.map((entry) => entry[1]);
  }

  /** Every table name with at least one object. */
  tables(): string[] {
    return [...this.#tables.keys()];
  }

  create(storage: string, object: KubeObject): KubeObject {
    const key = objectKey(object.metadata.namespace ?? '', object.metadata.name ?? '');
    const table = this.#table(storage);
    if (table.has(key)) throw new Error(`store: ${storage} ${key} exists`);
    object.metadata.resourceVersion = String(++this.#rv);
    table.set(key, object);
    this.#emit({ type: 'ADDED', rv: this.#rv, storage, object, previous: undefined });
    return object;
  }

  update(storage: string, object: KubeObject): KubeObject {
    const key = objectKey(object.metadata.namespace ?? '', object.metadata.name ?? '');
    const table = this.#table(storage);
    const previous = table.get(key);
    if (previous === undefined) throw new Error(`store: ${storage} ${key} is missing`);
    object.metadata.resourceVersion = String(++this.#rv);
    table.set(key, object);
    this.#emit({ type: 'MODIFIED', rv: this.#rv, storage, object, previous });
    return object;
  }

  /** Removes an object; returns its last state (with the delete's RV), or undefined if absent. */
  remove(storage: string, namespace: string, name: string): KubeObject | undefined {
    const key = objectKey(namespace, name);
    const table = this.#tables.get(storage);
    const previous = table?.get(key);
    if (table === undefined || previous === undefined) return undefined;
    table.delete(key);
    const object = {
      ...previous,
      metadata: { ...previous.metadata, resourceVersion: String(++this.#rv) },
    };
    this.#emit({ type: 'DELETED', rv: this.#rv, storage, object, previous });
    return object;
  }

  /**
   * The events after `rv`, oldest first; undefined when the history no longer reaches back
   * that far (the caller answers 410 Expired).
   */
  since(rv: number): StoreEvent[] | undefined {
    if (rv < this.#floor) return undefined;
    const events: StoreEvent[] = [];
    for (let i = 0; i < this.#count; i++) {
      const event = this.#ring[(this.#head + i) % this.#ring.length];
      if (event !== undefined && event.rv > rv) events.push(event);
    }
    return events;
  }

  /**
   * Fills an empty store with objects read back from disk (persistence.ts), their
   * resourceVersions kept, and goes on from `rv`: no event is announced (nothing watches yet) and
   * the history starts empty, so a watch from an older RV gets 410 Expired, as after an
   * apiserver restart.
   */
  restore(objects: readonly { storage: string; object: KubeObject }[], rv: number): void {
    if (this.#tables.size > 0) throw new Error('store: restore into a store that has objects');
    for (const { storage, object } of objects)
      this.#table(storage).set(
        objectKey(object.metadata.namespace ?? '', object.metadata.name ?? ''),
        object,
      );
    this.#rv = Math.max(this.#rv, rv);
    this.#floor = this.#rv;
  }

  /** Calls `listener` on every write from now on; returns the unsubscribe function. */
  subscribe(listener: StoreListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Simulates an apiserver restart onto a restored etcd: the RV counter jumps ahead and the
   * history is dropped, so every watch that resumes from an older RV gets 410 Expired.
   */
  jump(delta: number): void {
    this.#rv += Math.max(1, delta);
    this.#floor = this.#rv;
    this.#ring.fill(undefined);
    this.#head = 0;
    this.#count = 0;
  }

  #emit(event: StoreEvent): void {
    const capacity = this.#ring.length;
    if (this.#count === capacity) {
      const evicted = this.#ring[this.#head];
      if (evicted !== undefined) this.#floor = evicted.rv;
      this.#ring[this.#head] = event;
      this.#head = (this.#head + 1) % capacity;
    } else {
      this.#ring[(this.#head + this.#count) % capacity] = event;
      this.#count++;
    }
    for (const listener of this.#listeners) listener(event);
  }
}
