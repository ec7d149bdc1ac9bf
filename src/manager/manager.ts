// The manager: given its chain port, discovery source and hooks (built by compose.ts from the
// configuration), it builds its parts — journal binding, chain view, discovery intake, leader
// election, and the reconcile loop (work queue, reconciler, hook gate) — so that every change only
// enqueues validator ids, and assembles the read model. Each part is a Runnable (runnable.ts);
// compose.ts orders them (managerStartOrder): they start in order and stop in reverse.
import { EventEmitter } from 'node:events';
import type { ChainAdapter } from './chain/adapter.ts';
import { ChainView, type OwnTransaction } from './chain/chain-view.ts';
import { ParticipationRecord } from './participation/record.ts';
import type { ChainPort } from './chain/port.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { DiscoveryDeps, DiscoverySource, SourceStatus } from './discovery/port.ts';
import { JournalBinding, type JournalState } from './parts/journal-binding.ts';
import { HookGate } from './hooks/hook-gate.ts';
import { commandPort, fetchHttpPort } from './hooks/hook-ports.ts';
import type { HookRunnerPorts } from './hooks/hook-runner.ts';
import type { HookDefinition } from './hooks/hooks-file.ts';
import type { EventTarget } from './kube/event-recorder.ts';
import type { LeaderElector } from './kube/leader-election.ts';
import { KeyObservations } from './keys/key-observations.ts';
import { KeyStore } from './keys/key-store.ts';
import { NodeKeys } from './keys/node-keys.ts';
import type { Logger } from './logger.ts';
import { catalogueCode, ManagerError } from './errors.ts';
import { Metrics } from './metrics.ts';
import { PhaseRefresh } from './parts/phase-refresh.ts';
import { runnable, Runnables, type Runnable } from './runnable.ts';
import { DesiredIntake } from './parts/desired-intake.ts';
import type { ReadModel, ReadModelEvents } from './read-model.ts';
import { type ChainCapabilities, type DesiredState, type ValidatorId } from './model.ts';
import { resolveMinimumSet, type MinimumSet } from './planner/minimum-set.ts';
import { quorumNow } from './planner/pacing.ts';
import { addressesOf } from './planner/signers.ts';
import { type ChainTrust, type Decision, type PlanSettings } from './planner/plan.ts';
import { ActionBook } from './reconcile/action-book.ts';
import { pausedOn } from './kube/lease-pause-record.ts';
import { journalPauseRecord } from './pause/journal-pause-record.ts';
import { PauseState } from './pause/pause-state.ts';
import { PausedDepartures } from './pause/paused-departures.ts';
import { Reconciler, type WorldView } from './reconcile/reconciler.ts';
import { fencedSender, SendFence } from './reconcile/send-fence.ts';
import { WorkQueue } from './reconcile/work-queue.ts';

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
  /** The Lease (when discovery elects): the leader's workers start when it leads. */
  election: Runnable;
  /** The work queue and reconciler, the resync timer, hooks and node-key reads. */
  loop: Runnable;
}

export type { PhaseChange } from './phase-tracker.ts';

/** The events a manager emits: the read model's (read-model.ts). */
export type ManagerEvents = ReadModelEvents;

