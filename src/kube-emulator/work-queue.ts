// A keyed work queue for controllers: duplicate keys merge, handlers run outside store callbacks.
import type { Clock } from './clock.ts';

export interface WorkQueueOptions {
  /** Handles one key; a throw re-queues the key after `retryMs`. */
  handle: (key: string) => void;
  clock: Clock;
  retryMs?: number;
  onError?: (key: string, error: unknown) => void;
}

/**
 * Store listeners must never write synchronously (the other listeners would see events out of
 * order), so controllers add keys here and the queue handles them on a later turn of the loop.
 */
export class WorkQueue {
  readonly #options: WorkQueueOptions;
  readonly #pending = new Set<string>();
  #scheduled: NodeJS.Immediate | undefined;
  #stopped = false;
  readonly #retries = new Map<string, () => void>();

  constructor(options: WorkQueueOptions) {
    this.#options = options;
  }

  add(key: string): void {
    if (this.#stopped) return;
    this.#pending.add(key);
    this.#scheduled ??= setImmediate(() => this.#drain());
  }

  /** Adds `key` after `ms` milliseconds (on the injected clock). */
  addAfter(key: string, ms: number): void {
    if (this.#stopped || this.#retries.has(key)) return;
    const cancel = this.#options.clock.setTimeout(() => {
      this.#retries.delete(key);
      this.add(key);
    }, ms);
    this.#retries.set(key, cancel);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#scheduled !== undefined) clearImmediate(this.#scheduled);
    for (const cancel of this.#retries.values()) cancel();
    this.#retries.clear();
    this.#pending.clear();
  }

  #drain(): void {
    this.#scheduled = undefined;
    const keys = [...this.#pending];
    this.#pending.clear();
    for (const key of keys) {
      if (this.#stopped) return;
      try {
        this.#options.handle(key);
      } catch (error: unknown) {
        this.#options.onError?.(key, error);
        this.addAfter(key, this.#options.retryMs ?? 100);
      }
    }
  }
}

/** The key of a namespaced object in a queue: `namespace/name`. */
export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** The namespace and name of an `objectKey`. */
export function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
