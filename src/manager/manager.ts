// The manager: given its chain port, discovery source, elector and hooks (built by compose.ts from
// the configuration), it builds its parts — journal binding, chain view, discovery intake, leader
// election (parts/leader-election.ts) and the reconcile loop (parts/reconcile-loop.ts: work
// queue, reconciler, send fence, hook gate) — wires them so that every change only enqueues
// validator ids, and hands out the read model (manager-read-model.ts). Each part is a Runnable
// (runnable.ts); compose.ts orders them (managerStartOrder): they start in order and stop in
// reverse.
import { EventEmitter } from 'node:events';
import type { ChainAdapter } from './chain/adapter.ts';
import { ChainView } from './chain/chain-view.ts';
import type { ChainPort } from './chain/port.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { DiscoveryDeps, DiscoverySource } from './discovery/port.ts';
import type { HookRunnerPorts } from './hooks/hook-runner.ts';
import type { HookDefinition } from './hooks/hooks-file.ts';
import { KeyObservations } from './keys/key-observations.ts';
import { KeyStore } from './keys/key-store.ts';
import type { Logger } from './logger.ts';
import { ManagerReadModel } from './manager-read-model.ts';
import { Metrics } from './metrics.ts';
import type { DesiredState } from './model.ts';
import { DesiredIntake } from './parts/desired-intake.ts';
import { JournalBinding } from './parts/journal-binding.ts';
import { LeaderElection, type ElectorFactory } from './parts/leader-election.ts';
import type { ManagerCore } from './parts/manager-core.ts';
import { ReconcileLoop } from './parts/reconcile-loop.ts';
import { ParticipationRecord } from './participation/record.ts';
import { journalPauseRecord } from './pause/journal-pause-record.ts';
import { PauseState } from './pause/pause-state.ts';
import type { Decision } from './planner/plan.ts';
import type { ReadModel, ReadModelEvents } from './read-model.ts';
import { ActionBook } from './reconcile/action-book.ts';
import { runnable, Runnables, type Runnable } from './runnable.ts';

/**
 * What a manager is built from. Each collaborator is made outside (compose.ts's `composeManager`
 * builds the defaults from the configuration): the manager holds no chain or cluster logic.
 */
export interface ManagerOptions {
  config: Config;
  logger: Logger;
  /** The chain: reads, sending, rules, capabilities, id format (chain/port.ts). */
  chain: ChainPort;
  /** Builds the discovery source from what the manager shares with it (discovery/port.ts). */
  discovery: (deps: DiscoveryDeps) => DiscoverySource;
  /** Builds the elector (kube/lease-election.ts); undefined: no election, this manager leads. */
  election?: ElectorFactory | undefined;
  /** The hooks, already read and checked. */
  hooks: readonly HookDefinition[];
  clock?: Clock;
  metrics?: Metrics;
  /** How hooks reach the outside (default: execa and fetch). */
  hookPorts?: Partial<HookRunnerPorts>;
  /** The parts in start order (compose.ts's `managerStartOrder`); they stop in reverse. */
  order: (parts: ManagerParts) => readonly Runnable[];
}

/** The parts of a manager (runnable.ts), by role. */
export interface ManagerParts {
  /** The journal: opened when built; closed last. */
  journal: Runnable;
  /** Keybases a killed manager left on disk, removed before anything sends. */
  leftovers: Runnable;
  /** The chain view's polling. */
  chainView: Runnable;
  /** Discovery and the desired state taken from it; its start waits for the caches. */
  discovery: Runnable;
  /** The elector (when the manager elects): the leader's workers start when it leads. */
  election: Runnable;
  /** The work queue and reconciler, the resync timer, hooks and node-key reads. */
  loop: Runnable;
}

export type { PhaseChange } from './phase-tracker.ts';

/** The events a manager emits: the read model's (read-model.ts). */
export type ManagerEvents = ReadModelEvents;

