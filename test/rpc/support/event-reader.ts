// Reads GET /v1/events over a real connection (fetch streaming) and lets a test wait for the
// event it expects, with a timeout that reports what did arrive.
import { readEventStream } from '../../../src/manager/cli/event-stream.ts';

export interface ServerEvent {
  event: string;
  data: Record<string, unknown>;
}

export class EventReader {
  readonly events: ServerEvent[] = [];
  readonly #controller = new AbortController();
  readonly #waiters = new Set<() => void>();
  #ended = false;
  readonly done: Promise<void>;

  private constructor(body: ReadableStream<Uint8Array>) {
    this.done = this.#read(body);
  }

  /** Opens the stream; resolves once the response headers are in. */
  static async open(
    url: string,
    token: string,
  ): Promise<{ reader: EventReader; contentType: string | null }> {
    const controller = new AbortController();
    const response = await fetch(`${url}/v1/events`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    if (!response.ok || response.body === null)
      throw new Error(`GET /v1/events answered ${response.status}`);
    const reader = new EventReader(response.body);
    reader.#controller.signal.addEventListener('abort', () => controller.abort());
    return { reader, contentType: response.headers.get('content-type') };
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Waits for an event (after index `from`) that `match` accepts. */
  async next(
    match: (event: ServerEvent) => boolean,
    options: { from?: number; timeoutMs?: number; what: string },
  ): Promise<ServerEvent> {
    const deadline = Date.now() + (options.timeoutMs ?? 15_000);
    for (;;) {
      const found = this.events.slice(options.from ?? 0).find(match);
      if (found !== undefined) return found;
      if (this.#ended) throw new Error(`the stream ended before ${options.what}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no ${options.what} within ${options.timeoutMs ?? 15_000} ms; got ${JSON.stringify(this.events.slice(-10))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done(): void {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        }
        const waiters = this.#waiters;
        waiters.add(done);
      });
    }
  }

  close(): void {
    this.#controller.abort();
  }

  async #read(body: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const { event, data } of readEventStream(body)) {
        this.events.push({ event, data: data as Record<string, unknown> });
        for (const wake of [...this.#waiters]) wake();
      }
    } catch {
      // aborted by close()
    } finally {
      this.#ended = true;
      for (const wake of [...this.#waiters]) wake();
    }
  }
}
