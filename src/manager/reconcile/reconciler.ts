// reconcile(id): level-triggered. Reads the desired state (caches) and the actual state (chain
// view, journal, mempool), asks the planner for the one action the id needs, and does it:
// journal first, then send, then follow the transaction until the chain shows its effect.
import type { ChainAdapter, TransportCapabilities, TxRequest } from '../chain/adapter.ts';
import type { ChainView } from '../chain/chain-view.ts';
import type { ChainReads, ChainRules, CommittedTx } from '../chain/port.ts';
import type { Clock } from '../clock.ts';
import { describeError, isManagerError, ManagerError } from '../errors.ts';
import type { EventSink, EventTarget, PodRef } from '../discovery/port.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import {
  ActionKind,
  ActionState,
  ChainStatus,
  type ActionRecord,
  type ChainKey,
  type DesiredState,
  type FormerKey,
  type KeyObservation,
  type NodeKey,
  type ValidatorId,
} from '../model.ts';
import type { MinimumSet } from '../planner/minimum-set.ts';
import {
  plan,
  planOne,
  staleRestartBlocker,
  Wait,
  type ChainTrust,
  type Decision,
  type KeyLookup,
  type PlanInput,
  type PlanSettings,
  type StaleRestart,
} from '../planner/plan.ts';
import type { HookGate } from '../hooks/hook-gate.ts';
import type { ActionBook } from './action-book.ts';
import type { Outcome } from './work-queue.ts';

/** Blocks a sent transaction may take before the manager looks for it explicitly. */
const FOLLOW_BLOCKS = 3;
/** Times the same bytes are sent again before the transaction is declared dropped. */
const MAX_RESENDS = 3;

/** Everything the reconciler reads; owned by the manager. */
export interface WorldView {
  desired(): DesiredState;
  readonly keys: KeyLookup;
  readonly chain: ChainView;
  readonly book: ActionBook;
  readonly nodeHeights: Map<ValidatorId, { height: number; at: number }>;
  isSynced(): boolean;
  isPaused(): boolean;
  /** Whether the chain view can be acted on (it went back or forked: not). */
  trust(): ChainTrust;
  /** The minimum validator set in force (undefined while not known). */
  minimumSet(): MinimumSet | undefined;
  /** What an Event about this validator is about (discovery's target; undefined: none). */
  eventTarget(id: ValidatorId): EventTarget | undefined;
  /** When each id's current key was first seen (keys/key-observations.ts); absent: not recorded. */
  readonly keysSeen?: ReadonlyMap<ValidatorId, KeyObservation>;
  /** Each id's former keys (keys/key-observations.ts); absent: not recorded. */
  readonly formerKeys?: ReadonlyMap<ValidatorId, readonly FormerKey[]>;
  /** What each pod's node said it signs with, by pod uid (keys/node-keys.ts). */
  readonly nodeKeys?: ReadonlyMap<string, NodeKey>;
}

export interface ReconcilerOptions {
  world: WorldView;
  adapter: ChainAdapter;
  /** The chain port's reads (a committed transaction, an account's balance). */
  reads: Pick<ChainReads, 'transaction' | 'balance'>;
  /** The chain port's rules (fees, what a result code means). */
  rules: ChainRules;
  /** Asks a validator's own node for its height. */
  probeNode: (url: string, signal: AbortSignal) => Promise<number>;
  settings: PlanSettings;
  clock: Clock;
  logger: Logger;
  /** Where Events go (the Kubernetes API, or the log in static discovery). */
  recorder: EventSink | undefined;
  metrics: Metrics;
  pollIntervalMs: number;
  /** Re-queues a validator (the manager's queue). */
  enqueue: (id: ValidatorId, afterMs?: number) => void;
  /** Lifecycle hooks (none without a hooks file): run before an action is written. */
  hooks?: HookGate | undefined;
  /**
   * Deletes a pod whose node started before its key was seen, only while it has that uid
   * (discovery's `restartPod`); undefined where there are no pods. Called only when
   * `settings.restartStalePods` is not false.
   */
  restartPod?: ((pod: PodRef) => Promise<'deleted' | 'gone' | 'forbidden'>) | undefined;
}