export class Manager {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly events = new EventEmitter<ManagerEvents>();
  readonly chain: ChainView;
  /** Who signed, proposed and missed each height the chain view read (participation/record.ts). */
  readonly participation = new ParticipationRecord();
  readonly book: ActionBook;
  /** The chain port: reads, sending, rules and capabilities (chain/port.ts). */
  readonly chainPort: ChainPort;
  /** The chain port's sender behind the send fence (parts/reconcile-loop.ts). */
  readonly adapter: ChainAdapter;
  readonly keys: KeyStore;
  /** When each id's current key was first seen (in the journal too): a node started before it is stale. */
  readonly keyObservations: KeyObservations;
  /** Where the desired validators and their keys come from (discovery/port.ts). */
  readonly discovery: DiscoverySource;
  /** The journal, its health, and its binding to the chain (parts/journal-binding.ts). */
  readonly #journal: JournalBinding;
  /** Discovery, and the desired state and keys taken from it (parts/desired-intake.ts). */
  readonly #intake: DesiredIntake;
  /** Who leads (parts/leader-election.ts). */
  readonly #election: LeaderElection;
  /** The work queue, reconciler, fence, hooks and resync (parts/reconcile-loop.ts). */
  readonly #loop: ReconcileLoop;
  /** Whether the managers are paused: on the Lease, or in the journal (pause/pause-state.ts). */
  readonly #pause: PauseState;
  readonly #read: ManagerReadModel;
  #started = false;
  #stopping = false;
  /** The parts, started in compose.ts's order and stopped in reverse. */
  readonly #runnables: Runnables;

