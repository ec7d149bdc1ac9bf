// When the chain made its blocks: the timestamp in a block's header, read on demand and cached
// per height. `status` shows the last block's age from it, and a scale that waits on a chain
// that makes no blocks (a manual pacemaker without --drive) is told so early.
import type { PocketRpcClient } from '../../pocket/index.ts';

/**
 * Parses a block header's timestamp: Go's `time.Time.String()` as V1's RPC writes it
 * (`2006-01-02 15:04:05.999999999 -0700 MST`, maybe with a ` m=+…` monotonic suffix) or RFC 3339.
 * Undefined when the text is neither.
 */
export function parseChainTime(text: string): number | undefined {
  const go = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? ([+-])(\d\d)(\d\d)\b/.exec(text);
  if (go !== null) {
    const [, date, time, fraction = '', sign, hours, minutes] = go;
    const millis = fraction === '' ? '' : fraction.slice(0, 4).padEnd(4, '0');
    const ms = Date.parse(`${date}T${time}${millis}${sign}${hours}:${minutes}`);
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(text)) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

const KEEP = 8;

/** Block times by height, fetched once each (a few recent heights are kept). */
export class BlockClock {
  readonly #rpc: PocketRpcClient;
  readonly #times = new Map<number, Promise<number | undefined>>();

  constructor(rpc: PocketRpcClient) {
    this.#rpc = rpc;
  }

  /** The time block `height` was made, per its header; undefined before block 1 or if unknown. */
  timeOf(height: number): Promise<number | undefined> {
    if (height < 1) return Promise.resolve(undefined);
    let time = this.#times.get(height);
    if (time === undefined) {
      time = this.#rpc
        .block(height, { timeoutMs: 5_000 })
        .then((block) => parseChainTime(block.block_header.timestamp))
        .catch(() => {
          this.#times.delete(height); // asked again next time
          return undefined;
        });
      this.#times.set(height, time);
      for (const old of this.#times.keys()) if (this.#times.size > KEEP) this.#times.delete(old);
    }
    return time;
  }

  /** The time of `height` if it has been read already (no request). */
  async known(height: number): Promise<number | undefined> {
    return this.#times.has(height) ? this.timeOf(height) : undefined;
  }
}

const clocks = new WeakMap<PocketRpcClient, BlockClock>();

/** The one BlockClock of a chain client (the control plane and the scaler share it). */
export function blockClockOf(rpc: PocketRpcClient): BlockClock {
  let clock = clocks.get(rpc);
  if (clock === undefined) {
    clock = new BlockClock(rpc);
    clocks.set(rpc, clock);
  }
  return clock;
}
