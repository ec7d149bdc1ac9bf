// Watch streams: replay from a resourceVersion or synthetic ADDED, live events with transition
import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
// filtering, bookmarks, timeouts, 410 Expired, and the switches the fault API pulls. Events go
// out as JSON lines or as length-prefixed protobuf WatchEvent frames (protobuf/envelope.ts),
// optionally as Tables or PartialObjectMetadata. A watcher that does not read is dropped once
// its unsent bytes pass a bound, as the apiserver's watch cache drops a watcher that falls too
// far behind (storage/cacher/cache_watcher.go: add() gives up and the watcher is closed).
import type { ServerResponse } from 'node:http';
import { PROTOBUF_WATCH, watchFrame } from '../protobuf/envelope.ts';
import { partialObjectMetadata } from './response-body.ts';
import type { Cancel, Clock } from '../clock.ts';
import { apiVersionOf, type KindInfo } from '../kinds.ts';
import type { ObjectFilter } from '../selectors/object-filter.ts';
import type { ResourceApi } from '../resource-api.ts';
import { toTable } from './table.ts';
import type { StoreEvent, StoreEventType } from '../store.ts';
import type { KubeObject } from '../types.ts';

export interface WatchRequest {
  info: KindInfo;
  filter: ObjectFilter;
  /** Undefined, '' and '0' mean "now, starting with the current state as ADDED". */
  resourceVersion: string | undefined;
  allowBookmarks: boolean;
  /** `sendInitialEvents`: true (watch-list), false (none), undefined (legacy: RV unset or 0). */
  sendInitialEvents: boolean | undefined;
  timeoutSeconds: number | undefined;
  /** Events carry one-row Tables (kubectl get -w) when set; `includeObject` as asked. */
  table: { includeObject: string | null } | undefined;
  /** JSON lines, or protobuf frames (`application/vnd.kubernetes.protobuf;stream=watch`). */
  encoding?: 'json' | 'protobuf';
  /** Events carry PartialObjectMetadata of this meta.k8s.io version when set. */
  partialMetadata?: 'v1' | 'v1beta1' | undefined;
}

export interface WatchHubOptions {
  api: ResourceApi;
  clock: Clock;
  /** How often a bookmark goes out to watches that asked for them. */
  bookmarkIntervalMs: number;
  /** Called when a watch opens (for tests and logs). */
  onOpen?: (request: WatchRequest) => void;
  /**
   * Unsent bytes a watch may hold (events its client has not read yet) before it is dropped
   * (default 16 MiB).
   */
  maxBufferedBytes?: number;
}

type Chunk = string | Uint8Array;

interface OpenWatch {
  readonly response: ServerResponse;
  readonly request: WatchRequest;
  readonly cancels: Cancel[];
  readonly unsubscribe: () => void;
  /** Events held back while the stream is paused. */
  held: Chunk[];
  /**
   * Unsent bytes of the initial events (replay or synthetic ADDED, written in one go, and as
   * large as the state): the bound on unread bytes comes on top of them.
   */
  slack: number;
}

type EventCache = Map<string, Chunk>;

/** The line a store event becomes on the wire, for a type and a served kind; cached per event. */
const encoded = new WeakMap<StoreEvent, EventCache>();

export class WatchHub {
  readonly #options: WatchHubOptions;
  readonly #open = new Set<OpenWatch>();
  #paused = false;
  #expireNext = 0;
  /** Watches dropped because their client stopped reading. */
  #dropped = 0;

  constructor(options: WatchHubOptions) {
    this.#options = options;
  }

  /** How many watch streams are open. */
  get size(): number {
    return this.#open.size;
  }

