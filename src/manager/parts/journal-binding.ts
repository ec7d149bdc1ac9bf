// The journal binding, a part of the manager (runnable.ts): opens the journal (a damaged one set
// aside, journal-open.ts), tracks its health (journal-health.ts), checks it against the chain
// once the chain answers and binds it once the chain has a block (chain-binding.ts), and keeps
// what the chain view must remember across restarts (the highest height seen and what it
// learned, chain-memory.ts). Stopping flushes that memory and closes the journal.
import { chainFactsOf } from '../chain/chain-facts.ts';
import {
  CHAIN_MEMORY_SETTING,
  ChainMemoryWriter,
  parseChainMemory,
} from '../chain/chain-memory.ts';
import type { ChainMemory } from '../chain/chain-memory.ts';
import type { HighWater } from '../chain/chain-view.ts';
import type { ChainReads } from '../chain/port.ts';
import type { Clock } from '../clock.ts';
import { bindJournalToChain, type BindingOutcome } from '../journal/chain-binding.ts';
import type { ChainIdentity, Journal } from '../journal/journal.ts';
import { JournalHealth, type JournalFailure } from '../journal/journal-health.ts';
import { openJournal } from '../journal/journal-open.ts';
import type { Logger } from '../logger.ts';
import type { Runnable } from '../runnable.ts';

/** The highest chain height seen and its block's state hash, kept across restarts. */
const HIGH_WATER_SETTING = 'chain.highWater';
/** The high-water mark is written at most this often (a restart may lose this much of it). */
const HIGH_WATER_WRITE_MS = 2_000;
/** A failed check against the chain is tried again after this long. */
const CHECK_RETRY_MS = 1_000;

export interface JournalBindingOptions {
  path: string;
  maxBytes: number;
  /** The chain's reads, for its identity (chain-facts.ts). */
  reads: ChainReads;
  clock: Clock;
  logger: Logger;
}

/** What the manager does when the binding changes what it read from the journal. */
export interface JournalBindingListener {
  /** The journal was another chain's and a new one replaced it: read its state again. */
  onReplaced(): void;
  /** The journal was checked against the chain for the first time. */
  onChecked(): void;
}

/** What the journal is bound to, what was set aside, and its last failed write. */
export interface JournalState {
  chain: ChainIdentity | undefined;
  setAside: { to: string; reason: string } | undefined;
  failure: JournalFailure | undefined;
}

export class JournalBinding implements Runnable {
  readonly name = 'journal binding';
  readonly journal: Journal;
  /** The journal's last failed write, until one succeeds (journal/journal-health.ts). */
  readonly health = new JournalHealth();
  readonly #options: JournalBindingOptions;
  #listener: JournalBindingListener | undefined;
  /** Checked against the chain (chain-binding.ts); nothing acts before. */
  #checked = false;
  #checking = false;
  /** The chain had no block when checked: the journal is bound once it has. */
  #bindPending = false;
  #setAside: { to: string; reason: string } | undefined;
  #chain: ChainIdentity | undefined;
  #stopped = false;
  #highWaterWrittenAt = Number.NEGATIVE_INFINITY;
  /** What the chain view learned, written at most every 2 s (chain-memory.ts). */
  readonly #memory: ChainMemoryWriter;

