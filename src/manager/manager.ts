// The composition root of `cluster-manager run`: informers, keys, chain view, journal, planner,
// work queue, reconciler and (optionally) leader election, wired so that every change only
// enqueues validator ids, and with a lifecycle: start informers, wait for sync, start workers;
// on stop, stop intake, finish or cancel in-flight work, release the lease, close.
import { EventEmitter } from 'node:events';
import type { V1Pod, V1Secret, V1StatefulSet } from '@kubernetes/client-node';
import type { ChainAdapter } from './chain/adapter.ts';
import { chainFactsOf } from './chain/chain-facts.ts';
import { ChainView, type HighWater, type OwnTransaction } from './chain/chain-view.ts';
import { pocketChain } from './chain/pocket/pocket-chain.ts';
import type { ChainPort } from './chain/port.ts';
import { systemClock, type Clock } from './clock.ts';
import { TxMode, type Config } from './config.ts';
import { computeDesiredState, DiscoveryMemory } from './discovery/desired-state.ts';
import { createIdMapper, ordinalOf, type IdMapper } from './discovery/id-mapping.ts';
import { describeError } from './errors.ts';
import { bindJournalToChain, type BindingOutcome } from './journal/chain-binding.ts';
import { Journal, type ChainIdentity } from './journal/journal.ts';
import { apiStatus } from './kube/client.ts';
import type { KubeClients } from './kube/client.ts';
import { HookGate } from './hooks/hook-gate.ts';
import { execaCommandPort, fetchHttpPort } from './hooks/hook-ports.ts';
import type { HookRunnerPorts } from './hooks/hook-runner.ts';
import { loadHooksFile, type HookDefinition } from './hooks/hooks-file.ts';
import { EventRecorder, type EventTarget } from './kube/event-recorder.ts';
import { compileLabelSelector, type LabelMatcher } from './kube/label-selector.ts';
import { LeaderElector } from './kube/leader-election.ts';
import { ResilientInformer } from './kube/resilient-informer.ts';
import { KeyStore } from './keys/key-store.ts';
import type { Logger } from './logger.ts';
import { Metrics } from './metrics.ts';
import {
  Annotations,
  type ActionRecord,
  type ChainCapabilities,
  type DesiredState,
  type ValidatorId,
} from './model.ts';
import { resolveMinimumSet, type MinimumSet } from './planner/minimum-set.ts';
import {
  NO_STATE_SYNC,
  Phase,
  type ChainTrust,
  type Decision,
  type PlanSettings,
} from './planner/plan.ts';
import { ActionBook } from './reconcile/action-book.ts';
import { Reconciler, type WorldView } from './reconcile/reconciler.ts';
import { WorkQueue } from './reconcile/work-queue.ts';

export interface ManagerOptions {
  config: Config;
  logger: Logger;
  kube: KubeClients;
  clock?: Clock;
  metrics?: Metrics;
  /** The hooks (default: read from config.hooksFile, which throws HooksFileError when invalid). */
  hooks?: readonly HookDefinition[];
  /** The chain (default: Pocket V1 at config.chainRpcUrl, in config.txMode). */
  chain?: ChainPort;
  /** How hooks reach the outside (default: execa and fetch). */
  hookPorts?: Partial<HookRunnerPorts>;
}

/** A phase change of one validator (also streamed by GET /v1/events). */
export interface PhaseChange {
  key: string;
  id: ValidatorId | undefined;
  from: Phase | undefined;
  to: Phase;
  reason: string;
}

export interface ManagerEvents {
  height: [number];
  phase: [PhaseChange];
  action: [ActionRecord];
  paused: [boolean];
  /** The chain stopped or started again being trusted (with the reason while not). */
  trust: [ChainTrust];
}

const PAUSED_SETTING = 'paused';
/** The highest chain height seen and its block's state hash, kept across restarts. */
const HIGH_WATER_SETTING = 'chain.highWater';
/** The high-water mark is written at most this often (a restart may lose this much of it). */
const HIGH_WATER_WRITE_MS = 2_000;
/** A staked row votes while it signed a certificate of the last this many heights. */
const VOTING_WINDOW = 20;
/** A StatefulSet read directly stands in for the cache's copy at most this long. */
const FRESH_READ_TTL_MS = 30_000;
/** A burst's recomputes are spaced by this many times their cost (at most ~1/4 of a core). */
const RECOMPUTE_SPACING = 3;