/** A staked row votes while it signed a certificate of the last this many heights. */
const VOTING_WINDOW = 20;

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
  readonly adapter: ChainAdapter;
  readonly keys: KeyStore;
  /** When each id's current key was first seen (in the journal too): a node started before it is stale. */
  readonly keyObservations: KeyObservations;
  readonly nodeHeights = new Map<ValidatorId, { height: number; at: number }>();
  /** What each pod's node says it signs with (keys/node-keys.ts); absent where nodes cannot tell. */
  readonly #nodeKeys: NodeKeys | undefined;
  /** What the chain can do (CM_POCKET_V1_PROFILE). */
  readonly capabilities: ChainCapabilities;

  /** Where the desired validators and their keys come from (discovery/port.ts). */
  readonly discovery: DiscoverySource;
  readonly #queue: WorkQueue;
  readonly #reconciler: Reconciler;
  readonly #elector: LeaderElector | undefined;
  /** Only the leader's passes, in its current term, send (reconcile/send-fence.ts). */
  readonly #fence = new SendFence(() => this.#elector);
  /** The journal, its health, and its binding to the chain (parts/journal-binding.ts). */
  readonly #journal: JournalBinding;
  readonly #hooks: HookGate | undefined;
  /** Discovery, and the desired state and keys taken from it (parts/desired-intake.ts). */
  readonly #intake: DesiredIntake;
  #readModel: ReadModel | undefined;
  /** The plan computed again after changes: phase events, gauges, reports (parts/phase-refresh.ts). */
  readonly #phaseRefreshes: PhaseRefresh;
  /** Whether the managers are paused: on the Lease, or in the journal (pause/pause-state.ts). */
  readonly #pause: PauseState;
  /** Validator pods the cluster removes while paused: reported, looked at when their hold ends. */
  readonly #pausedDepartures: PausedDepartures;
  #wasSynced = false;
  #started = false;
  #stopping = false;
  #cancelResync: (() => void) | undefined;
  /** The parts, started in compose.ts's order and stopped in reverse. */
  readonly #runnables: Runnables;

  constructor(options: ManagerOptions) {
    const { config, logger } = options;
    this.config = config;
    this.logger = logger;
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? new Metrics({ defaultMetrics: true });
    this.#phaseRefreshes = new PhaseRefresh({
      clock: this.clock,
      logger,
      metrics: this.metrics,
      plan: () => this.plan(),
      phaseChanged: (change) => this.events.emit('phase', change),
      warn: (id, reason, message) => {
        const target = this.#eventTarget(id);
        if (target !== undefined)
          void this.discovery.events.record(target, 'Warning', reason, message);
      },
      observers: [
        (decisions) => this.#hooks?.observe(decisions, this.book.latest, this.#canRunHooks()),
        (decisions) =>
          this.#pausedDepartures.observe(
            decisions,
            this.desired(),
            this.book.open,
            this.#pause.paused,
          ),
        () => {
          this.metrics.queueDepth.set(this.#queue.depth);
          this.metrics.minimumSet.set(this.minimumSet()?.size ?? -1);
        },
      ],
    });
    this.chainPort = options.chain;
    this.keys = new KeyStore(this.chainPort.ids, this.chainPort.keys);
    const deps: DiscoveryDeps = {
      ids: this.chainPort.ids,
      clock: this.clock,
      logger,
      metrics: this.metrics,
    };
    this.discovery = options.discovery(deps);
    const hooks = options.hooks;
    this.#journal = new JournalBinding({
      path: config.journalPath,
      maxBytes: config.journalMaxBytes,
      reads: this.chainPort.reads,
      clock: this.clock,
      logger,
    });
    const journal = this.#journal.journal;
    this.book = new ActionBook(journal);
    this.keyObservations = new KeyObservations({ store: journal, clock: this.clock });
    this.#pause = new PauseState({
      record: this.discovery.pauseRecord?.() ?? journalPauseRecord(journal),
      clock: this.clock,
      logger,
      onChange: (paused) => this.#onPausedChange(paused),
    });
    this.#pausedDepartures = new PausedDepartures({
      clock: this.clock,
      logger,
      marginMs: config.pauseDepartureMarginMs,
      event: (id, type, reason, message) => {
        const target = this.#eventTarget(id);
        if (target !== undefined)
          void this.discovery.events.record(target, type, reason, `validator ${id}: ${message}`);
      },
      enqueue: (id) => this.#queue.add(id),
    });
    this.capabilities = this.chainPort.capabilities;
    this.adapter = fencedSender(this.chainPort.sender, this.#fence);
    this.chain = new ChainView({
      reads: this.chainPort.reads,
      clock: this.clock,
      logger: logger.child({ component: 'chain' }),
      pollIntervalMs: config.chainPollIntervalMs,
      highWater: this.#journal.highWater(),
      memory: this.#journal.memory(),
      readGenesisSet: true,
      ownTransactions: () => this.#ownTransactions(),
      listener: {
        onBlocks: (txs) => this.#reconciler.onBlocks(txs),
        onHeight: (height, changed) => this.#onHeight(height, changed),
        onHealth: () => this.#schedulePhaseRefresh(),
        onTrust: (trusted, reason) => this.#onTrust(trusted, reason),
        onHighWater: (mark) => this.#journal.recordHighWater(mark),
        onMemory: (memory) => this.#journal.recordMemory(memory),
        onBlock: (block) => this.participation.addBlock(block),
        onRows: (height, rows) => this.participation.addRows(height, rows),
      },
    });
    this.metrics.chainTrusted.set(1);
    this.#hooks =
      hooks.length === 0
        ? undefined
        : new HookGate({
            hooks,
            journal,
            ports: {
              command: commandPort,
              http: fetchHttpPort,
              path: process.env.PATH ?? '/usr/bin:/bin',
              now: () => this.clock.now(),
              ...options.hookPorts,
            },
            chainUrl: config.chainRpcUrl,
            clock: this.clock,
            logger: logger.child({ component: 'hooks' }),
            metrics: this.metrics,
            event: (id, type, reason, message) => {
              const target = this.#eventTarget(id);
              if (target !== undefined)
                void this.discovery.events.record(
                  target,
                  type,
                  reason,
                  `validator ${id}: ${message}`,
                );
            },
            onRetryDue: () => this.#schedulePhaseRefresh(),
          });

    const settings: PlanSettings = {
      readyDebounceMs: config.readyDebounceMs,
      syncTolerance: config.syncTolerance,
      syncCheck: config.syncCheck,
      pacing: config.pacing,
      stake: this.chainPort.stake,
      nodeHeightMaxAgeMs: Math.max(2_000, config.chainPollIntervalMs * 4),
      votingWindow: VOTING_WINDOW,
      capabilities: this.capabilities,
      restartStalePods: config.restartStalePods,
      pauseDepartureMarginMs: config.pauseDepartureMarginMs,
    };
    const nodeAddress = this.chainPort.nodeAddress?.bind(this.chainPort);
    this.#nodeKeys =
      nodeAddress === undefined
        ? undefined
        : new NodeKeys({
            read: nodeAddress,
            clock: this.clock,
            logger: logger.child({ component: 'node-keys' }),
            // What this node signs with may unblock others' waits (a restart, a departure).
            onRead: (id) => {
              this.#queue.add(id);
              for (const waiting of this.#reconciler.waiting) this.#queue.add(waiting);
              this.#schedulePhaseRefresh();
            },
          });
    const world: WorldView = {
      desired: () => this.desired(),
      keys: this.keys,
      chain: this.chain,
      book: this.book,
      nodeHeights: this.nodeHeights,
      isSynced: () => this.isSynced(),
      isPaused: () => this.#pause.paused,
      trust: () => this.trust,
      minimumSet: () => this.minimumSet(),
      eventTarget: (id) => this.#eventTarget(id),
      keysSeen: this.keyObservations.observed,
      formerKeys: this.keyObservations.former,
      ...(this.#nodeKeys === undefined ? {} : { nodeKeys: this.#nodeKeys.known }),
    };
    this.#reconciler = new Reconciler({
      world,
      adapter: this.adapter,
      reads: this.chainPort.reads,
      rules: this.chainPort.rules,
      probeNode: (url, signal) => this.chainPort.nodeHeight(url, signal),
      settings,
      clock: this.clock,
      logger: logger.child({ component: 'reconciler' }),
      recorder: this.discovery.events,
      metrics: this.metrics,
      pollIntervalMs: config.chainPollIntervalMs,
      enqueue: (id, afterMs) =>
        afterMs === undefined ? this.#queue.add(id) : this.#queue.addAfter(id, afterMs),
      hooks: this.#hooks,
      restartPod: this.discovery.restartPod?.bind(this.discovery),
    });
    this.#queue = new WorkQueue({
      concurrency: config.concurrency,
      clock: this.clock,
      handler: async (id, signal) => {
        const outcome = await this.#fence.run(() => this.#reconciler.reconcile(id, signal));
        this.#schedulePhaseRefresh();
        return outcome;
      },
      onError: (id, error, retryInMs) => {
        this.#journal.health.failed(error, this.clock.now());
        this.metrics.reconcileErrors.inc({ code: catalogueCode(error) });
        this.logger.warn(
          { validator: id, reconcile: this.#reconciler.passOf(id), err: error, retryInMs },
          'reconcile failed; retrying',
        );
        this.#schedulePhaseRefresh();
      },
    });
    this.book.onChange((record) => {
      this.#journal.health.wrote();
      this.events.emit('action', record);
    });

    this.#intake = new DesiredIntake({
      discovery: this.discovery,
      keys: this.keys,
      keyObservations: this.keyObservations,
      clock: this.clock,
      logger,
      metrics: this.metrics,
      enqueue: (id) => this.#queue.add(id),
      onDesired: (next) => this.#nodeKeys?.observe(next),
      onChange: (what) => {
        this.#checkSynced();
        if (what === 'desired') this.#schedulePhaseRefresh();
      },
      journalFailed: (error) => this.#journal.health.failed(error, this.clock.now()),
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
        this.#checkSynced();
        this.#schedulePhaseRefresh();
      },
    });
    this.#elector = this.discovery.createElector({
      onStartedLeading: () => this.#startWorkers(),
      onStoppedLeading: () => void this.#cancelWorkers(),
      onLeaseRead: (lease, startedAt) => this.#pause.observe(pausedOn(lease), startedAt),
      annotations: () => this.#pause.annotations(),
    });
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
    this.#phaseRefreshes.stop();
    try {
      await this.#runnables.stop();
      // Built before start (the parts read the journal and may queue work): undone even if the
      // manager never started.
      if (!this.#started) await this.#stopLoop();
    } finally {
      await this.#journal.stop();
      this.logger.info('stopped');
    }
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
      election: runnable(
        'leader election',
        () => this.#elector?.start(),
        () => this.#elector?.stop(),
      ),
      loop: runnable(
        'reconcile loop',
        () => this.#startLoop(),
        () => this.#stopLoop(),
      ),
    };
  }

  /** Resyncs on a timer and, without election, starts the workers (the leader's start them). */
  async #startLoop(): Promise<void> {
    this.logger.info({ ...this.discovery.describe(), keys: this.keys.size }, 'caches synced');
    this.#scheduleResync();
    if (this.#elector === undefined) {
      // Nobody reads the record for this manager: it is read once before any action.
      await this.#pause.load();
      this.#startWorkers();
    }
    this.#checkSynced();
  }

  /** Lets in-flight work finish within the shutdown bound; stops timers, hooks and node reads. */
  async #stopLoop(): Promise<void> {
    this.#cancelResync?.();
    await this.#queue.stop(this.config.shutdownTimeoutMs);
    this.#queue.clearTimers();
    this.#pausedDepartures.stop();
    await this.#hooks?.stop();
    this.#nodeKeys?.stop();
  }

  // ---- state for the control RPC ----

  /**
   * What the readers (scaler, status, control plane) get: a read-only view of this manager's
   * state and events (read-model.ts), never the manager itself.
   */
  readModel(): ReadModel {
    if (this.#readModel !== undefined) return this.#readModel;
    const book = this.book;
    // Getters of the literal below have their own `this`: they read through these.
    const now = {
      isLeader: (): boolean => this.isLeader,
      leaderIdentity: (): string | undefined => this.leaderIdentity,
      paused: (): boolean => this.#pause.paused,
      trust: (): ChainTrust => this.trust,
      queueDepth: (): number => this.#queue.depth,
    };
    this.#readModel = {
      discovery: this.discovery.mode,
      desired: () => this.desired(),
      plan: () => this.plan(),
      planOne: (id) => this.planOne(id),
      keys: this.keys,
      chain: this.chain,
      actions: {
        get open() {
          return book.open;
        },
        get latest() {
          return book.latest;
        },
        get stakeHeights() {
          return book.stakeHeights;
        },
        page: (query) => book.journal.page(query),
      },
      informersSynced: () => this.informersSynced(),
      isSynced: () => this.isSynced(),
      isReady: () => this.isReady(),
      get isLeader() {
        return now.isLeader();
      },
      get leaderIdentity() {
        return now.leaderIdentity();
      },
      get paused() {
        return now.paused();
      },
      get trust() {
        return now.trust();
      },
      get queueDepth() {
        return now.queueDepth();
      },
      minimumSet: () => this.minimumSet(),
      baseMinimumSet: () => this.baseMinimumSet(),
      informerStatus: () => this.informerStatus(),
      journalState: () => this.journalState(),
      capabilities: this.capabilities,
      quorum: () => quorumNow(this.#reconciler.planInput()),
      addressesOf: (id) => addressesOf(this.#reconciler.planInput(), id),
      events: this.events,
    };
    return this.#readModel;
  }

  /** Discovery has read the validators' layout once (before that, no layout is known). */
  informersSynced(): boolean {
    return this.discovery.layoutSynced;
  }

  /** Discovery synced, keys read, the chain answered once, and the journal is this chain's. */
  isSynced(): boolean {
    return (
      this.discovery.synced &&
      this.keys.loaded &&
      this.chain.synced &&
      this.#journal.checked &&
      this.#pause.known
    );
  }

  /** The chain the journal is bound to, and the journal of another chain set aside at start. */
  journalState(): JournalState {
    return this.#journal.state();
  }

  /** Ready = synced, and (when leading or without election) the work queue runs. */
  isReady(): boolean {
    const following = this.#elector !== undefined && !this.#elector.isLeader;
    return this.isSynced() && (following || this.#queue.running);
  }

  get isLeader(): boolean {
    return this.#elector === undefined || this.#elector.isLeader;
  }

  get leaderIdentity(): string | undefined {
    return this.#elector === undefined ? this.config.identity : this.#elector.holder;
  }

  get paused(): boolean {
    return this.#pause.paused;
  }

  /** Whether the chain view can be acted on (see ChainView: it went back or forked). */
  get trust(): ChainTrust {
    return { trusted: this.chain.trusted, reason: this.chain.untrustedReason };
  }

  /**
   * The minimum validator set in force: CM_MIN_VALIDATORS (auto: a quorum of the genesis set, once
   * read), lowered by a forced scale recorded on the validator StatefulSet.
   */
  /** The minimum set as configured (auto: a quorum of the genesis set), before any forced scale. */
  baseMinimumSet(): MinimumSet | undefined {
    return resolveMinimumSet({
      configured: this.config.minValidators,
      genesisCount: this.chain.genesisCount,
      forced: undefined,
      capabilities: this.capabilities,
    });
  }

  minimumSet(): MinimumSet | undefined {
    return resolveMinimumSet({
      configured: this.config.minValidators,
      genesisCount: this.chain.genesisCount,
      forced: this.discovery.forcedMinimumSet(),
      capabilities: this.capabilities,
    });
  }

  get queueDepth(): number {
    return this.#queue.depth;
  }

  /** Each input of discovery (informers, or the static files) and its health. */
  informerStatus(): SourceStatus[] {
    return this.discovery.status();
  }

  desired(): DesiredState {
    return this.#intake.desired();
  }

  plan(): Decision[] {
    return this.#reconciler.plan().map((d) => this.#journal.health.overlay(d));
  }

  /** One validator's decision now (as a reconcile of it would decide). */
  planOne(id: ValidatorId): Decision | undefined {
    const decision = this.#reconciler.planOne(id);
    return decision === undefined ? undefined : this.#journal.health.overlay(decision);
  }

  /**
   * Pauses or resumes every manager: answered by the leader once recorded where all of them read
   * it; a follower refuses (NOT_LEADER), and nothing changes when it cannot be recorded.
   */
  async setPaused(paused: boolean): Promise<void> {
    if (!this.isLeader)
      throw new ManagerError(
        'NOT_LEADER',
        `this manager (${this.config.identity}) does not lead${this.leaderIdentity === undefined ? '' : `; ${this.leaderIdentity} does`}: ask the leader (nothing changed)`,
        { details: { leader: this.leaderIdentity ?? null } },
      );
    await this.#pause.set(paused);
  }

  #onPausedChange(paused: boolean): void {
    this.logger.info(
      { paused, record: this.#pause.where },
      paused ? 'paused: no action will be taken' : 'resumed',
    );
    this.events.emit('paused', paused);
    if (!paused) this.enqueueAll();
    this.#schedulePhaseRefresh();
  }

  /** Re-queues every known validator. */
  enqueueAll(): void {
    for (const id of this.#allIds()) this.#queue.add(id);
  }

  /** Resolves when the queue is empty and idle (tests). */
  async drained(): Promise<void> {
    await this.#queue.drained();
  }

  // ---- wiring ----

  #startWorkers(): void {
    this.metrics.leader.set(1);
    this.#queue.start();
    this.enqueueAll();
  }

  async #cancelWorkers(): Promise<void> {
    this.metrics.leader.set(0);
    await this.#queue.cancelAll();
  }

  #allIds(): Set<ValidatorId> {
    const ids = new Set(this.desired().validators.keys());
    for (const address of this.chain.validators.keys())
      for (const id of this.keys.idsOfAddress(address)) ids.add(id);
    for (const id of this.book.open.keys()) ids.add(id);
    for (const id of this.keyObservations.former.keys()) ids.add(id);
    return ids;
  }

  #onHeight(height: number, changed: ReadonlySet<string>): void {
    this.#journal.check();
    this.events.emit('height', height);
    this.metrics.chainHeight.set(height);
    this.metrics.lastSync.set(this.clock.now() / 1000);
    for (const address of changed) {
      const id = this.keys.idOfAddress(address);
      if (id !== undefined) this.#queue.add(id);
    }
    for (const id of this.book.open.keys()) this.#queue.add(id);
    for (const id of this.#reconciler.waiting) this.#queue.add(id);
    this.#checkSynced();
    this.#schedulePhaseRefresh();
  }

  #onTrust(trusted: boolean, reason: string | undefined): void {
    // A chain that looks lower or different may be another chain under the old journal: the
    // binding check decides (and sets the journal and its mark aside), not the mark alone.
    if (!trusted) this.#journal.check();
    this.metrics.chainTrusted.set(trusted ? 1 : 0);
    if (!trusted) this.metrics.chainDistrusts.inc();
    this.events.emit('trust', { trusted, reason });
    for (const target of this.discovery.chainTargets()) {
      void this.discovery.events.record(
        target,
        trusted ? 'Normal' : 'Warning',
        trusted ? 'ChainTrusted' : 'ChainUntrusted',
        trusted
          ? 'the chain is back past the highest height seen; actions resume'
          : `chain not trusted: ${reason ?? ''}`,
      );
    }
    // Back to normal: everything deferred is looked at again.
    if (trusted) this.enqueueAll();
    this.#schedulePhaseRefresh();
  }

  #checkSynced(): void {
    if (this.#wasSynced || !this.isSynced()) return;
    this.#wasSynced = true;
    this.logger.info(
      { height: this.chain.height },
      'synced with the cluster and the chain; reconciling',
    );
    this.enqueueAll();
  }

  #scheduleResync(): void {
    this.#cancelResync = this.clock.setTimer(() => {
      this.enqueueAll();
      this.#scheduleResync();
    }, this.config.resyncIntervalMs);
  }

  #eventTarget(id: ValidatorId): EventTarget | undefined {
    return this.discovery.eventTarget(id, this.desired().validators.get(id));
  }

  /** Open actions whose hash is known: what the chain view asks for when V1 hides its mempool. */
  *#ownTransactions(): Iterable<OwnTransaction> {
    for (const open of this.book.open.values())
      if (open.txHash !== undefined)
        yield { hash: open.txHash, signer: open.address, kind: open.kind };
  }

  /** Post hooks run when actions could: leading, synced, trusted, not paused, not stopping. */
  #canRunHooks(): boolean {
    return (
      !this.#stopping &&
      this.#queue.running &&
      this.isLeader &&
      this.isSynced() &&
      !this.#pause.paused &&
      this.chain.trusted
    );
  }

  #schedulePhaseRefresh(): void {
    this.#phaseRefreshes.request();
  }
}