  /** Opens the journal now: the parts built after it read and write it before anything starts. */
  constructor(options: JournalBindingOptions) {
    this.#options = options;
    const { clock, logger } = options;
    const opened = openJournal(options.path, clock, { maxBytes: options.maxBytes });
    this.journal = opened.journal;
    this.#setAside = opened.setAside;
    if (opened.setAside !== undefined)
      logger.warn(
        { journal: options.path, setAsideTo: opened.setAside.to, code: 'JOURNAL_CORRUPT' },
        opened.setAside.reason,
      );
    this.journal.onGroupFailure((error) => this.health.failed(error, clock.now()));
    this.#memory = new ChainMemoryWriter({
      write: (raw) => this.journal.setSetting(CHAIN_MEMORY_SETTING, raw),
      now: () => clock.now(),
      intervalMs: HIGH_WATER_WRITE_MS,
      onError: (error) => logger.warn({ err: error }, 'could not record what the chain read'),
    });
  }

  /** Who hears of a replaced journal and of the first check (set once, before start). */
  listen(listener: JournalBindingListener): void {
    this.#listener = listener;
  }

  /** The journal is already open: starting is nothing more. */
  start(): Promise<void> {
    return Promise.resolve();
  }

  /** Flushes what the chain view learned and closes the journal. */
  stop(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#stopped = true;
    this.#memory.flush();
    this.journal.close();
    return Promise.resolve();
  }

  /** Whether the journal was checked against the chain (and is this chain's). */
  get checked(): boolean {
    return this.#checked;
  }

  state(): JournalState {
    return { chain: this.#chain, setAside: this.#setAside, failure: this.health.failure };
  }

  /** The highest height seen, as recorded (the chain view starts from it). */
  highWater(): HighWater | undefined {
    return readHighWater(this.journal.getSetting(HIGH_WATER_SETTING));
  }

  /** What the chain view learned, as recorded. */
  memory(): ChainMemory | undefined {
    return parseChainMemory(this.journal.getSetting(CHAIN_MEMORY_SETTING));
  }

  /** Keeps the highest height seen, at most every 2 s, so a restarted manager is not fooled. */
  recordHighWater(mark: HighWater): void {
    const now = this.#options.clock.now();
    if (now - this.#highWaterWrittenAt < HIGH_WATER_WRITE_MS) return;
    this.#highWaterWrittenAt = now;
    try {
      this.journal.setSetting(HIGH_WATER_SETTING, JSON.stringify(mark));
    } catch (error: unknown) {
      this.health.failed(error, now);
      this.#options.logger.warn({ err: error }, 'could not record the chain height');
    }
  }

  /** Offers what the chain view learned (written at most every 2 s). */
  recordMemory(memory: ChainMemory): void {
    this.#memory.offer(memory);
  }

  /**
   * Compares the journal with the chain once it answers (and binds it once the chain has a
   * block); a journal of another chain is set aside and the listener reads its state again from
   * the new one. Retried after a second when the chain does not answer.
   */
  check(): void {
    if (this.#checking || (this.#checked && !this.#bindPending)) return;
    this.#checking = true;
    const { clock, logger } = this.#options;
    bindJournalToChain(this.journal, chainFactsOf(this.#options.reads))
      .then((outcome) => this.#onBinding(outcome))
      .catch((error: unknown) => {
        this.health.failed(error, clock.now());
        logger.warn({ err: error }, 'could not check the journal against the chain; retrying');
        if (!this.#stopped) clock.setTimer(() => this.check(), CHECK_RETRY_MS);
      })
      .finally(() => {
        this.#checking = false;
      });
  }

  #onBinding(outcome: BindingOutcome): void {
    const { logger } = this.#options;
    this.#bindPending = outcome.kind === 'pending';
    if (outcome.kind !== 'pending') this.#chain = outcome.chain;
    if (outcome.kind === 'set-aside') {
      this.#setAside = { to: outcome.setAsideTo, reason: outcome.reason };
      logger.warn(
        { journal: this.#options.path, setAsideTo: outcome.setAsideTo, reason: outcome.reason },
        'the journal was written for another chain: set aside, starting a new one',
      );
      // The highest height seen was the other chain's (the new journal has none).
      this.#memory.forget();
      this.#listener?.onReplaced();
    } else if (outcome.kind === 'bound')
      logger.info({ chain: outcome.chain }, 'journal bound to the chain');
    if (!this.#checked) {
      this.#checked = true;
      this.#listener?.onChecked();
    }
  }
}

function readHighWater(raw: string | undefined): HighWater | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<HighWater>;
    if (typeof parsed.height === 'number' && typeof parsed.stateHash === 'string')
      return { height: parsed.height, stateHash: parsed.stateHash };
  } catch {
    // an unreadable mark is no mark
  }
  return undefined;
}