export class Manager {
  readonly config: Config;
  readonly kube: KubeClients;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly events = new EventEmitter<ManagerEvents>();
  readonly chain: ChainView;
  readonly book: ActionBook;
  /** The chain port: reads, sending, rules and capabilities (chain/port.ts). */
  readonly chainPort: ChainPort;
  readonly adapter: ChainAdapter;
  readonly keys = new KeyStore();
  readonly nodeHeights = new Map<ValidatorId, { height: number; at: number }>();
  /** What the chain can do (CM_CHAIN_PROFILE). */
  readonly capabilities: ChainCapabilities;

  readonly #pods: ResilientInformer<V1Pod>;
  readonly #statefulSets: ResilientInformer<V1StatefulSet>;
  readonly #secret: ResilientInformer<V1Secret>;
  readonly #memory = new DiscoveryMemory();
  readonly #mapper: IdMapper;
  readonly #isValidatorTemplate: LabelMatcher;
  readonly #queue: WorkQueue;
  readonly #reconciler: Reconciler;
  readonly #recorder: EventRecorder;
  readonly #elector: LeaderElector | undefined;
  readonly #journal: Journal;
  readonly #hooks: HookGate | undefined;
  #desired: DesiredState | undefined;
  #desiredKeys = new Map<ValidatorId, string>();
  #recomputeScheduled = false;
  #recomputeEndedAt = Number.NEGATIVE_INFINITY;
  #recomputeCostMs = 0;
  #phases = new Map<string, Phase>();
  #phaseRefreshScheduled = false;
  #paused: boolean;
  /** The journal has been checked against the chain (chain-binding.ts); nothing acts before. */
  #journalChecked = false;
  #journalChecking = false;
  /** The chain had no block when checked: the journal is bound once it has. */
  #journalBindPending = false;
  #journalSetAside: { to: string; reason: string } | undefined;
  #journalChain: ChainIdentity | undefined;
  #wasSynced = false;
  #started = false;
  #stopping = false;
  #cancelResync: (() => void) | undefined;
  #highWaterWrittenAt = Number.NEGATIVE_INFINITY;
  /** Ids whose NO_STATE_SYNC was reported (once per phase, until it changes). */
  readonly #reportedCannotVote = new Map<ValidatorId, Phase>();
  /** Ids whose KEY_MISSING was logged (once, until it changes). */
  readonly #reportedMissing = new Set<ValidatorId>();
  /**
   * StatefulSets read from the API server directly (undefined: gone), standing in for the cache's
   * copy until the informer has caught up: a scale-down seen on a terminating pod is acted on at
   * once, not when a lagging informer delivers it.
   */
  readonly #freshSets = new Map<string, { sts: V1StatefulSet | undefined; at: number }>();
  readonly #confirming = new Map<string, Promise<void>>();

  constructor(options: ManagerOptions) {
    const { config, logger, kube } = options;
    this.config = config;
    this.kube = kube;
    this.logger = logger;
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? new Metrics({ defaultMetrics: true });
    this.#mapper = createIdMapper(config);
    this.#isValidatorTemplate = compileLabelSelector(config.podSelector);
    const hooks =
      options.hooks ?? (config.hooksFile === undefined ? [] : loadHooksFile(config.hooksFile));
    this.#journal = Journal.open(config.journalPath, this.clock);
    this.book = new ActionBook(this.#journal);
    this.#paused = this.#journal.getSetting(PAUSED_SETTING) === 'true';
    this.chainPort =
      options.chain ??
      pocketChain({
        rpcUrl: config.chainRpcUrl,
        profile: config.chainProfile,
        cli:
          config.txMode === TxMode.cli && config.cliPath !== undefined
            ? {
                path: config.cliPath,
                timeoutMs: config.cliTimeoutMs,
                configPath: config.cliConfigPath,
                genesisPath: config.cliGenesisPath,
              }
            : undefined,
      });
    this.capabilities = this.chainPort.capabilities;
    this.adapter = this.chainPort.sender;
    this.#recorder = new EventRecorder({
      core: kube.core,
      component: 'cluster-manager',
      instance: config.identity,
      logger: logger.child({ component: 'events' }),
      clock: this.clock,
    });

