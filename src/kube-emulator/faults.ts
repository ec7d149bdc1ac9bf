// Fault injection: switches a test pulls to make the API misbehave the way real clusters do.
import type { Store } from './store.ts';
import { internalError, tooManyRequests, type ApiError } from './status-errors.ts';
import type { WatchHub } from './api-server/watch-hub.ts';

export interface RestartOptions {
  /** How far the resourceVersion counter jumps (default 1,000,000). */
  rvJump?: number;
  /** How open connections die: a reset (clients see an error) or a clean end (default 'reset'). */
  connections?: 'reset' | 'end';
}

/** The fault switches of a running emulator (also reachable over HTTP under `/_emulator/`). */
export interface Faults {
  /** Answers the next `count` API requests (not control routes) with 500 or 429. */
  failNext(count: number, code?: 500 | 429): void;
  /** Delays every API request by `ms` (0 turns it off). */
  setLatency(ms: number): void;
  /** The next `count` watches get 200, an ERROR 410 Expired event, then the end of the stream. */
  expireNextWatch(count?: number): void;
  /** Resets the socket of every open watch. */
  resetWatches(): void;
  /** Ends every open watch cleanly. */
  endWatches(): void;
  /** Holds watch events back (streams stay open) until `resumeEvents`. */
  pauseEvents(): void;
  resumeEvents(): void;
  /** Simulates an apiserver restart: connections dropped, history lost, RV counter jumped. */
  restart(options?: RestartOptions): void;
}

/** The state behind the switches, read by the HTTP layer on every request. */
export class FaultState implements Faults {
  #failures: { code: 500 | 429 }[] = [];
  latencyMs = 0;
  readonly #hub: WatchHub;
  readonly #store: Store;
  readonly #dropConnections: () => void;

  constructor(options: { hub: WatchHub; store: Store; dropConnections: () => void }) {
    this.#hub = options.hub;
    this.#store = options.store;
    this.#dropConnections = options.dropConnections;
  }

  /** The failure to answer the current request with, if one is armed. */
  takeFailure(): ApiError | undefined {
    const next = this.#failures.shift();
    if (next === undefined) return undefined;
    return next.code === 429 ? tooManyRequests() : internalError('injected by the emulator');
  }

  failNext(count: number, code: 500 | 429 = 500): void {
    for (let i = 0; i < count; i++) this.#failures.push({ code });
  }

  setLatency(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  expireNextWatch(count = 1): void {
    this.#hub.expireNext(count);
  }

  resetWatches(): void {
    this.#hub.resetAll();
  }

  endWatches(): void {
    this.#hub.endAll();
  }

  pauseEvents(): void {
    this.#hub.pause();
  }

  resumeEvents(): void {
    this.#hub.resume();
  }

  restart(options: RestartOptions = {}): void {
    if (options.connections === 'end') this.#hub.endAll();
    else {
      this.#hub.resetAll();
      this.#dropConnections();
    }
    this.#store.jump(options.rvJump ?? 1_000_000);
  }
}
