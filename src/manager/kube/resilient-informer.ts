// A client-node informer (ListWatch) wrapped so that it survives: client-node stops an informer
// for good after any error other than 410 or its own 30 s timeout; this restarts it with capped
// exponential backoff (low cap, reset on every success: INFORMER_BACKOFF), reports "synced" only
// after a first successful list, and counts restarts.
import type { KubernetesListObject, KubernetesObject, Watch } from '@kubernetes/client-node';
import { ListWatch } from '@kubernetes/client-node/dist/cache.js';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { apiStatus, describeApiError } from './client.ts';
import { Backoff, type BackoffPolicy } from '../backoff.ts';

/**
 * The delay before an informer restarts after an error: from 250 ms, doubling, capped low (2 s),
 * back to 250 ms on any success, ±20 % so informers do not retry in lockstep. A long cap is what
 * made the manager see a `kubectl scale` 45 s late after a burst of API errors (issue 16, item
 * 10): the last delay before the fault cleared was 16–30 s. client-go's reflector backs off from
 * 800 ms to 30 s; a sidecar watching three small collections can afford to retry faster.
 */
export const INFORMER_BACKOFF = {
  initialMs: 250,
  maxMs: 2_000,
  jitter: { min: 0.8, max: 1.2 },
} as const satisfies BackoffPolicy;

/**
 * The delay before an informer the API refused (403) lists again: only a change of the Role can
 * help, so it does not retry at the backoff's pace (client-go's reflector caps at 30 s too); its
 * `lastError` names the apiserver's message and the missing rule (`KUBE_FORBIDDEN: …`).
 */
export const FORBIDDEN_RETRY_MS = 30_000;

export interface ResilientInformerOptions<T extends KubernetesObject> {
  /** Short name for logs and metrics ("pods"). */
  name: string;
  /** API path of the collection, e.g. `/api/v1/namespaces/ns/pods`. */
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  watch: Watch;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Called for every add, update and delete, and with no object after each relist. */
  onChange: (object: T | undefined) => void;
  logger: Logger;
  clock: Clock;
  /** First and largest restart delay (250 ms, 2 s). */
  backoff?: { initialMs: number; maxMs: number };
  /** Called on each restart after an error (metrics). */
  onRestart?: (name: string) => void;
  /**
   * What the cache keeps of each listed or watched object (default: all of it). The events'
   * objects are replaced by it before client-node caches them; a watch's ERROR and BOOKMARK
   * objects pass unchanged.
   */
  lean?: (object: T) => T;
}

/**
 * The informer cache of one collection. `start()` resolves once the first list has succeeded
 * (retrying until then); afterwards failures never stop it, they only delay it.
 */
export class ResilientInformer<T extends KubernetesObject> {
  readonly name: string;
  readonly #options: ResilientInformerOptions<T>;
  readonly #informer: ListWatch<T>;
  #synced = false;
  #stopped = false;
  readonly #backoff: Backoff;
  #restarts = 0;
  #cancelRestart: (() => void) | undefined;
  #lastError: string | undefined;
  #syncedWaiters: (() => void)[] = [];

  constructor(options: ResilientInformerOptions<T>) {
    this.name = options.name;
    this.#options = options;
    this.#backoff = new Backoff({ ...INFORMER_BACKOFF, ...options.backoff });
    const lean = options.lean;
    const listAndMark = async (): Promise<KubernetesListObject<T>> => {
      const result = await options.list();
      if (lean !== undefined) result.items = result.items.map(lean);
      this.#markSynced();
      return result;
    };
    this.#informer = new ListWatch<T>(
      options.path,
      lean === undefined ? options.watch : leanWatch(options.watch, lean),
      listAndMark,
      false,
      options.labelSelector,
      options.fieldSelector,
    );
    const notify = (object: T): void => {
      this.#backoff.reset(); // the watch delivers: the next failure starts from a short delay
      options.onChange(object);
    };
    this.#informer.on('add', notify);
    this.#informer.on('update', notify);
    this.#informer.on('delete', notify);
    this.#informer.on('connect', () =>
      options.logger.debug({ informer: this.name }, 'informer (re)connecting'),
    );
    this.#informer.on('error', (error: unknown) => this.#onError(error));
  }

  /** Starts the informer; resolves after the first successful list (or when stopped). */
  async start(): Promise<void> {
    this.#stopped = false;
    const synced = this.waitSynced();
    await this.#informer.start();
    await synced;
  }

  /** Resolves once the first list has succeeded. */
  waitSynced(): Promise<void> {
    if (this.#synced || this.#stopped) return Promise.resolve();
    return new Promise((resolve) => this.#syncedWaiters.push(resolve));
  }

  get synced(): boolean {
    return this.#synced;
  }

  get restarts(): number {
    return this.#restarts;
  }

  get lastError(): string | undefined {
    return this.#lastError;
  }

  list(): readonly T[] {
    return this.#informer.list();
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#informer.get(name, namespace);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelRestart?.();
    this.#cancelRestart = undefined;
    for (const resolve of this.#syncedWaiters.splice(0)) resolve();
    await this.#informer.stop();
  }

  #markSynced(): void {
    const wasSynced = this.#synced;
    this.#synced = true;
    this.#backoff.reset();
    this.#lastError = undefined;
    for (const resolve of this.#syncedWaiters.splice(0)) resolve();
    if (wasSynced) this.#options.onChange(undefined);
  }

  #onError(error: unknown): void {
    if (this.#stopped) return;
    this.#lastError = describeApiError(error);
    const delay = apiStatus(error) === 403 ? FORBIDDEN_RETRY_MS : this.#backoff.next();
    this.#restarts++;
    this.#options.onRestart?.(this.name);
    this.#options.logger.warn(
      { informer: this.name, err: error, retryInMs: delay, restarts: this.#restarts },
      'informer failed; restarting',
    );
    this.#cancelRestart = this.#options.clock.setTimer(() => {
      this.#cancelRestart = undefined;
      if (this.#stopped) return;
      this.#informer.start().catch((startError: unknown) => this.#onError(startError));
    }, delay);
  }
}

const CACHED_EVENTS = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/** A Watch whose ADDED, MODIFIED and DELETED objects pass through `lean` on their way in. */
function leanWatch<T>(watch: Watch, lean: (object: T) => T): Watch {
  return {
    watch: (path, params, callback, done) =>
      watch.watch(
        path,
        params,
        (phase, object: unknown, raw?: unknown) =>
          callback(phase, CACHED_EVENTS.has(phase) ? lean(object as T) : object, raw),
        done,
      ),
  } as Watch;
}