  /** Bytes written to open watch streams and not yet taken by the socket. */
  get bufferedBytes(): number {
    let total = 0;
    for (const watch of this.#open) total += watch.response.writableLength;
    return total;
  }

  /** How many watches were dropped for not reading. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Serves one watch on `response`, whose headers go out at once. */
  open(response: ServerResponse, request: WatchRequest): void {
    const { api } = this.#options;
    this.#options.onOpen?.(request);
    response.writeHead(200, {
      'Content-Type': request.encoding === 'protobuf' ? PROTOBUF_WATCH : 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    response.flushHeaders();
    const store = api.store;
    const rvText = request.resourceVersion;
    // Watch-list (sendInitialEvents=true) starts with the current state whatever the RV (the
    // cacher serves "not older than" it); otherwise RV unset or 0 starts now, legacy watches with
    // synthetic ADDED events, `sendInitialEvents=false` without (cacher.go, v0.32.4).
    const unset = rvText === undefined || rvText === '' || rvText === '0';
    const fromNow = unset || request.sendInitialEvents === true;
    const since = fromNow ? [] : store.since(Number(rvText));
    if (this.#expireNext > 0 || since === undefined || (!fromNow && !/^\d+$/.test(rvText))) {
      if (this.#expireNext > 0) this.#expireNext--;
      const message = `too old resource version: ${rvText ?? ''} (${store.oldestResumableVersion})`;
      const status = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason: 'Expired',
        code: 410,
      };
      response.end(this.#encode(request, 'ERROR', status));
      return;
    }
    const watch: OpenWatch = {
      response,
      request,
      cancels: [],
      held: [],
      slack: Number.POSITIVE_INFINITY,
      unsubscribe: store.subscribe((event) => {
        if (event.storage === request.info.storage) this.#deliver(watch, event);
      }),
    };
    this.#open.add(watch);
    response.on('close', () => this.#close(watch));
    if (fromNow && request.sendInitialEvents !== false) {
      for (const object of store.list(request.info.storage)) {
        if (request.filter.matches(object))
          this.#write(watch, this.#line('ADDED', object, request));
      }
      if (request.sendInitialEvents === true && request.allowBookmarks) this.#bookmark(watch, true);
    } else {
      for (const event of since)
        if (event.storage === request.info.storage) this.#deliver(watch, event);
    }
    watch.slack = response.writableLength;
    const { clock, bookmarkIntervalMs } = this.#options;
    if (request.allowBookmarks) {
      const tick = (): void => {
        this.#bookmark(watch, false);
        watch.cancels.push(clock.setTimeout(tick, bookmarkIntervalMs));
      };
      watch.cancels.push(clock.setTimeout(tick, bookmarkIntervalMs));
    }
    // Without timeoutSeconds a real apiserver ends a watch after 30 to 60 minutes.
    const lifetime =
      request.timeoutSeconds === undefined
        ? (1800 + Math.random() * 1800) * 1000
        : request.timeoutSeconds * 1000;
    watch.cancels.push(
      clock.setTimeout(() => {
        if (request.allowBookmarks) this.#bookmark(watch, false);
        this.#end(watch);
      }, lifetime),
    );
  }

  /** Ends every stream cleanly (clients re-watch from their last RV). */
  endAll(): void {
    for (const watch of [...this.#open]) this.#end(watch);
  }

  /** Resets every stream's socket (clients see a network error). */
  resetAll(): void {
    for (const watch of [...this.#open]) {
      this.#close(watch);
      const socket = watch.response.socket;
      if (socket) resetSocket(socket);
    }
  }

  /** The next `count` watches get 200 + ERROR 410 Expired, then the end of the stream. */
  expireNext(count = 1): void {
    this.#expireNext += count;
  }

  /** Holds every event back until `resume()`; streams stay open. */
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    for (const watch of this.#open) {
      const held = watch.held;
      watch.held = [];
      for (const line of held) this.#send(watch, line);
    }
  }

  #deliver(watch: OpenWatch, event: StoreEvent): void {
    const { filter, info, table } = watch.request;
    const isMatch = event.type !== 'DELETED' && filter.matches(event.object);
    const wasMatch = event.previous !== undefined && filter.matches(event.previous);
    let type: StoreEventType | undefined;
    if (event.type === 'DELETED') type = wasMatch ? 'DELETED' : undefined;
    else if (isMatch) type = wasMatch ? 'MODIFIED' : 'ADDED';
    else if (wasMatch) type = 'DELETED';
    if (type === undefined) return;
    let cache = encoded.get(event);
    if (cache === undefined) {
      cache = new Map();
      encoded.set(event, cache);
    }
    const key = `${type}|${apiVersionOf(info)}|${table === undefined ? '' : `table=${table.includeObject ?? ''}`}|${watch.request.encoding ?? 'json'}|${watch.request.partialMetadata ?? ''}`;
    let line = cache.get(key);
    if (line === undefined) {
      line = this.#line(type, event.object, watch.request);
      cache.set(key, line);
    }
    this.#write(watch, line);
  }

  #line(type: StoreEventType, object: KubeObject, request: WatchRequest): Chunk {
    const { api } = this.#options;
    const served = api.serve(request.info, object);
    let body: Record<string, unknown> = served;
    if (request.table !== undefined) {
      body = toTable({
        info: request.info,
        objects: [served],
        now: api.now(),
        includeObject: request.table.includeObject,
      });
    } else if (request.partialMetadata !== undefined) {
      body = partialObjectMetadata(served, request.partialMetadata);
    }
    return this.#encode(request, type, body);
  }

  /** One event on the wire: a JSON line or a protobuf frame. */
  #encode(request: WatchRequest, type: string, object: Record<string, unknown>): Chunk {
    if (request.encoding === 'protobuf') return watchFrame(type, object);
    return `${JSON.stringify({ type, object })}\n`;
  }

  #bookmark(watch: OpenWatch, initialEventsEnd: boolean): void {
    const { info } = watch.request;
    const metadata: Record<string, unknown> = {
      resourceVersion: String(this.#options.api.store.resourceVersion),
    };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    const object =
      watch.request.partialMetadata === undefined
        ? { kind: info.kind, apiVersion: apiVersionOf(info), metadata }
        : partialObjectMetadata({ metadata }, watch.request.partialMetadata);
    this.#write(watch, this.#encode(watch.request, 'BOOKMARK', object));
  }

  #write(watch: OpenWatch, line: Chunk): void {
    if (this.#paused) watch.held.push(line);
    else this.#send(watch, line);
  }

  /**
   * Writes to the socket unless the client has left more than the bound unread: then the
   * watch is dropped (its socket destroyed, which frees what it held).
   */
  #send(watch: OpenWatch, line: Chunk): void {
    const limit = this.#options.maxBufferedBytes ?? 16 * 1024 * 1024;
    if (watch.response.writableLength > limit + watch.slack) {
      this.#dropped++;
      this.#close(watch);
      watch.response.destroy();
      return;
    }
    watch.response.write(line);
  }

  #end(watch: OpenWatch): void {
    this.#close(watch);
    watch.response.end();
  }

  #close(watch: OpenWatch): void {
    if (!this.#open.delete(watch)) return;
    watch.unsubscribe();
    for (const cancel of watch.cancels) cancel();
  }
}

/**
 * Closes a connection with a TCP RST, as a network failure would. Over HTTPS the response's socket
 * is a TLSSocket, whose TLSWrap handle `resetAndDestroy` refuses ("This handle type cannot be
 * sent"): the RST goes through the TCP socket it wraps (`_parent`, set by `new TLSSocket(raw)` in
 * node's lib/_tls_wrap.js). Should that private field be gone, the stream is destroyed (a FIN),
 * which clients see as an early end and also re-watch from.
 */
function resetSocket(socket: Socket): void {
  const raw =
    socket instanceof TLSSocket ? (socket as TLSSocket & { _parent?: unknown })._parent : socket;
  if (raw instanceof Socket) raw.resetAndDestroy();
  socket.destroy();
}
