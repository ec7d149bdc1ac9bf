// One event-stream client's outbox, with backpressure: events go to the connection one at a
// time, the next only once the connection took the last (`write()` true, or its 'drain'); the
// ones that arrive meanwhile wait here. A client that does not read is dropped, with a named
// reason, once its unsent bytes (waiting here plus buffered in the socket) pass a bound: events
// are never buffered without end.

/** One server-sent event, as @fastify/sse sends it. */
export interface FeedMessage {
  event?: string;
  data: unknown;
  retry?: number;
}

/** Why the server ended a client's stream. */
export const DropReason = {
  /** The client fell `maxUnsentBytes` behind: it does not read, or reads too slowly. */
  slowClient: 'SLOW_CLIENT',
} as const;
export type DropReason = (typeof DropReason)[keyof typeof DropReason];

export interface FeedSink {
  /** Writes one event; resolves once the connection takes more (after 'drain' when it was full). */
  send(message: FeedMessage): Promise<void>;
  /** Bytes written to the connection and not yet sent (the socket's `writableLength`). */
  unsentBytes(): number;
  /** Ends the connection at once (a dropped client gets nothing more). */
  destroy(): void;
}

export class EventFeed {
  readonly #sink: FeedSink;
  readonly #maxUnsentBytes: number;
  readonly #onDrop: (reason: DropReason, unsentBytes: number) => void;
  readonly #queue: { message: FeedMessage; bytes: number }[] = [];
  #queuedBytes = 0;
  #writing = false;
  #dropped: DropReason | undefined;

  constructor(options: {
    sink: FeedSink;
    maxUnsentBytes: number;
    onDrop: (reason: DropReason, unsentBytes: number) => void;
  }) {
    this.#sink = options.sink;
    this.#maxUnsentBytes = options.maxUnsentBytes;
    this.#onDrop = options.onDrop;
  }

  /** Why the client was dropped, if it was. */
  get dropped(): DropReason | undefined {
    return this.#dropped;
  }

  /** Bytes of events waiting here for the connection to take them. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Queues `message` for the client; drops the client when it is too far behind. */
  push(message: FeedMessage): void {
    if (this.#dropped !== undefined) return;
    const bytes = sizeOf(message);
    const unsent = this.#queuedBytes + this.#sink.unsentBytes();
    if (unsent + bytes > this.#maxUnsentBytes) {
      this.#drop(DropReason.slowClient, unsent);
      return;
    }
    this.#queue.push({ message, bytes });
    this.#queuedBytes += bytes;
    void this.#pump();
  }

  async #pump(): Promise<void> {
    if (this.#writing) return;
    this.#writing = true;
    try {
      for (;;) {
        const next = this.#queue.shift();
        if (next === undefined || this.#dropped !== undefined) return;
        this.#queuedBytes -= next.bytes;
        await this.#sink.send(next.message);
      }
    } catch {
      // The connection closed under the write: its close handler unsubscribes the client.
    } finally {
      this.#writing = false;
    }
  }

  #drop(reason: DropReason, unsentBytes: number): void {
    this.#dropped = reason;
    this.#queue.length = 0;
    this.#queuedBytes = 0;
    this.#onDrop(reason, unsentBytes);
    this.#sink.destroy();
  }
}

/** The bytes `message` takes on the wire (`event:`, `data:` and `retry:` lines), near enough. */
function sizeOf(message: FeedMessage): number {
  const data = message.data === undefined ? 0 : Buffer.byteLength(JSON.stringify(message.data));
  return data + (message.event?.length ?? 0) + 24;
}
