// The reconcile loop, a part of the manager (runnable.ts): the work queue and its workers, the
// reconciler, the send fence, the hook gate, the node-key reads, the paused departures, the
// resync timer and the phase refreshes. Every change only enqueues validator ids: a new height,
// a trust change, a node's key read, a resync, a resume. The workers run while this manager
// leads (the election's callbacks call startWorkers/cancelWorkers) or, without election, from
// start(), once the pause record was read. Stopping lets in-flight work finish within the
// shutdown bound, then stops the timers, the hooks and the node reads.
import type { ChainAdapter } from '../chain/adapter.ts';
import type { CommittedTx } from '../chain/port.ts';
import type { EventTarget } from '../discovery/port.ts';
import { catalogueCode } from '../errors.ts';
import { HookGate } from '../hooks/hook-gate.ts';
import { commandPort, fetchHttpPort } from '../hooks/hook-ports.ts';
import type { HookRunnerPorts } from '../hooks/hook-runner.ts';
import type { HookDefinition } from '../hooks/hooks-file.ts';
import { NodeKeys } from '../keys/node-keys.ts';
import type { DesiredState, ValidatorId } from '../model.ts';
import { PausedDepartures } from '../pause/paused-departures.ts';
import type { MinimumSet } from '../planner/minimum-set.ts';
import type { ChainTrust, Decision, PlanInput, PlanSettings } from '../planner/plan.ts';
import { Reconciler } from '../reconcile/reconciler.ts';
import { fencedSender, SendFence } from '../reconcile/send-fence.ts';
import { WorkQueue } from '../reconcile/work-queue.ts';
import type { Runnable } from '../runnable.ts';
import type { ManagerCore } from './manager-core.ts';
import { PhaseRefresh } from './phase-refresh.ts';

/** A staked row votes while it signed a certificate of the last this many heights. */
const VOTING_WINDOW = 20;

/** What the loop works on, beside what every part shares (manager-core.ts). */
export interface ReconcileLoopOptions extends ManagerCore {
  hooks: readonly HookDefinition[];
  hookPorts?: Partial<HookRunnerPorts> | undefined;
  /** Discovery synced, keys read, the chain answered once, the journal checked, pause known. */
  isSynced(): boolean;
  /** The minimum set in force (undefined while not known). */
  minimumSet(): MinimumSet | undefined;
}

export class ReconcileLoop implements Runnable {
  readonly name = 'reconcile loop';
  /** The chain port's sender, fenced: only the leader's passes, in their term, send. */
  readonly adapter: ChainAdapter;
  readonly nodeHeights = new Map<ValidatorId, { height: number; at: number }>();
  readonly #o: ReconcileLoopOptions;
  readonly #fence: SendFence;
  readonly #queue: WorkQueue;
  readonly #reconciler: Reconciler;
  readonly #hooks: HookGate | undefined;
  /** What each pod's node says it signs with (keys/node-keys.ts); absent where nodes cannot tell. */
  readonly #nodeKeys: NodeKeys | undefined;
  /** Validator pods the cluster removes while paused: reported, looked at when their hold ends. */
  readonly #pausedDepartures: PausedDepartures;
  /** The plan computed again after changes: phase events, gauges, reports (phase-refresh.ts). */
  readonly #phases: PhaseRefresh;
  #wasSynced = false;
  #halted = false;
  #cancelResync: (() => void) | undefined;

