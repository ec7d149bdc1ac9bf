// Block sync: a node behind its peers fetches the committed blocks it lacks, in order, and
// applies each only after checking its certificate against the validator set it computes
// itself and re-executing it. Runs at start, on demand (consensus asks when it sees the chain
// ahead of it), and on a timer: every `intervalMs` while the chain moves, slowing down (doubling
// up to `idleIntervalMs`) while polls find nobody ahead and no consensus message arrives — only
// where `mayIdle` says the node hears of every height by consensus messages. An idle devnet's
// nodes asked every peer for its height twice a second for nothing; a node that missed a decision
// still asks within `intervalMs` of the last message it got.
import type { CommittedBlock } from './block.ts';
import type { PeerClient } from './p2p-client.ts';
import { parseCommittedBlock } from './wire.ts';

export interface PeerStatus {
  nodeId: string;
  genesisHash: string;
  height: number;
}

export interface BlockSyncOptions {
  client: PeerClient;
  nodeId: string;
  genesisHash: () => string;
  peers: () => string[];
  /** Last committed height. */
  height: () => number;
  /** Verifies and commits the next block; returns why it was rejected. */
  apply: (block: Omit<CommittedBlock, 'hash'>) => string | undefined;
  markSelf: (peer: string) => void;
  warn: (details: object, message: string) => void;
  /** The poll's period while the chain moves. */
  intervalMs: number;
  /** The longest period while it does not (default `intervalMs`: no slowing down). */
  idleIntervalMs?: number;
  /**
   * Whether this node may slow down now: only a node that hears of every new height by consensus
   * messages (a member of the active set) can. Default: always.
   */
  mayIdle?: () => boolean;
}

/** Blocks per request. */
const BATCH = 50;

export class BlockSync {
  readonly #options: BlockSyncOptions;
  #running: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  /** When the pending poll fires (ms since the epoch). */
  #dueAt = 0;
  /** The period of the next poll: `intervalMs`, doubled after each poll that found nothing. */
  #periodMs: number;
  #stopped = false;

  constructor(options: BlockSyncOptions) {
    this.#options = options;
    this.#periodMs = options.intervalMs;
  }

  /** Syncs now, then polls (see the file's header for how often). */
  start(): void {
    void this.request();
    this.#schedule(this.#options.intervalMs);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  /** The period of the next poll (`GET /v1/debug/state` shows it). */
  get pollMs(): number {
    return this.#periodMs;
  }

  /** The chain moves (a consensus message arrived): poll at the fast period again. */
  activity(): void {
    this.#periodMs = this.#options.intervalMs;
    if (this.#timer !== undefined && this.#dueAt > Date.now() + this.#periodMs)
      this.#schedule(this.#periodMs);
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#dueAt = Date.now() + delayMs;
    this.#timer = setTimeout(() => void this.#poll(), delayMs);
    this.#timer.unref();
  }

  async #poll(): Promise<void> {
    const before = this.#options.height();
    await this.request();
    const idleMax =
      this.#options.mayIdle?.() === false
        ? this.#options.intervalMs
        : (this.#options.idleIntervalMs ?? this.#options.intervalMs);
    // Blocks came: the chain moves. Nothing came: ask less often, up to the idle period.
    this.#periodMs =
      this.#options.height() > before
        ? this.#options.intervalMs
        : Math.min(idleMax, this.#periodMs * 2);
    this.#schedule(this.#periodMs);
  }

  /** Runs a sync pass (coalesced with one already running). Resolves when it has finished. */
  request(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#loop().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #loop(): Promise<void> {
    for (;;) {
      this.#again = false;
      await this.#syncOnce();
      if (!this.#shouldRepeat()) return;
    }
  }

  /** A request arrived while a pass ran (it may have missed what prompted it). */
  #shouldRepeat(): boolean {
    return this.#again && !this.#stopped;
  }

  async #syncOnce(): Promise<void> {
    const { client, nodeId } = this.#options;
    const statuses = await Promise.all(
      this.#options.peers().map(async (peer) => {
        try {
          const status = (await client.get(peer, '/p2p/v1/status', 1500)) as PeerStatus;
          if (status.nodeId === nodeId) {
            this.#options.markSelf(peer);
            return undefined;
          }
          if (status.genesisHash !== this.#options.genesisHash()) return undefined;
          return Number.isSafeInteger(status.height) ? { peer, height: status.height } : undefined;
        } catch {
          return undefined;
        }
      }),
    );
    const ahead = statuses
      .filter((s): s is { peer: string; height: number } => s !== undefined)
      .filter((s) => s.height > this.#options.height())
      .sort((a, b) => b.height - a.height);
    for (const { peer, height } of ahead) {
      await this.#fetchFrom(peer, height);
      if (this.#stopped || this.#options.height() >= height) return;
    }
  }

  async #fetchFrom(peer: string, target: number): Promise<void> {
    while (!this.#stopped && this.#options.height() < target) {
      const from = this.#options.height() + 1;
      const to = Math.min(target, from + BATCH - 1);
      let body: unknown;
      try {
        body = await this.#options.client.get(peer, `/p2p/v1/blocks?from=${from}&to=${to}`, 15_000);
      } catch {
        return;
      }
      const blocks = (body as { blocks?: unknown } | undefined)?.blocks;
      if (!Array.isArray(blocks) || blocks.length === 0) return;
      for (const raw of blocks) {
        const block = parseCommittedBlock(raw);
        if (block === undefined) return;
        const height = block.block.header.height;
        if (height <= this.#options.height()) continue;
        const problem = this.#options.apply(block);
        if (problem !== undefined) {
          this.#options.warn({ peer, height, problem }, 'rejected a synced block');
          return;
        }
      }
    }
  }
}
