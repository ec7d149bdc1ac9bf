// What the control RPC needs from the manager, as a narrow interface, and its implementation
// over the manager's read model and the ports it acts through (compose.ts wires them). Routes
// depend on this; nothing here reaches the Manager class.
import type { EventEmitter } from 'node:events';
import type { Clock } from '../clock.ts';
import { ManagerError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import {
  ActionKind,
  type DesiredState,
  type DesiredValidator,
  type IdFormatSpec,
} from '../model.ts';
import type { ManagerControl, ReadModel, ReadModelEvents, ViewDriver } from '../read-model.ts';
import type { ReplicaTarget } from '../scale/replica-target.ts';
import { setPlanGauges } from '../phase-tracker.ts';
import { Wait, type Decision } from '../planner/plan.ts';
import { departureOf, type Departure } from '../scale/departure.ts';
import type { Scaler, ScaleRequest, ScaleResult } from '../scale/scaler.ts';
import {
  summarizeAction,
  validatorStatuses,
  type ActionSummary,
  type ValidatorStatus,
} from '../status.ts';
import type { PlanView, Readiness } from './schemas.ts';

// The answers' types are the routes' schemas (one declaration: validation, types, OpenAPI).
export type { PlanView, Readiness };

/** Which chain the manager talks to, and how its validator ids are written (GET /v1/chain). */
export interface ChainSummary {
  readonly name: string;
  readonly ids: IdFormatSpec;
  /** What a stake carries, as the chain writes it (`StakeParams.shown`). */
  readonly stake: string;
}

export interface ControlPlane {
  chain(): ChainSummary;
  readiness(): Readiness;
  validators(): ValidatorStatus[];
  plan(): PlanView;
  actions(query: { limit: number; before?: number | undefined; validator?: string | undefined }): {
    actions: ActionSummary[];
    next: number | null;
  };
  /** Answered by the leader once recorded; a follower rejects with NOT_LEADER. */
  setPaused(paused: boolean): Promise<void>;
  scale(request: ScaleRequest, signal: AbortSignal): Promise<ScaleResult>;
  triggerView(signal: AbortSignal): Promise<{ height: number; committed: boolean }>;
  /** Long-polls (up to `timeoutMs`) until the pod may go: its validator left, or never will. */
  departure(pod: string, timeoutMs: number, signal: AbortSignal): Promise<Departure>;
  metrics(): Promise<{ contentType: string; body: string }>;
  readonly events: EventEmitter<ReadModelEvents>;
}

/** What the control plane reads and the ports it acts through. */
export interface ControlPlanePorts {
  read: ReadModel;
  control: ManagerControl;
  driver: ViewDriver;
  replicas: ReplicaTarget;
  metrics: Metrics;
  clock: Clock;
  scaler: Scaler;
  chain: ChainSummary;
}

export function planView(
  decisions: readonly Decision[],
  state: { discovery: string; synced: boolean; paused: boolean; height: number },
): PlanView {
  return {
    ...state,
    actions: decisions
      .filter((d): d is Decision & { action: 'stake' | 'unstake' } => d.action !== 'none')
      .map((d) => ({
        key: d.key,
        id: d.id ?? null,
        action: d.action,
        waitingFor: d.waitingFor ?? null,
        reason: d.reason,
      })),
  };
}

/** A block time as ISO 8601, or null when there is none or it could not be read. */
function isoTime(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

const TRIGGER_WAIT_MS = 5_000;
const TRIGGER_POLL_MS = 50;

/** The control plane of a running manager. */
export class ManagerControlPlane implements ControlPlane {
  readonly #p: ControlPlanePorts;
  readonly #read: ReadModel;
  readonly scaler: Scaler;

  constructor(ports: ControlPlanePorts) {
    this.#p = ports;
    this.#read = ports.read;
    this.scaler = ports.scaler;
    // A drain left by a `wait: none` scale-down, a client that went away or a restarted manager
    // is finished here: every new height checks whether its validators have left the set.
    ports.read.events.on('height', () => void this.scaler.finishDrains());
  }

  get events(): EventEmitter<ReadModelEvents> {
    return this.#read.events;
  }

  chain(): ChainSummary {
    return this.#p.chain;
  }

  readiness(): Readiness {
    const m = this.#read;
    const journal = m.journalState();
    return {
      discovery: m.discovery,
      ready: m.isReady(),
      synced: m.isSynced(),
      leader: m.isLeader,
      leaderIdentity: m.leaderIdentity ?? null,
      paused: m.paused,
      chain: {
        healthy: m.chain.healthy,
        height: m.chain.height,
        lastError: m.chain.lastError ?? null,
        lastBlockAt: isoTime(m.chain.lastBlockTime),
        trusted: m.chain.trusted,
        untrustedReason: m.chain.untrustedReason ?? null,
        highest: m.chain.highest,
      },
      minimumSet: m.minimumSet() ?? null,
      informers: m.informerStatus().map((i) => ({ ...i, lastError: i.lastError ?? null })),
      queueDepth: m.queueDepth,
      journal: {
        chain: journal.chain ?? null,
        setAside: journal.setAside ?? null,
        failure: journal.failure ?? null,
      },
    };
  }

  validators(): ValidatorStatus[] {
    return validatorStatuses(this.#read);
  }

  plan(): PlanView {
    const m = this.#read;
    return planView(m.plan(), {
      discovery: m.discovery,
      synced: m.isSynced(),
      paused: m.paused,
      height: m.chain.height,
    });
  }

  actions(query: { limit: number; before?: number | undefined; validator?: string | undefined }): {
    actions: ActionSummary[];
    next: number | null;
  } {
    const page = this.#read.actions.page({
      limit: query.limit + 1,
      before: query.before,
      validatorId: query.validator,
    });
    const actions = page.slice(0, query.limit).map(summarizeAction);
    return { actions, next: page.length > query.limit ? (actions.at(-1)?.seq ?? null) : null };
  }

  setPaused(paused: boolean): Promise<void> {
    return this.#p.control.setPaused(paused);
  }

  /** Refused with 501 SCALE_UNSUPPORTED when discovery has nothing to scale (static files). */
  scale(request: ScaleRequest, signal: AbortSignal): Promise<ScaleResult> {
    const reason = this.#p.replicas.scaleUnsupported();
    if (reason !== undefined)
      return Promise.reject(
        new ManagerError('SCALE_UNSUPPORTED', reason, {
          details: { discovery: this.#read.discovery },
        }),
      );
    return this.scaler.scale(request, signal);
  }

  /**
   * Triggers a view and answers with the height once the chain has moved past the height seen
   * before (or after `TRIGGER_WAIT_MS`, with `committed: false`: an auto pacemaker or a stalled
   * chain may not move for this one view).
   */
  async triggerView(signal: AbortSignal): Promise<{ height: number; committed: boolean }> {
    const { driver, clock } = this.#p;
    const before = await driver.height(signal);
    await driver.triggerView(signal);
    const deadline = clock.now() + TRIGGER_WAIT_MS;
    let height = await driver.height(signal);
    while (height <= before && clock.now() < deadline) {
      await clock.sleep(TRIGGER_POLL_MS, signal);
      height = await driver.height(signal);
    }
    driver.poke();
    return { height, committed: height > before };
  }

  async departure(pod: string, timeoutMs: number, signal: AbortSignal): Promise<Departure> {
    const m = this.#read;
    const { clock } = this.#p;
    if (!m.informersSynced() || !m.keys.loaded)
      throw new ManagerError(
        'NOT_READY',
        'the manager has not listed the pods and keys yet; retry in a moment',
      );
    const deadline = clock.now() + timeoutMs;
    let confirmed = false;
    for (;;) {
      let entry = entryOfPod(m.desired(), pod);
      // A terminating pod whose ordinal the cache still wants: a scale-down the informer has
      // not delivered yet is seen with a direct read of its StatefulSet.
      if (!confirmed && entry?.pod?.terminating === true && entry.wanted && entry.statefulSet) {
        confirmed = true;
        await this.#p.replicas.confirmStatefulSet(entry.statefulSet.name);
        entry = entryOfPod(m.desired(), pod);
      }
      let answer: Departure;
      if (entry?.pod === undefined && (await this.#p.replicas.podExists(pod))) {
        // Selected and there, but not in the cache yet: ask again shortly.
        answer = {
          pod,
          validatorId: null,
          departed: false,
          final: false,
          code: 'LEAVING',
          reason: `the manager has not seen pod ${pod} yet`,
          height: m.chain.height,
        };
      } else {
        const decision = entry === undefined ? undefined : m.planOne(entry.id);
        answer = departureOf({
          othersLeaving: decision?.waitingFor === Wait.minimumSet && this.#othersLeaving(entry?.id),
          pod,
          entry: entry?.pod === undefined ? undefined : { ...entry, pod: entry.pod },
          decision,
          view: {
            keys: m.keys,
            chain: m.chain.validators,
            open: m.actions.open,
            mempool: m.chain.mempool,
            addressesOf: (id) => m.addressesOf(id),
          },
          // A pod the cluster removes while paused is held until shortly before it is killed; then
          // its validator leaves as if not paused (planner/paused-departure.ts).
          paused: m.paused && decision?.waitingFor === Wait.paused,
          trust: m.trust,
          chainHealthy: m.chain.healthy,
          height: m.chain.height,
        });
      }
      const left = deadline - clock.now();
      if (answer.final || left <= 0 || signal.aborted) return answer;
      await this.#changeOrTimeout(Math.min(left, 1_000), signal);
    }
  }

  /** True when a validator other than `id` is leaving: its unstake ready, sent or in the mempool. */
  #othersLeaving(id: string | undefined): boolean {
    const m = this.#read;
    for (const record of m.actions.open.values())
      if (record.kind === ActionKind.unstake && record.validatorId !== id) return true;
    for (const [address, tx] of m.chain.mempool)
      if (tx.kind === ActionKind.unstake && m.keys.idOfAddress(address) !== id) return true;
    return m
      .plan()
      .some((d) => d.id !== id && d.action === 'unstake' && d.waitingFor !== Wait.minimumSet);
  }

  /** Resolves on the next change the manager reports, after `ms`, or when `signal` aborts. */
  #changeOrTimeout(ms: number, signal: AbortSignal): Promise<void> {
    const events = this.#read.events;
    return new Promise((resolve) => {
      const done = (): void => {
        cancel();
        events.off('phase', done);
        events.off('action', done);
        events.off('height', done);
        events.off('trust', done);
        events.off('paused', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const cancel = this.#p.clock.setTimer(done, ms);
      events.on('phase', done);
      events.on('action', done);
      events.on('height', done);
      events.on('trust', done);
      events.on('paused', done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  async metrics(): Promise<{ contentType: string; body: string }> {
    const m = this.#read;
    const { metrics } = this.#p;
    // Gauges the manager updates on events (debounced): set them from the state of now, so a
    // scrape agrees with GET /v1/validators at the same moment.
    if (m.chain.lastSuccessAt !== undefined) metrics.lastSync.set(m.chain.lastSuccessAt / 1000);
    // The height the view holds now (its event may still be on its way while phases already
    // reflect the new block), the trust and the minimum set in force.
    if (m.chain.height >= 0) metrics.chainHeight.set(m.chain.height);
    metrics.chainTrusted.set(m.chain.trusted ? 1 : 0);
    metrics.minimumSet.set(m.minimumSet()?.size ?? -1);
    metrics.queueDepth.set(m.queueDepth);
    setPlanGauges(metrics, m.plan());
    const wanted = [...m.desired().validators.values()].filter((v) => v.wanted).length;
    metrics.validators.set({ view: 'desired' }, wanted);
    const registry = metrics.registry;
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}

function entryOfPod(desired: DesiredState, pod: string): DesiredValidator | undefined {
  for (const entry of desired.validators.values()) if (entry.pod?.name === pod) return entry;
  return undefined;
}