  constructor(options: ReconcileLoopOptions) {
    this.#o = options;
    this.#fence = new SendFence(() => options.election.leadership);
    this.adapter = fencedSender(options.chainPort.sender, this.#fence);
    this.#hooks = this.#hookGate();
    this.#nodeKeys = this.#nodeKeyReads();
    this.#pausedDepartures = new PausedDepartures({
      clock: options.clock,
      logger: options.logger,
      marginMs: options.config.pauseDepartureMarginMs,
      event: (id, type, reason, message) =>
        this.#event(id, type, reason, `validator ${id}: ${message}`),
      enqueue: (id) => this.#queue.add(id),
    });
    this.#reconciler = this.#reconcilerOf();
    this.#queue = this.#workQueue();
    this.#phases = this.#phaseRefresh();
  }

  /**
   * Resyncs on a timer and, without election, starts the workers (the leader's start them).
   * `signal` ends a start still reading the pause record (it retries while the record cannot be
   * read: a Role without `get leases`, the API down): the start settles and no worker starts, so
   * a stop meanwhile is not held by it (runnable.ts's contract).
   */
  async start(signal?: AbortSignal): Promise<void> {
    const { discovery, keys, election, pause, logger } = this.#o;
    logger.info({ ...discovery.describe(), keys: keys.size }, 'caches synced');
    this.#scheduleResync();
    if (!election.elects) {
      // Nobody reads the record for this manager: it is read once before any action.
      await pause.load(signal);
      if (signal?.aborted === true) return;
      this.startWorkers();
    }
    this.checkSynced();
  }

  /** Lets in-flight work finish within the shutdown bound; stops timers, hooks and node reads. */
  async stop(): Promise<void> {
    this.#cancelResync?.();
    await this.#queue.stop(this.#o.config.shutdownTimeoutMs);
    this.#queue.clearTimers();
    this.#pausedDepartures.stop();
    await this.#hooks?.stop();
    this.#nodeKeys?.stop();
  }

  /** The manager is stopping: no phase refresh and no post hook starts after this. */
  halt(): void {
    this.#halted = true;
    this.#phases.stop();
  }

  /** Leading (or no election): the workers run and everything is looked at. */
  startWorkers(): void {
    this.#o.metrics.leader.set(1);
    this.#queue.start();
    this.enqueueAll();
  }

  /** No longer leading: in-flight passes are cancelled (the fence refuses their sends). */
  async cancelWorkers(): Promise<void> {
    this.#o.metrics.leader.set(0);
    await this.#queue.cancelAll();
  }

  get running(): boolean {
    return this.#queue.running;
  }

  get queueDepth(): number {
    return this.#queue.depth;
  }

  enqueue(id: ValidatorId): void {
    this.#queue.add(id);
  }

  /** Re-queues every known validator. */
  enqueueAll(): void {
    for (const id of this.#allIds()) this.#queue.add(id);
  }

  /** Resolves when the queue is empty and idle (tests). */
  async drained(): Promise<void> {
    await this.#queue.drained();
  }

  /** Every validator's decision now, with the journal's health overlaid. */
  plan(): Decision[] {
    return this.#reconciler.plan().map((d) => this.#o.journal.health.overlay(d));
  }

  /** One validator's decision now (as a reconcile of it would decide). */
  planOne(id: ValidatorId): Decision | undefined {
    const decision = this.#reconciler.planOne(id);
    return decision === undefined ? undefined : this.#o.journal.health.overlay(decision);
  }

  /** What the planner reads now (the quorum and signers' reads take it). */
  planInput(): PlanInput {
    return this.#reconciler.planInput();
  }

  /** Asks for a phase refresh (coalesced and paced). */
  refreshPhases(): void {
    this.#phases.request();
  }

  /** A new desired state: the node-key reads follow its pods. */
  onDesired(next: DesiredState): void {
    this.#nodeKeys?.observe(next);
  }

  /** Transactions the chain view saw committed. */
  onBlocks(txs: readonly CommittedTx[]): void {
    this.#reconciler.onBlocks(txs);
  }

  /** A new height: the rows that changed, the open actions and the waiting ids are looked at. */
  onHeight(height: number, changed: ReadonlySet<string>): void {
    const { journal, events, metrics, clock, keys, book } = this.#o;
    journal.check();
    events.emit('height', height);
    metrics.chainHeight.set(height);
    metrics.lastSync.set(clock.now() / 1000);
    for (const address of changed) {
      const id = keys.idOfAddress(address);
      if (id !== undefined) this.#queue.add(id);
    }
    for (const id of book.open.keys()) this.#queue.add(id);
    for (const id of this.#reconciler.waiting) this.#queue.add(id);
    this.checkSynced();
    this.refreshPhases();
  }

  onTrust(trusted: boolean, reason: string | undefined): void {
    const { journal, metrics, events, discovery } = this.#o;
    // A chain that looks lower or different may be another chain under the old journal: the
    // binding check decides (and sets the journal and its mark aside), not the mark alone.
    if (!trusted) journal.check();
    metrics.chainTrusted.set(trusted ? 1 : 0);
    if (!trusted) metrics.chainDistrusts.inc();
    events.emit('trust', { trusted, reason });
    for (const target of discovery.chainTargets()) {
      void discovery.events.record(
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
    this.refreshPhases();
  }

  /** Once synced for the first time: everything is looked at. */
  checkSynced(): void {
    if (this.#wasSynced || !this.#o.isSynced()) return;
    this.#wasSynced = true;
    this.#o.logger.info(
      { height: this.#o.chain.height },
      'synced with the cluster and the chain; reconciling',
    );
    this.enqueueAll();
  }

  /** Where Events about `id` go (discovery's target for its desired entry). */
  eventTarget(id: ValidatorId): EventTarget | undefined {
    return this.#o.discovery.eventTarget(id, this.#o.desired().validators.get(id));
  }

  #event(id: ValidatorId, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const target = this.eventTarget(id);
    if (target !== undefined) void this.#o.discovery.events.record(target, type, reason, message);
  }

  #hookGate(): HookGate | undefined {
    const { hooks, journal, config, clock, logger, metrics } = this.#o;
    if (hooks.length === 0) return undefined;
    return new HookGate({
      hooks,
      journal: journal.journal,
      ports: {
        command: commandPort,
        http: fetchHttpPort,
        path: process.env.PATH ?? '/usr/bin:/bin',
        now: () => clock.now(),
        ...this.#o.hookPorts,
      },
      chainUrl: config.chainRpcUrl,
      clock,
      logger: logger.child({ component: 'hooks' }),
      metrics,
      event: (id, type, reason, message) =>
        this.#event(id, type, reason, `validator ${id}: ${message}`),
      onRetryDue: () => this.refreshPhases(),
    });
  }

  #nodeKeyReads(): NodeKeys | undefined {
    const { chainPort, clock, logger } = this.#o;
    const nodeAddress = chainPort.nodeAddress?.bind(chainPort);
    if (nodeAddress === undefined) return undefined;
    return new NodeKeys({
      read: nodeAddress,
      clock,
      logger: logger.child({ component: 'node-keys' }),
      // What this node signs with may unblock others' waits (a restart, a departure).
      onRead: (id) => {
        this.#queue.add(id);
        for (const waiting of this.#reconciler.waiting) this.#queue.add(waiting);
        this.refreshPhases();
      },
    });
  }

  #reconcilerOf(): Reconciler {
    const o = this.#o;
    const { config, chainPort, chain, book, keyObservations } = o;
    const settings: PlanSettings = {
      readyDebounceMs: config.readyDebounceMs,
      syncTolerance: config.syncTolerance,
      syncCheck: config.syncCheck,
      pacing: config.pacing,
      stake: chainPort.stake,
      nodeHeightMaxAgeMs: Math.max(2_000, config.chainPollIntervalMs * 4),
      votingWindow: VOTING_WINDOW,
      capabilities: chainPort.capabilities,
      restartStalePods: config.restartStalePods,
      pauseDepartureMarginMs: config.pauseDepartureMarginMs,
    };
    const nodeKeys = this.#nodeKeys;
    return new Reconciler({
      world: {
        desired: () => o.desired(),
        keys: o.keys,
        chain,
        book,
        nodeHeights: this.nodeHeights,
        isSynced: () => o.isSynced(),
        isPaused: () => o.pause.paused,
        trust: (): ChainTrust => ({ trusted: chain.trusted, reason: chain.untrustedReason }),
        minimumSet: () => o.minimumSet(),
        eventTarget: (id) => this.eventTarget(id),
        keysSeen: keyObservations.observed,
        formerKeys: keyObservations.former,
        ...(nodeKeys === undefined ? {} : { nodeKeys: nodeKeys.known }),
      },
      adapter: this.adapter,
      reads: chainPort.reads,
      rules: chainPort.rules,
      probeNode: (url, signal) => chainPort.nodeHeight(url, signal),
      settings,
      clock: o.clock,
      logger: o.logger.child({ component: 'reconciler' }),
      recorder: o.discovery.events,
      metrics: o.metrics,
      pollIntervalMs: config.chainPollIntervalMs,
      enqueue: (id, afterMs) =>
        afterMs === undefined ? this.#queue.add(id) : this.#queue.addAfter(id, afterMs),
      hooks: this.#hooks,
      restartPod: o.discovery.restartPod?.bind(o.discovery),
    });
  }

  #workQueue(): WorkQueue {
    const { config, clock, journal, metrics, logger } = this.#o;
    return new WorkQueue({
      concurrency: config.concurrency,
      clock,
      handler: async (id, signal) => {
        const outcome = await this.#fence.run(() => this.#reconciler.reconcile(id, signal));
        this.refreshPhases();
        return outcome;
      },
      onError: (id, error, retryInMs) => {
        journal.health.failed(error, clock.now());
        metrics.reconcileErrors.inc({ code: catalogueCode(error) });
        logger.warn(
          { validator: id, reconcile: this.#reconciler.passOf(id), err: error, retryInMs },
          'reconcile failed; retrying',
        );
        this.refreshPhases();
      },
    });
  }

  #phaseRefresh(): PhaseRefresh {
    const { clock, logger, metrics, events, book, pause } = this.#o;
    return new PhaseRefresh({
      clock,
      logger,
      metrics,
      plan: () => this.plan(),
      phaseChanged: (change) => events.emit('phase', change),
      warn: (id, reason, message) => this.#event(id, 'Warning', reason, message),
      observers: [
        (decisions) => this.#hooks?.observe(decisions, book.latest, this.#canRunHooks()),
        (decisions) =>
          this.#pausedDepartures.observe(decisions, this.#o.desired(), book.open, pause.paused),
        () => {
          metrics.queueDepth.set(this.#queue.depth);
          metrics.minimumSet.set(this.#o.minimumSet()?.size ?? -1);
        },
      ],
    });
  }

  #allIds(): Set<ValidatorId> {
    const { chain, keys, book, keyObservations } = this.#o;
    const ids = new Set(this.#o.desired().validators.keys());
    for (const address of chain.validators.keys())
      for (const id of keys.idsOfAddress(address)) ids.add(id);
    for (const id of book.open.keys()) ids.add(id);
    for (const id of keyObservations.former.keys()) ids.add(id);
    return ids;
  }

  #scheduleResync(): void {
    this.#cancelResync = this.#o.clock.setTimer(() => {
      this.enqueueAll();
      this.#scheduleResync();
    }, this.#o.config.resyncIntervalMs);
  }

  /** Post hooks run when actions could: leading, synced, trusted, not paused, not stopping. */
  #canRunHooks(): boolean {
    const { election, pause, chain } = this.#o;
    return (
      !this.#halted &&
      this.#queue.running &&
      election.isLeader &&
      this.#o.isSynced() &&
      !pause.paused &&
      chain.trusted
    );
  }
}
