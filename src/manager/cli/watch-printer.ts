// What `cluster-manager watch` prints: one line per change — a phase, an action, a pause, a
// chain that stops making blocks or starts again — each with the time and the chain height.
// Heights alone are printed only on request (`--heights`); `--json` prints every event as is.
// What the server sends is not trusted: data that is not an object reads as empty, and control
// characters (terminal escapes) are printed as \u escapes.
import { printable } from './event-stream.ts';

/** A chain is called quiet once no height came for this long. */
export const QUIET_AFTER_MS = 10_000;

type EventData = Record<string, string | number | boolean | null | undefined>;

export interface WatchPrinterOptions {
  out: (line: string) => void;
  server: string;
  heights: boolean;
  json: boolean;
  /** The clock (tests); Date.now by default. */
  now?: () => number;
  quietAfterMs?: number;
}

export class WatchPrinter {
  readonly #o: WatchPrinterOptions;
  readonly #now: () => number;
  #height: number | undefined;
  #heightAt: number;
  #quiet = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: WatchPrinterOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#heightAt = this.#now();
    if (!options.json) {
      this.#timer = setInterval(() => this.tick(), 1_000);
      this.#timer.unref();
    }
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  /** Prints the quiet notice once no height came for a while (called every second). */
  tick(): void {
    const quietFor = this.#now() - this.#heightAt;
    if (this.#quiet || this.#height === undefined) return;
    if (quietFor < (this.#o.quietAfterMs ?? QUIET_AFTER_MS)) return;
    this.#quiet = true;
    this.#line(
      `no new block for ${Math.round(quietFor / 1000)} s (a manual pacemaker makes blocks only on trigger-view or scale --drive)`,
    );
  }

  event(event: string, data: unknown): void {
    if (this.#o.json) {
      this.#o.out(JSON.stringify({ time: new Date(this.#now()).toISOString(), event, data }));
      return;
    }
    const d = (typeof data === 'object' && data !== null ? data : {}) as EventData;
    switch (event) {
      case 'hello':
        this.#height = typeof d.height === 'number' ? d.height : undefined;
        this.#heightAt = this.#now();
        this.#line(
          `following ${this.#o.server}${d.paused === true ? ' (the manager is PAUSED)' : ''}`,
        );
        return;
      case 'height': {
        this.#height = typeof d.height === 'number' ? d.height : this.#height;
        this.#heightAt = this.#now();
        if (this.#quiet) {
          this.#quiet = false;
          this.#line('blocks again');
        } else if (this.#o.heights) this.#line('new block');
        return;
      }
      case 'phase':
        this.#line(
          `${String(d.id ?? d.key)} ${String(d.from ?? '-')} → ${String(d.to)}: ${String(d.reason)}`,
        );
        return;
      case 'action':
        this.#line(
          `${String(d.validatorId)} ${String(d.kind)} ${String(d.state)}` +
            `${d.txHash ? ` ${String(d.txHash).slice(0, 16)}` : ''}${d.errorCode ? ` ${String(d.errorCode)}` : ''}`,
        );
        return;
      case 'paused':
        this.#line(d.paused === true ? 'paused' : 'resumed');
        return;
      default:
        return;
    }
  }

  #line(text: string): void {
    const time = new Date(this.#now()).toISOString().slice(11, 19);
    const height = this.#height === undefined ? '' : ` h${this.#height}`;
    this.#o.out(`${time}${height} ${printable(text)}`);
  }
}