export class Reconciler {
  readonly #o: ReconcilerOptions;
  /** Ids whose last decision waited on something that changes with the chain or the cluster. */
  readonly waiting = new Set<ValidatorId>();
  /** Numbers the passes: every line one pass logs carries `reconcile: <n>`. */
  #passes = 0;
  /** The last pass of each validator (the work queue never runs two of one id at once). */
  readonly #lastPass = new Map<ValidatorId, number>();
  /** The pod last deleted for a stale key, by id: never deleted twice, its replacement trusted. */
  readonly #staleRestarts = new Map<ValidatorId, StaleRestart>();
  /** With restarts off, the pod (uid) last reported for a stale key, by id: reported once. */
  readonly #staleReported = new Map<ValidatorId, string>();

  constructor(options: ReconcilerOptions) {
    this.#o = options;
  }

  planInput(): PlanInput {
    const { world, clock, settings } = this.#o;
    return {
      now: clock.now(),
      synced: world.isSynced(),
      paused: world.isPaused(),
      height: world.chain.height,
      trust: world.trust(),
      minimumSet: world.minimumSet(),
      desired: world.desired(),
      keys: world.keys,
      chain: world.chain.validators,
      signers: world.chain.signers,
      genesis: world.chain.genesis,
      mempool: world.chain.mempool,
      open: world.book.open,
      latest: world.book.latest,
      stakeHeights: world.book.stakeHeights,
      lastStakes: world.book.lastStakes,
      nodeHeights: world.nodeHeights,
      settings,
      ...(this.#o.hooks === undefined ? {} : { hookHolds: this.#o.hooks.holds }),
      ...(world.keysSeen === undefined ? {} : { keysSeen: world.keysSeen }),
      ...(world.formerKeys === undefined ? {} : { formerKeys: world.formerKeys }),
      ...(world.nodeKeys === undefined ? {} : { nodeKeys: world.nodeKeys }),
      staleRestarts: this.#staleRestarts,
    };
  }

  /** The whole plan now (also the dry run of GET /v1/plan), with hook holds in the reasons. */
  plan(): Decision[] {
    const decisions = plan(this.planInput());
    const hooks = this.#o.hooks;
    return hooks === undefined ? decisions : decisions.map((d) => hooks.overlay(d));
  }

  /** One validator's decision now, as plan() shows it. */
  planOne(id: ValidatorId): Decision | undefined {
    const decision = this.#decide(id);
    return decision === undefined || this.#o.hooks === undefined
      ? decision
      : this.#o.hooks.overlay(decision);
  }

  /** The planner's decision (a hook's hold is in it; the overlay only adds what plan() shows). */
  #decide(id: ValidatorId): Decision | undefined {
    return planOne(this.planInput(), id);
  }

  /**
   * One pass over `id`. A failure it cannot settle is thrown, not logged: the work queue logs it
   * once, with its retry delay (STYLE: a failure logged once, by the queue).
   */
  async reconcile(id: ValidatorId, signal: AbortSignal): Promise<Outcome> {
    const started = performance.now();
    const pass = ++this.#passes;
    this.#lastPass.set(id, pass);
    const log = this.#o.logger.child({ reconcile: pass });
    try {
      return await this.#reconcile(id, signal, log);
    } finally {
      this.#o.metrics.reconcileDuration.observe((performance.now() - started) / 1000);
    }
  }

  /**
   * The number of `id`'s latest pass, for the queue's one line about its failure: read it in the
   * queue's error callback, before the id's next pass starts.
   */
  passOf(id: ValidatorId): number | undefined {
    return this.#lastPass.get(id);
  }

  async #reconcile(id: ValidatorId, signal: AbortSignal, log: Logger): Promise<Outcome> {
    const open = this.#o.world.book.open.get(id);
    if (open !== undefined && this.#o.world.isSynced()) {
      // An untrusted chain (gone back, forked) says nothing about the transaction: nothing is
      // sent again and nothing is declared dropped until it is trusted again.
      if (!this.#o.world.trust().trusted) {
        this.waiting.add(id);
        return undefined;
      }
      return this.#follow(open, signal, log);
    }