    const ns = kube.namespace;
    const informerLog = logger.child({ component: 'informer' });
    const common = {
      watch: kube.watch,
      logger: informerLog,
      clock: this.clock,
      onRestart: (name: string) => this.metrics.informerRestarts.inc({ informer: name }),
    };
    this.#pods = new ResilientInformer<V1Pod>({
      ...common,
      name: 'pods',
      path: `/api/v1/namespaces/${ns}/pods`,
      labelSelector: config.podSelector,
      list: () => kube.core.listNamespacedPod({ namespace: ns, labelSelector: config.podSelector }),
      onChange: (pod) => {
        this.#scheduleRecompute();
        if (pod !== undefined) this.#confirmIfLeaving(pod);
      },
    });
    this.#statefulSets = new ResilientInformer<V1StatefulSet>({
      ...common,
      name: 'statefulsets',
      path: `/apis/apps/v1/namespaces/${ns}/statefulsets`,
      list: () => kube.apps.listNamespacedStatefulSet({ namespace: ns }),
      onChange: () => this.#scheduleRecompute(),
    });
    const secretField = `metadata.name=${config.keysSecret}`;
    this.#secret = new ResilientInformer<V1Secret>({
      ...common,
      name: 'secret',
      path: `/api/v1/namespaces/${ns}/secrets`,
      fieldSelector: secretField,
      list: () => kube.core.listNamespacedSecret({ namespace: ns, fieldSelector: secretField }),
      onChange: () => this.#onSecretChange(),
    });

    this.chain = new ChainView({
      reads: this.chainPort.reads,
      clock: this.clock,
      logger: logger.child({ component: 'chain' }),
      pollIntervalMs: config.chainPollIntervalMs,
      highWater: readHighWater(this.#journal.getSetting(HIGH_WATER_SETTING)),
      readGenesisSet: config.minValidators === 'auto',
      ownTransactions: () => this.#ownTransactions(),
      listener: {
        onBlocks: (txs) => this.#reconciler.onBlocks(txs),
        onHeight: (height, changed) => this.#onHeight(height, changed),
        onHealth: () => this.#schedulePhaseRefresh(),
        onTrust: (trusted, reason) => this.#onTrust(trusted, reason),
        onHighWater: (mark) => this.#onHighWater(mark),
      },
    });
    this.metrics.chainTrusted.set(1);
    this.#hooks =
      hooks.length === 0
        ? undefined
        : new HookGate({
            hooks,
            journal: this.#journal,
            ports: {
              command: execaCommandPort,
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
                void this.#recorder.record(target, type, reason, `validator ${id}: ${message}`);
            },
            onRetryDue: () => this.#schedulePhaseRefresh(),
          });

    const settings: PlanSettings = {
      readyDebounceMs: config.readyDebounceMs,
      syncTolerance: config.syncTolerance,
      syncCheck: config.syncCheck,
      pacing: config.pacing,
      stakeAmount: config.stakeAmount,
      stakeChains: config.stakeChains,
      nodeHeightMaxAgeMs: Math.max(2_000, config.chainPollIntervalMs * 4),
      votingWindow: VOTING_WINDOW,
      capabilities: this.capabilities,
    };
    const world: WorldView = {
      desired: () => this.desired(),
      keys: this.keys,
      chain: this.chain,
      book: this.book,
      nodeHeights: this.nodeHeights,
      isSynced: () => this.isSynced(),
      isPaused: () => this.#paused,
      trust: () => this.trust,
      minimumSet: () => this.minimumSet(),
      eventTarget: (id) => this.#eventTarget(id),
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
      recorder: this.#recorder,
      metrics: this.metrics,
      pollIntervalMs: config.chainPollIntervalMs,
      enqueue: (id, afterMs) =>
        afterMs === undefined ? this.#queue.add(id) : this.#queue.addAfter(id, afterMs),
      hooks: this.#hooks,
    });
    this.#queue = new WorkQueue({
      concurrency: config.concurrency,
      clock: this.clock,
      handler: async (id, signal) => {
        const outcome = await this.#reconciler.reconcile(id, signal);
        this.#schedulePhaseRefresh();
        return outcome;
      },
      onError: (id, error, retryInMs) => {
        this.metrics.reconcileErrors.inc({ code: (error as { code?: string }).code ?? 'INTERNAL' });
        this.logger.warn(
          { validator: id, error: describeError(error), retryInMs },
          'reconcile failed; retrying',
        );
        this.#schedulePhaseRefresh();
      },
    });
    this.book.onChange((record) => this.events.emit('action', record));

    this.#elector = config.leaderElection
      ? new LeaderElector({
          coordination: kube.coordination,
          namespace: ns,
          name: config.leaseName,
          identity: config.identity,
          leaseDurationMs: config.leaseDurationMs,
          renewDeadlineMs: config.renewDeadlineMs,
          retryPeriodMs: config.retryPeriodMs,
          clock: this.clock,
          logger: logger.child({ component: 'leader-election' }),
          onStartedLeading: () => this.#startWorkers(),
          onStoppedLeading: () => void this.#cancelWorkers(),
        })
      : undefined;
  }

  /** Starts everything; resolves once the caches have synced (the chain may still be down). */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.logger.info(
      {
        namespace: this.kube.namespace,
        server: this.kube.server,
        source: this.kube.source,
        mode: this.adapter.mode,
      },
      'starting',
    );
    // A manager killed in a CLI call left its keybase (a key on disk): remove it first.
    const removed = (await this.adapter.removeLeftovers?.()) ?? 0;
    if (removed > 0) this.logger.warn({ removed }, 'removed keybases left by a killed manager');
    this.chain.start();
    await Promise.all([this.#pods.start(), this.#statefulSets.start(), this.#secret.start()]);
    this.#onSecretChange();
    this.#recompute();
    this.logger.info(
      {
        pods: this.#pods.list().length,
        statefulSets: this.#statefulSets.list().length,
        keys: this.keys.size,
      },
      'caches synced',
    );
    this.#scheduleResync();
    if (this.#elector === undefined) this.#startWorkers();
    else this.#elector.start();
    this.#checkSynced();
  }

  /** Stops intake, lets in-flight work finish within the shutdown bound, releases the lease, closes. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#cancelResync?.();
    await this.#queue.stop(this.config.shutdownTimeoutMs);
    this.#queue.clearTimers();
    await this.#hooks?.stop();
    await this.#elector?.stop();
    await this.chain.stop();
    await Promise.all([this.#pods.stop(), this.#statefulSets.stop(), this.#secret.stop()]);
    this.#journal.close();
    this.logger.info('stopped');
  }

  // ---- state for the control RPC ----

  /** The pod and StatefulSet informers have listed once (before that, no layout is known). */
  informersSynced(): boolean {
    return this.#pods.synced && this.#statefulSets.synced;
  }

  /** Caches synced, keys read, the chain answered once, and the journal is this chain's. */
  isSynced(): boolean {
    return (
      this.#pods.synced &&
      this.#statefulSets.synced &&
      this.#secret.synced &&
      this.keys.loaded &&
      this.chain.synced &&
      this.#journalChecked
    );
  }

  /** The chain the journal is bound to, and the journal of another chain set aside at start. */
  journalState(): {
    chain: ChainIdentity | undefined;
    setAside: { to: string; reason: string } | undefined;
  } {
    return { chain: this.#journalChain, setAside: this.#journalSetAside };
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
    return this.#paused;
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
    });
  }

  minimumSet(): MinimumSet | undefined {
    let forced: number | undefined;
    for (const sts of this.statefulSets()) {
      const raw = sts.metadata?.annotations?.[Annotations.minimumSet];
      if (raw !== undefined && /^\d+$/.test(raw))
        forced = Math.min(forced ?? Number.POSITIVE_INFINITY, Number(raw));
    }
    return resolveMinimumSet({
      configured: this.config.minValidators,
      genesisCount: this.chain.genesisCount,
      forced,
    });
  }

  get queueDepth(): number {
    return this.#queue.depth;
  }

  informerStatus(): {
    name: string;
    synced: boolean;
    restarts: number;
    lastError: string | undefined;
  }[] {
    return [this.#pods, this.#statefulSets, this.#secret].map((i) => ({
      name: i.name,
      synced: i.synced,
      restarts: i.restarts,
      lastError: i.lastError,
    }));
  }

  desired(): DesiredState {
    this.#desired ??= this.#compute();
    return this.#desired;
  }

  plan(): Decision[] {
    return this.#reconciler.plan();
  }

  /** One validator's decision now (as a reconcile of it would decide). */
  planOne(id: ValidatorId): Decision | undefined {
    return this.#reconciler.planOne(id);
  }

  /** True when the manager's pod selector selects this pod. */
  selectsPod(pod: V1Pod): boolean {
    return this.#isValidatorTemplate(pod.metadata?.labels);
  }

  /** The validator StatefulSets currently known (a direct read stands in for a lagging cache). */
  statefulSets(): readonly V1StatefulSet[] {
    return this.#effectiveStatefulSets().filter((sts) =>
      this.#isValidatorTemplate(sts.spec?.template.metadata?.labels),
    );
  }

  /**
   * Reads a StatefulSet from the API server now and lets that copy stand in for the cache's until
   * the informer catches up (a 404 stands for "gone"). Concurrent calls share one read.
   */
  async confirmStatefulSet(name: string): Promise<void> {
    const running = this.#confirming.get(name);
    if (running !== undefined) return running;
    const read = (async () => {
      try {
        const sts = await this.kube.apps.readNamespacedStatefulSet({
          name,
          namespace: this.kube.namespace,
        });
        this.#freshSets.set(name, { sts, at: this.clock.now() });
      } catch (error: unknown) {
        if (apiStatus(error) === 404)
          this.#freshSets.set(name, { sts: undefined, at: this.clock.now() });
        else
          this.logger.debug(
            { statefulSet: name, error: describeError(error) },
            'direct read failed',
          );
        return;
      } finally {
        this.#confirming.delete(name);
      }
      if (!this.#stopping) this.#recompute();
    })();
    this.#confirming.set(name, read);
    return read;
  }

  /** A terminating pod whose ordinal the cache still wants: is the StatefulSet scaled down? */
  #confirmIfLeaving(pod: V1Pod): void {
    if (pod.metadata?.deletionTimestamp === undefined) return;
    const owner = pod.metadata.ownerReferences?.find(
      (ref) => ref.controller === true && ref.kind === 'StatefulSet',
    )?.name;
    if (owner === undefined) return;
    const sts = this.statefulSets().find((s) => s.metadata?.name === owner);
    const ordinal = ordinalOf(pod.metadata.name ?? '', owner);
    if (sts === undefined || ordinal === undefined || ordinal >= (sts.spec?.replicas ?? 1)) return;
    void this.confirmStatefulSet(owner);
  }

  /** The informer's StatefulSets, with newer direct reads in their place. */
  #effectiveStatefulSets(): V1StatefulSet[] {
    const cached = this.#statefulSets.list();
    if (this.#freshSets.size === 0) return [...cached];
    const now = this.clock.now();
    const out: V1StatefulSet[] = [];
    for (const sts of cached) {
      const name = sts.metadata?.name ?? '';
      const fresh = this.#freshSets.get(name);
      if (fresh === undefined) {
        out.push(sts);
        continue;
      }
      const newer =
        now - fresh.at < FRESH_READ_TTL_MS &&
        (fresh.sts === undefined || isNewerVersion(fresh.sts, sts));
      if (!newer) {
        this.#freshSets.delete(name); // the informer has caught up (or the read is too old)
        out.push(sts);
      } else if (fresh.sts !== undefined) out.push(fresh.sts);
    }
    for (const name of this.#freshSets.keys())
      if (!cached.some((sts) => sts.metadata?.name === name)) this.#freshSets.delete(name);
    return out;
  }

  pods(): readonly V1Pod[] {
    return this.#pods.list();
  }

  setPaused(paused: boolean): void {
    if (paused === this.#paused) return;
    this.#paused = paused;
    this.#journal.setSetting(PAUSED_SETTING, String(paused));
    this.logger.info({ paused }, paused ? 'paused: no action will be taken' : 'resumed');
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
    return ids;
  }

  #compute(): DesiredState {
    return computeDesiredState(
      {
        namespace: this.kube.namespace,
        statefulSets: this.#effectiveStatefulSets(),
        pods: this.#pods.list(),
        isValidatorTemplate: this.#isValidatorTemplate,
        mapper: this.#mapper,
        serviceUrlTemplate: this.config.serviceUrlTemplate,
        nodeRpcPortName: this.config.nodeRpcPortName,
        now: this.clock.now(),
      },
      this.#memory,
    );
  }

  /**
   * Coalesces changes into one recompute: at the end of this turn of the event loop, or, while a
   * burst of events keeps coming, no sooner than RECOMPUTE_SPACING times the last recompute's
   * cost after it ended (a recompute is O(validators); a burst of pod events at 999 validators
   * would otherwise recompute after nearly every watch chunk). A lone event is not delayed; every
   * change is still seen, by the next recompute (level-triggered).
   */
  #scheduleRecompute(): void {
    if (this.#recomputeScheduled) return;
    this.#recomputeScheduled = true;
    const run = (): void => {
      this.#recomputeScheduled = false;
      if (!this.#stopping) this.#recompute();
    };
    const wait =
      this.#recomputeEndedAt + this.#recomputeCostMs * RECOMPUTE_SPACING - performance.now();
    if (wait <= 1) setImmediate(run);
    else setTimeout(run, wait);
  }

  /** Recomputes the desired state and enqueues exactly the ids whose entry changed. */
  #recompute(): void {
    const started = performance.now();
    try {
      this.#recomputeNow();
    } finally {
      this.#recomputeEndedAt = performance.now();
      this.#recomputeCostMs = this.#recomputeEndedAt - started;
    }
  }

  #recomputeNow(): void {
    const next = this.#compute();
    this.#desired = next;
    const keys = new Map<ValidatorId, string>();
    for (const [id, entry] of next.validators) keys.set(id, JSON.stringify(entry));
    for (const [id, fingerprint] of keys)
      if (this.#desiredKeys.get(id) !== fingerprint) this.#queue.add(id);
    for (const id of this.#desiredKeys.keys()) if (!keys.has(id)) this.#queue.add(id);
    this.#desiredKeys = keys;
    const wanted = [...next.validators.values()].filter((v) => v.wanted).length;
    this.metrics.validators.set({ view: 'desired' }, wanted);
    this.#checkSynced();
    this.#schedulePhaseRefresh();
  }

  #onSecretChange(): void {
    const secret = this.#secret.list()[0];
    const { changed, newProblems } = this.keys.update(secret);
    for (const id of changed) this.#queue.add(id);
    this.metrics.keyProblems.set([...this.keys.entries()].filter((e) => !e.ok).length);
    for (const problem of newProblems) {
      const duplicate = problem.code === 'KEY_DUPLICATE';
      const text = duplicate
        ? `key "${problem.id}" in Secret ${this.config.keysSecret} is ${problem.message}`
        : `key "${problem.id}" in Secret ${this.config.keysSecret} is malformed: ${problem.message}`;
      this.logger.warn({ validator: problem.id, code: problem.code }, text);
      if (secret?.metadata?.uid !== undefined) {
        void this.#recorder.record(
          {
            kind: 'Secret',
            apiVersion: 'v1',
            name: this.config.keysSecret,
            namespace: this.kube.namespace,
            uid: secret.metadata.uid,
          },
          'Warning',
          duplicate ? 'KeyDuplicate' : 'KeyInvalid',
          duplicate
            ? `key "${problem.id}" is ${problem.message}`
            : `key "${problem.id}" is malformed (${problem.code}): ${problem.message}`,
        );
      }
    }
    this.#checkSynced();
  }

  #onHeight(height: number, changed: ReadonlySet<string>): void {
    this.#checkJournal();
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

  /**
   * Compares the journal with the chain once it answers (and binds it once the chain has a
   * block); a journal of another chain is set aside and the indexes and the pause are read again
   * from the new one. Retried at the next height when the chain does not answer.
   */
  #checkJournal(): void {
    if (this.#journalChecking || (this.#journalChecked && !this.#journalBindPending)) return;
    this.#journalChecking = true;
    bindJournalToChain(this.#journal, chainFactsOf(this.chainPort.reads))
      .then((outcome) => this.#onJournalBinding(outcome))
      .catch((error: unknown) => {
        this.logger.warn(
          { error: describeError(error) },
          'could not check the journal against the chain; retrying',
        );
        if (!this.#stopping) this.clock.setTimer(() => this.#checkJournal(), 1_000);
      })
      .finally(() => {
        this.#journalChecking = false;
      });
  }

  #onJournalBinding(outcome: BindingOutcome): void {
    this.#journalBindPending = outcome.kind === 'pending';
    if (outcome.kind !== 'pending') this.#journalChain = outcome.chain;
    if (outcome.kind === 'set-aside') {
      this.#journalSetAside = { to: outcome.setAsideTo, reason: outcome.reason };
      this.logger.warn(
        {
          journal: this.config.journalPath,
          setAsideTo: outcome.setAsideTo,
          reason: outcome.reason,
        },
        'the journal was written for another chain: set aside, starting a new one',
      );
      this.book.reload();
      // The highest height seen was the other chain's (the new journal has none): this chain
      // is judged afresh.
      this.chain.resetHighWater();
      const paused = this.#journal.getSetting(PAUSED_SETTING) === 'true';
      if (paused !== this.#paused) {
        this.#paused = paused;
        this.events.emit('paused', paused);
      }
    } else if (outcome.kind === 'bound')
      this.logger.info({ chain: outcome.chain }, 'journal bound to the chain');
    if (!this.#journalChecked) {
      this.#journalChecked = true;
      this.#checkSynced();
      this.#schedulePhaseRefresh();
    }
  }

  #onTrust(trusted: boolean, reason: string | undefined): void {
    // A chain that looks lower or different may be another chain under the old journal: the
    // binding check decides (and sets the journal and its mark aside), not the mark alone.
    if (!trusted) this.#checkJournal();
    this.metrics.chainTrusted.set(trusted ? 1 : 0);
    if (!trusted) this.metrics.chainDistrusts.inc();
    this.events.emit('trust', { trusted, reason });
    for (const sts of this.statefulSets()) {
      const meta = sts.metadata;
      if (meta?.uid === undefined || meta.name === undefined) continue;
      void this.#recorder.record(
        {
          kind: 'StatefulSet',
          apiVersion: 'apps/v1',
          name: meta.name,
          namespace: meta.namespace ?? this.kube.namespace,
          uid: meta.uid,
        },
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

  /** Keeps the highest height seen in the journal, so a restarted manager is not fooled either. */
  #onHighWater(mark: HighWater): void {
    const now = this.clock.now();
    if (now - this.#highWaterWrittenAt < HIGH_WATER_WRITE_MS) return;
    this.#highWaterWrittenAt = now;
    try {
      this.#journal.setSetting(HIGH_WATER_SETTING, JSON.stringify(mark));
    } catch (error: unknown) {
      this.logger.warn({ error: describeError(error) }, 'could not record the chain height');
    }
  }

  /**
   * The id of the pod a StatefulSet would create at `ordinal`, when the id mapping can tell it
   * from the pod's name alone (undefined otherwise: annotation mapping, or no id).
   */
  idOfNewPod(statefulSet: string, ordinal: number): ValidatorId | undefined {
    if (!this.#mapper.derivableFromName) return undefined;
    const result = this.#mapper.idOf({
      name: `${statefulSet}-${ordinal}`,
      ordinal,
      annotations: undefined,
    });
    return 'id' in result ? result.id : undefined;
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
    const entry = this.desired().validators.get(id);
    if (entry?.pod !== undefined) {
      return {
        kind: 'Pod',
        apiVersion: 'v1',
        name: entry.pod.name,
        namespace: entry.pod.namespace,
        uid: entry.pod.uid,
      };
    }
    if (entry?.statefulSet !== undefined) {
      const sts = entry.statefulSet;
      return {
        kind: 'StatefulSet',
        apiVersion: 'apps/v1',
        name: sts.name,
        namespace: sts.namespace,
        uid: sts.uid,
      };
    }
    return undefined;
  }

  /** Open actions whose hash is known: what the chain view asks for when V1 hides its mempool. */
  *#ownTransactions(): Iterable<OwnTransaction> {
    for (const open of this.book.open.values())
      if (open.txHash !== undefined)
        yield { hash: open.txHash, signer: open.address, kind: open.kind };
  }

  /** A wanted validator without a key: logged and an Event, once until that changes. */
  #reportKeyMissing(decision: Decision): void {
    const id = decision.id;
    if (id === undefined) return;
    const missing = decision.phase === Phase.failed && decision.reason.startsWith('KEY_MISSING');
    if (!missing) {
      this.#reportedMissing.delete(id);
      return;
    }
    if (this.#reportedMissing.has(id)) return;
    this.#reportedMissing.add(id);
    this.logger.warn({ validator: id, code: 'KEY_MISSING' }, decision.reason);
    const target = this.#eventTarget(id);
    if (target !== undefined)
      void this.#recorder.record(target, 'Warning', 'KeyMissing', decision.reason);
  }

  /**
   * A validator that cannot vote (no state sync for late joiners): logged and a Warning Event,
   * once per phase (refused while pending, then staked if it was), until that changes.
   */
  #reportCannotVote(decision: Decision): void {
    const id = decision.id;
    if (id === undefined) return;
    if (!decision.reason.startsWith(NO_STATE_SYNC)) {
      this.#reportedCannotVote.delete(id);
      return;
    }
    if (this.#reportedCannotVote.get(id) === decision.phase) return;
    this.#reportedCannotVote.set(id, decision.phase);
    this.logger.warn(
      { validator: id, code: 'NO_STATE_SYNC', phase: decision.phase },
      decision.reason,
    );
    const target = this.#eventTarget(id);
    if (target !== undefined)
      void this.#recorder.record(
        target,
        'Warning',
        'CannotVote',
        `validator ${id}: ${decision.reason}`,
      );
  }

  /** Post hooks run when actions could: leading, synced, trusted, not paused, not stopping. */
  #canRunHooks(): boolean {
    return (
      !this.#stopping &&
      this.#queue.running &&
      this.isLeader &&
      this.isSynced() &&
      !this.#paused &&
      this.chain.trusted
    );
  }

  #schedulePhaseRefresh(): void {
    if (this.#phaseRefreshScheduled) return;
    this.#phaseRefreshScheduled = true;
    setTimeout(() => {
      this.#phaseRefreshScheduled = false;
      if (!this.#stopping) this.#refreshPhases();
    }, 50).unref();
  }

  /** Diffs phases against the last refresh: emits changes, updates gauges, reports new key gaps. */
  #refreshPhases(): void {
    const decisions = this.plan();
    const next = new Map<string, Phase>();
    const counts = new Map<Phase, number>();
    const cannotVote = { staked: 0, refused: 0 };
    for (const decision of decisions) {
      next.set(decision.key, decision.phase);
      counts.set(decision.phase, (counts.get(decision.phase) ?? 0) + 1);
      const from = this.#phases.get(decision.key);
      if (from !== decision.phase) {
        this.events.emit('phase', {
          key: decision.key,
          id: decision.id,
          from,
          to: decision.phase,
          reason: decision.reason,
        });
      }
      this.#reportKeyMissing(decision);
      this.#reportCannotVote(decision);
      if (decision.reason.startsWith(NO_STATE_SYNC))
        cannotVote[decision.phase === Phase.staked ? 'staked' : 'refused']++;
    }
    for (const key of this.#phases.keys()) {
      if (!next.has(key))
        this.events.emit('phase', {
          key,
          id: /^\d{3}$/.test(key) ? key : undefined,
          from: this.#phases.get(key),
          to: Phase.unstaked,
          reason: 'no longer tracked',
        });
    }
    this.#phases = next;
    this.#hooks?.observe(decisions, this.book.latest, this.#canRunHooks());
    for (const id of this.#reportedMissing) if (!next.has(id)) this.#reportedMissing.delete(id);
    for (const id of this.#reportedCannotVote.keys())
      if (!next.has(id)) this.#reportedCannotVote.delete(id);
    this.metrics.cannotVote.set({ state: 'staked' }, cannotVote.staked);
    this.metrics.cannotVote.set({ state: 'refused' }, cannotVote.refused);
    for (const phase of Object.values(Phase))
      this.metrics.phases.set({ phase }, counts.get(phase) ?? 0);
    this.metrics.validators.set(
      { view: 'staked' },
      (counts.get(Phase.staked) ?? 0) + (counts.get(Phase.active) ?? 0),
    );
    this.metrics.validators.set({ view: 'active' }, counts.get(Phase.active) ?? 0);
    this.metrics.queueDepth.set(this.#queue.depth);
    this.metrics.minimumSet.set(this.minimumSet()?.size ?? -1);
  }
}

/**
 * True when `a` is a newer version of the object than `b`. resourceVersions are opaque, but both
 * etcd's and the emulator's are increasing integers; anything else counts as newer when different.
 */
function isNewerVersion(a: V1StatefulSet, b: V1StatefulSet): boolean {
  const ra = a.metadata?.resourceVersion ?? '';
  const rb = b.metadata?.resourceVersion ?? '';
  if (/^\d+$/.test(ra) && /^\d+$/.test(rb)) return BigInt(ra) > BigInt(rb);
  return ra !== rb;
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
