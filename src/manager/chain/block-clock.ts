// When the chain made its blocks: the timestamp in a block's header, read on demand and cached
// per height. `status` shows the last block's age from it, and a scale that waits on a chain
// that makes no blocks (a manual pacemaker without --drive) is told so early.
import type { ChainReads } from './port.ts';

const KEEP = 8;

/** Block times by height, fetched once each (a few recent heights are kept). */
export class BlockClock {
  readonly #reads: Pick<ChainReads, 'block'>;
  readonly #times = new Map<number, Promise<number | undefined>>();

  constructor(reads: Pick<ChainReads, 'block'>) {
    this.#reads = reads;
  }

  /** The time block `height` was made, per its header; undefined before block 1 or if unknown. */
  timeOf(height: number): Promise<number | undefined> {
    if (height < 1) return Promise.resolve(undefined);
    let time = this.#times.get(height);
    if (time === undefined) {
      time = this.#reads
        .block(height, { timeoutMs: 5_000 })
        .then((block) => block.time)
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

const clocks = new WeakMap<object, BlockClock>();

/** The one BlockClock of a chain's reads (the control plane and the scaler share it). */
export function blockClockOf(reads: Pick<ChainReads, 'block'>): BlockClock {
  let clock = clocks.get(reads);
  if (clock === undefined) {
    clock = new BlockClock(reads);
    clocks.set(reads, clock);
  }
  return clock;
}