    let decision = this.#decide(id);
    if (decision === undefined) return undefined;
    if (decision.action !== 'none' && decision.waitingFor === Wait.nodeSync) {
      await this.#probe(id, signal, log);
      decision = this.#decide(id);
      if (decision === undefined) return undefined;
    }
    this.waiting.delete(id);
    if (restsWithoutAction(decision)) return requeueOf(decision);
    switch (decision.waitingFor) {
      case undefined:
        return this.#act(decision, signal, log);
      case Wait.debounce:
        return { requeueAfterMs: decision.requeueAfterMs ?? 500 };
      case Wait.hook: // held by a failed `block` hook: #act runs it again (after its backoff)
        return this.#act(decision, signal, log);
      case Wait.nodeSync:
        return {
          requeueAfterMs: decision.requeueAfterMs ?? Math.max(1_000, this.#o.pollIntervalMs),
        };
      case Wait.staleKey: {
        // Deleted (once per uid): its replacement's events enqueue it again. A failed delete
        // throws before the id is waiting, so the queue's backoff paces the retry, not each block.
        const outcome = await this.#restartStale(decision, log);
        this.waiting.add(id);
        return outcome;
      }
      case Wait.sync:
      case Wait.paused:
      case Wait.podReady:
      case Wait.pacing:
      case Wait.podIds:
      case Wait.minimumSet:
      case Wait.chainUntrusted:
      case Wait.noStateSync:
        this.waiting.add(id);
        return undefined;
    }
  }

  /**
   * A wanted pod whose node started before its key was seen: deleted, once per uid, so that its
   * StatefulSet starts it again with the current key (docs/adr/0022); with restarts off, reported
   * once per uid, as it is while deleting it could take a voter off the chain
   * (`staleRestartBlocker`) or when the Role forbids the delete (403). A pod already gone or
   * replaced is left to the next pass (its replacement is judged by its own start: the delete did
   * not happen, so nothing vouches for it). Any other failed delete is thrown: the queue retries
   * it with backoff.
   */
  async #restartStale(decision: Decision, log: Logger): Promise<Outcome> {
    const { world, settings, restartPod, metrics } = this.#o;
    const id = decision.id;
    const pod = id === undefined ? undefined : world.desired().validators.get(id)?.pod;
    const seen = id === undefined ? undefined : world.keysSeen?.get(id);
    if (id === undefined || pod === undefined || seen === undefined || restartPod === undefined)
      return undefined;
    if (this.#staleRestarts.get(id)?.uid === pod.uid) return undefined; // deleted already
    const about = { validator: id, pod: pod.name, uid: pod.uid };
    const report = async (reason: string): Promise<undefined> => {
      if (this.#staleReported.get(id) === pod.uid) return undefined;
      this.#staleReported.set(id, pod.uid);
      metrics.staleKeyPods.inc({ action: 'reported' });
      log.warn(about, reason);
      await this.#event(id, 'Warning', 'StaleKey', reason);
      return undefined;
    };
    if (settings.restartStalePods === false) return report(decision.reason);
    // A voter's pod is never deleted (planner/stale-key.ts): reported, judged again at each block.
    if (staleRestartBlocker(id, this.planInput()) !== undefined) return report(decision.reason);
    const outcome = await restartPod({ name: pod.name, namespace: pod.namespace, uid: pod.uid });
    if (outcome === 'gone') {
      log.debug(about, 'the pod to restart is already gone or replaced');
      return undefined;
    }
    if (outcome === 'forbidden')
      return report(
        `${decision.reason.replace(/; restarting it$/, '')}; may not delete it (HTTP 403): grant the manager delete on pods, or set CM_RESTART_STALE_PODS=false`,
      );
    this.#staleRestarts.set(id, { podName: pod.name, uid: pod.uid, observedAt: seen.observedAt });
    metrics.staleKeyPods.inc({ action: 'restarted' });
    const done = `${decision.reason.replace(/; restarting it$/, '')}; deleted it (uid ${pod.uid}) for its StatefulSet to start it again with the current key`;
    log.info(about, done);
    await this.#event(id, 'Warning', 'StaleKeyRestart', done);
    return undefined;
  }

  async #probe(id: ValidatorId, signal: AbortSignal, log: Logger): Promise<void> {
    const url = this.#o.world.desired().validators.get(id)?.pod?.nodeRpcUrl;
    if (url === undefined) return;
    try {
      const height = await this.#o.probeNode(url, signal);
      this.#o.world.nodeHeights.set(id, { height, at: this.#o.clock.now() });
    } catch (error: unknown) {
      log.debug({ validator: id, node: url, err: error }, 'node did not answer its height');
      this.#o.world.nodeHeights.delete(id);
    }
  }