  constructor(options: ManagerOptions) {
    const { config, logger } = options;
    this.config = config;
    this.logger = logger;
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? new Metrics({ defaultMetrics: true });
    this.chainPort = options.chain;
    this.keys = new KeyStore(this.chainPort.ids, this.chainPort.keys);
    const { clock, metrics } = this;
    this.discovery = options.discovery({ ids: this.chainPort.ids, clock, logger, metrics });
    this.#journal = new JournalBinding({
      path: config.journalPath,
      maxBytes: config.journalMaxBytes,
      reads: this.chainPort.reads,
      clock,
      logger,
    });
    const journal = this.#journal.journal;
    this.book = new ActionBook(journal);
    this.keyObservations = new KeyObservations({ store: journal, clock });
    this.#pause = new PauseState({
      record: this.discovery.pauseRecord?.() ?? journalPauseRecord(journal),
      clock,
      logger,
      onChange: (paused) => this.#onPausedChange(paused),
    });
    this.chain = this.#chainView();
    metrics.chainTrusted.set(1);
    this.#election = new LeaderElection(
      options.election,
      {
        onStartedLeading: () => this.#loop.startWorkers(),
        onStoppedLeading: () => void this.#loop.cancelWorkers(),
        onPauseRead: (paused, startedAt) => this.#pause.observe(paused, startedAt),
        annotations: () => this.#pause.annotations(),
      },
      { clock, logger, identity: config.identity },
    );
    const core: ManagerCore = {
      config,
      logger,
      clock,
      metrics,
      chainPort: this.chainPort,
      chain: this.chain,
      discovery: this.discovery,
      journal: this.#journal,
      book: this.book,
      keys: this.keys,
      keyObservations: this.keyObservations,
      pause: this.#pause,
      election: this.#election,
      events: this.events,
      desired: () => this.desired(),
    };
    this.#read = new ManagerReadModel({ ...core, loop: () => this.#loop });
    this.#loop = new ReconcileLoop({
      ...core,
      hooks: options.hooks,
      hookPorts: options.hookPorts,
      isSynced: () => this.#read.isSynced(),
      minimumSet: () => this.#read.minimumSet(),
    });
    this.adapter = this.#loop.adapter;
    this.#intake = new DesiredIntake({
      ...core,
      work: this.#loop,
      journalFailed: (error) => this.#journal.health.failed(error, clock.now()),
    });
    this.#bindJournal();
    this.#runnables = new Runnables(options.order(this.#parts()));
  }

  /** Starts the parts in compose.ts's order; resolves once the caches have synced. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.logger.info(
      { ...this.discovery.describe(), mode: this.adapter.transport.name },
      'starting',
    );
    await this.#runnables.start();
  }

  /** Stops intake, then the parts in reverse: in-flight work finishes, the lease goes, it closes. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#intake.halt();
    this.#loop.halt();
    try {
      await this.#runnables.stop();
      // Built before start (the parts read the journal and may queue work): undone even if the
      // manager never started.
      if (!this.#started) await this.#loop.stop();
    } finally {
      await this.#journal.stop();
      this.logger.info('stopped');
    }
  }

  /**
   * What the readers (scaler, status, control plane) get: a read-only view of this manager's
   * state and events (manager-read-model.ts), never the manager itself.
   */
  readModel(): ReadModel {
    return this.#read;
  }

  /** Discovery synced, keys read, the chain answered once, and the journal is this chain's. */
  isSynced(): boolean {
    return this.#read.isSynced();
  }

  /** Ready = synced, and (when leading or without election) the work queue runs. */
  isReady(): boolean {
    return this.#read.isReady();
  }

  get paused(): boolean {
    return this.#pause.paused;
  }

  desired(): DesiredState {
    return this.#intake.desired();
  }

  plan(): Decision[] {
    return this.#loop.plan();
  }

  /**
   * Pauses or resumes every manager: answered by the leader once recorded where all of them read
   * it; a follower refuses (NOT_LEADER), and nothing changes when it cannot be recorded.
   */
  async setPaused(paused: boolean): Promise<void> {
    this.#election.requireLeader();
    await this.#pause.set(paused);
  }

  /** Re-queues every known validator. */
  enqueueAll(): void {
    this.#loop.enqueueAll();
  }

  /** Resolves when the queue is empty and idle (tests). */
  async drained(): Promise<void> {
    await this.#loop.drained();
  }

  /** The manager's parts, each a Runnable, for compose.ts to order. */
  #parts(): ManagerParts {
    return {
      journal: this.#journal,
      // A manager killed in a CLI call left its keybase (a key on disk): removed first.
      leftovers: runnable('leftover keybases', async () => {
        const removed = (await this.adapter.removeLeftovers?.()) ?? 0;
        if (removed > 0) this.logger.warn({ removed }, 'removed keybases left by a killed manager');
      }),
      chainView: runnable(
        'chain view',
        () => this.chain.start(),
        () => this.chain.stop(),
      ),
      discovery: this.#intake,
      election: this.#election,
      loop: this.#loop,
    };
  }

  /** The chain view: what it reads goes to the loop, the journal and the participation record. */
  #chainView(): ChainView {
    return new ChainView({
      reads: this.chainPort.reads,
      clock: this.clock,
      logger: this.logger.child({ component: 'chain' }),
      pollIntervalMs: this.config.chainPollIntervalMs,
      highWater: this.#journal.highWater(),
      memory: this.#journal.memory(),
      readGenesisSet: true,
      ownTransactions: () => this.book.ownTransactions(),
      listener: {
        onBlocks: (txs) => this.#loop.onBlocks(txs),
        onHeight: (height, changed) => this.#loop.onHeight(height, changed),
        onHealth: () => this.#loop.refreshPhases(),
        onTrust: (trusted, reason) => this.#loop.onTrust(trusted, reason),
        onHighWater: (mark) => this.#journal.recordHighWater(mark),
        onMemory: (memory) => this.#journal.recordMemory(memory),
        onBlock: (block) => this.participation.addBlock(block),
        onRows: (height, rows) => this.participation.addRows(height, rows),
      },
    });
  }

  /** The journal's writes and its binding to the chain: what each change means for the parts. */
  #bindJournal(): void {
    this.book.onChange((record) => {
      this.#journal.health.wrote();
      this.events.emit('action', record);
    });
    this.#journal.listen({
      onReplaced: () => {
        this.book.reload();
        // This chain is judged afresh: the highest height seen was the other chain's.
        this.chain.resetHighWater();
        // When the keys were seen is the cluster's, not the chain's: kept in the new journal.
        try {
          this.keyObservations.rewrite();
        } catch (error: unknown) {
          this.logger.warn({ err: error }, 'could not record when the keys were seen');
        }
        // A pause kept in the journal (static discovery) is the new journal's; the Lease's stays.
        void this.#pause.load();
      },
      onChecked: () => {
        this.#loop.checkSynced();
        this.#loop.refreshPhases();
      },
    });
  }

  #onPausedChange(paused: boolean): void {
    this.logger.info(
      { paused, record: this.#pause.where },
      paused ? 'paused: no action will be taken' : 'resumed',
    );
    this.events.emit('paused', paused);
    if (!paused) this.#loop.enqueueAll();
    this.#loop.refreshPhases();
  }
}
