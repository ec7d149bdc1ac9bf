// What the chain view learned from the blocks it read, kept across restarts (issue 29): the last
// height it scanned and that block's state hash, who signed which height last, the genesis set,
// and the newest block's time. A restarted manager reads only the blocks after it: Pocket V1's RPC
// leaks a Postgres read context for every transaction it renders (rpc/utils.go:172-360, a
// `NewReadContext` without `Release`; validator-001 has 50 connections), so re-reading the last
// 50 blocks at every start adds up. The journal keeps it as one setting (it names addresses and
// heights, never a key); a journal set aside for another chain takes it along.

/** The chain view's memory. */
export interface ChainMemory {
  /** The last height scanned, and its block's state hash (the next block must build on it). */
  readonly scanned: number;
  readonly stateHash: string;
  /** Address → highest height at which it signed a committed certificate. */
  readonly signers: ReadonlyMap<string, number>;
  /** The addresses of the genesis set, once read. */
  readonly genesis: readonly string[] | undefined;
  /** The newest block's time (ms), per its header. */
  readonly lastBlockTime: number | undefined;
}

/** The journal setting that holds it. */
export const CHAIN_MEMORY_SETTING = 'chain.memory';

/** As written to the journal. */
export function serializeChainMemory(memory: ChainMemory): string {
  return JSON.stringify({
    v: 1,
    scanned: memory.scanned,
    stateHash: memory.stateHash,
    signers: [...memory.signers],
    genesis: memory.genesis ?? null,
    lastBlockTime: memory.lastBlockTime ?? null,
  });
}

/** Reads it back; anything unreadable is no memory (the view then reads as a fresh start does). */
export function parseChainMemory(raw: string | undefined): ChainMemory | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as Record<string, unknown>;
    const { scanned, stateHash, signers, genesis, lastBlockTime } = parsed;
    if (parsed.v !== 1 || !Number.isSafeInteger(scanned) || typeof stateHash !== 'string')
      return undefined;
    if (!Array.isArray(signers)) return undefined;
    const map = new Map<string, number>();
    for (const entry of signers as unknown[]) {
      if (!Array.isArray(entry)) return undefined;
      const [address, height] = entry as unknown[];
      if (typeof address !== 'string' || !Number.isSafeInteger(height)) return undefined;
      map.set(address, height as number);
    }
    const set =
      Array.isArray(genesis) && genesis.every((a) => typeof a === 'string') ? genesis : undefined;
    return {
      scanned: scanned as number,
      stateHash,
      signers: map,
      genesis: set,
      lastBlockTime: typeof lastBlockTime === 'number' ? lastBlockTime : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * Writes the memory at most every `intervalMs` (each block would be a write otherwise), and the
 * last one on `flush` (a stopping manager). A write lost to a crash costs the next start a re-read
 * of the blocks since the one before: the view checks they build on what it remembers.
 */
export class ChainMemoryWriter {
  readonly #write: (raw: string) => void;
  readonly #now: () => number;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #writtenAt = Number.NEGATIVE_INFINITY;
  #pending: ChainMemory | undefined;

  constructor(options: {
    write: (raw: string) => void;
    now: () => number;
    intervalMs: number;
    /** A failed write (logged by the caller): the memory stays as it was, the view goes on. */
    onError: (error: unknown) => void;
  }) {
    this.#write = options.write;
    this.#now = options.now;
    this.#intervalMs = options.intervalMs;
    this.#onError = options.onError;
  }

  offer(memory: ChainMemory): void {
    this.#pending = memory;
    if (this.#now() - this.#writtenAt >= this.#intervalMs) this.flush();
  }

  /** Drops a memory not written yet (it was another chain's: the journal was set aside). */
  forget(): void {
    this.#pending = undefined;
  }

  flush(): void {
    const memory = this.#pending;
    if (memory === undefined) return;
    this.#pending = undefined;
    this.#writtenAt = this.#now();
    try {
      this.#write(serializeChainMemory(memory));
    } catch (error: unknown) {
      this.#onError(error);
    }
  }
}