  async #act(decision: Decision, signal: AbortSignal, log: Logger): Promise<Outcome> {
    const { world, adapter, settings } = this.#o;
    const id = decision.id;
    const key = this.#keyFor(decision);
    if (
      id === undefined ||
      key === undefined ||
      decision.action === 'none' ||
      decision.fingerprint === undefined
    )
      return undefined;
    let reason = decision.reason;
    if (this.#o.hooks !== undefined) {
      const hold = await this.#o.hooks.before(
        {
          id,
          address: key.address,
          kind: decision.action,
          serviceUrl: decision.serviceUrl,
        },
        signal,
      );
      if (hold !== undefined) return { requeueAfterMs: hold.retryInMs };
      // The hooks took time: the world may have changed (a pause, a pod gone unready, pacing).
      const now = this.#decide(id);
      if (
        now?.action !== decision.action ||
        now.waitingFor !== undefined ||
        now.fingerprint !== decision.fingerprint ||
        world.book.open.has(id)
      )
        return { requeueAfterMs: 100 };
      reason = now.reason; // the same action; its reason no longer names a hold
    }
    const request: TxRequest = {
      kind: decision.action,
      key,
      stake: settings.stake,
      serviceUrl: decision.serviceUrl ?? '',
    };
    const prepared = adapter.prepare(request);
    // On disk before the send (group commit: the actions prepared in this tick share the fsync).
    const record = await world.book.prepareDurably({
      validatorId: id,
      address: key.address,
      kind: decision.action,
      mode: adapter.transport.name,
      txHash: prepared.txHash,
      txHex: prepared.txHex,
      nonce: prepared.nonce,
      fingerprint: decision.fingerprint,
      reason,
      preparedHeight: Math.max(world.chain.height, 0),
    });
    // Bindings of this action's lines (a plain object: a child logger per action costs more).
    const about = { validator: id, action: decision.action, seq: record.seq };
    try {
      const outcome = await adapter.send(request, prepared, signal);
      world.book.markSent(record.seq, { height: Math.max(world.chain.height, 0) });
      this.#o.metrics.actions.inc({ kind: decision.action, result: 'sent' });
      log.info(
        {
          ...about,
          tx: prepared.txHash,
          outcome,
          serviceUrl: request.kind === ActionKind.stake ? request.serviceUrl : undefined,
          stake: request.kind === ActionKind.stake ? request.stake.shown : undefined,
        },
        `${decision.action} sent`,
      );
      world.chain.poke();
      return { requeueAfterMs: this.#o.pollIntervalMs * 2 };
    } catch (error: unknown) {
      const failure = isManagerError(error)
        ? error
        : new ManagerError('INTERNAL', describeError(error), { cause: error });
      const maybeSent = mayHaveBeenSent(failure, adapter.transport);
      if (maybeSent) {
        // The bytes (or, where they cannot be re-sent, the attempt) stay open: following it later
        // is idempotent. A cancel ends here (logged once, here); anything else the queue logs when
        // it retries.
        if (failure.code !== 'CANCELLED') throw failure;
        log.warn(
          { ...about, err: failure },
          `${decision.action} not confirmed as sent; will follow up`,
        );
        return undefined;
      }
      world.book.markFailed(record.seq, {
        code: failure.code,
        message: failure.message,
        terminal: failure.terminal,
      });
      this.#o.metrics.actions.inc({ kind: decision.action, result: 'failed' });
      if (failure.terminal) {
        log.error(
          { ...about, err: failure },
          `${decision.action} failed; not retried until its inputs change`,
        );
        await this.#event(
          id,
          'Warning',
          decision.action === ActionKind.stake ? 'StakeFailed' : 'UnstakeFailed',
          failure.message,
        );
        return undefined;
      }
      throw failure;
    }
  }

  /**
   * The key an action is signed with: the validator's own, or for a rotation's unstake of its old
   * address the old key (held in memory, or in the Secret under another id: planner/rotation.ts).
   */
  #keyFor(decision: Decision): ChainKey | undefined {
    const keys = this.#o.world.keys;
    if (decision.subject !== undefined) return keys.signingKey?.(decision.subject);
    const entry = decision.id === undefined ? undefined : keys.get(decision.id);
    return entry?.ok === true ? entry.key : undefined;
  }

  /** Follows an open action until the chain shows it, or declares it dropped. */
  async #follow(open: ActionRecord, signal: AbortSignal, log: Logger): Promise<Outcome> {
    const { world, adapter, reads } = this.#o;
    const again = { requeueAfterMs: this.#o.pollIntervalMs * 2 };
    const height = world.chain.height;

    if (
      open.state === ActionState.prepared &&
      open.txHex !== undefined &&
      adapter.transport.resendsSameBytes
    ) {
      const outcome = await this.#resend(open, signal, log);
      if (outcome !== undefined) world.book.markSent(open.seq, { height });
      return again;
    }
    if (open.txHash === undefined) {
      const pooled = world.chain.mempool.get(open.address);
      if (pooled !== undefined && pooled.kind === open.kind) {
        world.book.recordHash(open.seq, pooled.hash);
        if (open.state === ActionState.prepared)
          world.book.markSent(open.seq, { height: open.preparedHeight });
        return again;
      }
    }
    const since = open.sentHeight ?? open.preparedHeight;
    if (height - since < FOLLOW_BLOCKS) return again;

    if (open.txHash !== undefined) {
      const committed = await reads.transaction(open.txHash, { signal });
      if (committed !== undefined) {
        this.resolve(open, committed, log);
        return undefined;
      }
      if (world.chain.mempool.get(open.address)?.hash === open.txHash) return again;
      if (open.attempts <= MAX_RESENDS && adapter.transport.resendsSameBytes) {
        const outcome = await this.#resend(open, signal, log);
        if (outcome !== undefined) world.book.markResent(open.seq, height);
        return again;
      }
    }
    if (this.#effectObserved(open)) {
      world.book.markCommitted(open.seq, { height, resultCode: 0 });
      log.info(
        { validator: open.validatorId, action: open.kind },
        `${open.kind} took effect (seen on chain)`,
      );
      this.#o.enqueue(open.validatorId);
      return undefined;
    }
    const message = `${open.kind} not included within ${height - since} blocks and no longer in the mempool`;
    if (await this.#cannotPay(open, signal)) {
      const failure = new ManagerError(
        'INSUFFICIENT_FUNDS',
        `the account of ${open.address} cannot pay for the ${open.kind}; the chain dropped it`,
      );
      world.book.markFailed(open.seq, {
        code: failure.code,
        message: failure.message,
        terminal: true,
      });
      this.#o.metrics.actions.inc({ kind: open.kind, result: 'failed' });
      log.error({ validator: open.validatorId, action: open.kind }, failure.message);
      await this.#event(
        open.validatorId,
        'Warning',
        open.kind === ActionKind.stake ? 'StakeFailed' : 'UnstakeFailed',
        failure.message,
      );
      return undefined;
    }
    world.book.markDropped(open.seq, message);
    this.#o.metrics.actions.inc({ kind: open.kind, result: 'dropped' });
    // Thrown, not logged: the queue logs it once when it retries (the journal keeps the hash).
    throw new ManagerError('TX_DROPPED', message);
  }

  /** True when the signer's balance cannot cover the fee (and, for a stake, the amount). */
  async #cannotPay(open: ActionRecord, signal: AbortSignal): Promise<boolean> {
    try {
      const balance = await this.#o.reads.balance(open.address, { signal });
      return balance < this.#o.rules.requiredBalance(open.kind, this.#o.settings.stake);
    } catch {
      return false;
    }
  }

  async #resend(open: ActionRecord, signal: AbortSignal, log: Logger): Promise<string | undefined> {
    const pending = this.#o.adapter.resend(open, signal);
    if (pending === undefined) return undefined;
    const outcome = await pending;
    log.info(
      { validator: open.validatorId, action: open.kind, tx: open.txHash, outcome },
      `${open.kind} sent again (same bytes)`,
    );
    return outcome;
  }

  #effectObserved(open: ActionRecord): boolean {
    const status = this.#o.world.chain.validators.get(open.address)?.status ?? ChainStatus.absent;
    return open.kind === ActionKind.stake
      ? status === ChainStatus.staked
      : status === ChainStatus.unstaking ||
          status === ChainStatus.unstaked ||
          status === ChainStatus.absent;
  }

  /** Matches transactions of newly scanned blocks with open actions. */
  onBlocks(txs: readonly CommittedTx[]): void {
    if (txs.length === 0) return;
    const open = [...this.#o.world.book.open.values()];
    if (open.length === 0) return;
    const byHash = new Map(open.filter((a) => a.txHash !== undefined).map((a) => [a.txHash, a]));
    for (const tx of txs) {
      const match =
        byHash.get(tx.hash) ??
        open.find(
          (a) =>
            a.txHash === undefined &&
            a.address === tx.signer &&
            a.kind === tx.kind &&
            tx.height >= a.preparedHeight,
        );
      if (match !== undefined && this.#o.world.book.open.get(match.validatorId)?.seq === match.seq)
        this.resolve(match, tx);
    }
  }

  /** Records the block outcome of an open action (`parent`: the pass's logger, inside one). */
  resolve(open: ActionRecord, tx: CommittedTx, parent: Logger = this.#o.logger): void {
    const { book } = this.#o.world;
    const log = parent.child({
      validator: open.validatorId,
      action: open.kind,
      tx: tx.hash,
      height: tx.height,
    });
    if (tx.resultCode === 0) {
      book.recordOutcome(open.seq, {
        committed: { height: tx.height, resultCode: 0, txHash: tx.hash },
      });
      this.#o.metrics.actions.inc({ kind: open.kind, result: 'committed' });
      log.info(`${open.kind} committed`);
      void this.#event(
        open.validatorId,
        'Normal',
        open.kind === ActionKind.stake ? 'Staked' : 'Unstaked',
        `${open.kind} of ${open.address} committed at height ${tx.height}`,
      );
    } else {
      const { error: failure, terminal } = this.#o.rules.committedFailure(open.kind, tx.resultCode);
      book.recordOutcome(open.seq, {
        failed: {
          code: failure.code,
          message: failure.message,
          terminal,
          resultCode: tx.resultCode,
        },
      });
      this.#o.metrics.actions.inc({ kind: open.kind, result: 'failed' });
      log.error({ resultCode: tx.resultCode }, `${open.kind} failed on chain: ${failure.message}`);
      void this.#event(
        open.validatorId,
        'Warning',
        open.kind === ActionKind.stake ? 'StakeFailed' : 'UnstakeFailed',
        failure.message,
      );
    }
    this.#o.enqueue(open.validatorId);
  }

  async #event(
    id: ValidatorId,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    const target = this.#o.world.eventTarget(id);
    if (target === undefined || this.#o.recorder === undefined) return;
    await this.#o.recorder.record(target, type, reason, `validator ${id}: ${message}`);
  }
}

/** Whether a failed send may still have reached the node: its record then stays open, followed. */
function mayHaveBeenSent(failure: ManagerError, transport: TransportCapabilities): boolean {
  // Refused by the send fence (send-fence.ts) before anything left: surely not sent.
  if (failure.code === 'NOT_LEADER') return false;
  return (
    failure.code === 'CANCELLED' ||
    transport.maybeSentCodes.includes(failure.code) ||
    (transport.retryableMaySend && failure.retryable)
  );
}

/**
 * A decision with nothing to send and nothing to do: not a staked row whose pod's node signs
 * another key (no action, but its pod may be restarted: the stale-key wait).
 */
function restsWithoutAction(decision: Decision): boolean {
  return decision.action === 'none' && decision.waitingFor !== Wait.staleKey;
}

/** The pass's outcome when it rests: a requeue when the decision asks for one. */
function requeueOf(decision: Decision): Outcome {
  return decision.requeueAfterMs === undefined
    ? undefined
    : { requeueAfterMs: decision.requeueAfterMs };
}
