// A fake of the control RPC's port (`ControlPlane`) for unit tests of the routes with inject():
// it answers reads from plain fields, records every call, and lets a test say what a mutation
// answers or throws. No manager, no emulator, no chain, no socket.
import { EventEmitter } from 'node:events';
import type { ManagerEvents } from '../../src/manager/manager.ts';
import type {
  ChainSummary,
  ControlPlane,
  PlanView,
  Readiness,
} from '../../src/manager/rpc/control-plane.ts';
import type { Departure } from '../../src/manager/scale/departure.ts';
import type { ScaleRequest, ScaleResult } from '../../src/manager/scale/scaler.ts';
import type { ActionSummary, ValidatorStatus } from '../../src/manager/status.ts';

/** A readiness answer of a healthy, synced leader at `height`. */
export function readyState(height = 7): Readiness {
  return {
    discovery: 'kubernetes',
    ready: true,
    synced: true,
    leader: true,
    leaderIdentity: null,
    paused: false,
    chain: {
      healthy: true,
      height,
      lastError: null,
      lastBlockAt: null,
      trusted: true,
      untrustedReason: null,
      highest: height,
    },
    minimumSet: null,
    informers: [],
    queueDepth: 0,
    journal: { chain: null, setAside: null },
  };
}

/** A scale result of `outcome` for `request` (what the scaler answers). */
export function scaleResult(
  request: ScaleRequest,
  outcome: ScaleResult['outcome'],
  missing: ScaleResult['missing'] = [],
): ScaleResult {
  return {
    statefulSet: 'validator',
    previous: 1,
    replicas: request.replicas,
    wait: request.wait,
    outcome,
    done: outcome === 'done',
    elapsedMs: 1,
    drained: [],
    missing,
    height: 7,
  };
}

export type ControlCall =
  | { method: 'setPaused'; paused: boolean }
  | { method: 'scale'; request: ScaleRequest }
  | { method: 'triggerView' }
  | { method: 'departure'; pod: string; timeoutMs: number }
  | {
      method: 'actions';
      query: { limit: number; before?: number | undefined; validator?: string | undefined };
    };

/** The mutations: a refused request must have called none of them. */
export const MUTATING_CALLS: readonly ControlCall['method'][] = [
  'setPaused',
  'scale',
  'triggerView',
];

export class FakeControlPlane implements ControlPlane {
  readonly events = new EventEmitter<ManagerEvents>();
  readonly calls: ControlCall[] = [];
  ready: Readiness = readyState();
  validatorRows: ValidatorStatus[] = [];
  planAnswer: PlanView = {
    discovery: 'kubernetes',
    synced: true,
    paused: false,
    height: 7,
    actions: [],
  };
  actionRows: ActionSummary[] = [];
  chainAnswer: ChainSummary = {
    name: 'pocket-v1',
    ids: { prefix: '', width: 3, min: 1, max: 999 },
    stake: '150000000001upokt for relay chains 0001',
  };
  metricsBody = '# HELP fake_metric a fake\n# TYPE fake_metric gauge\nfake_metric 1\n';
  paused = false;
  /** What `scale` does (default: done at once). */
  onScale: (request: ScaleRequest, signal: AbortSignal) => Promise<ScaleResult> = (request) =>
    Promise.resolve(scaleResult(request, 'done'));
  /** What `triggerView` does (default: one block committed). */
  onTriggerView: (signal: AbortSignal) => Promise<{ height: number; committed: boolean }> = () =>
    Promise.resolve({ height: 8, committed: true });
  /** What `departure` answers (default: the pod's validator stays). */
  onDeparture: (pod: string, timeoutMs: number, signal: AbortSignal) => Promise<Departure> = (
    pod,
  ) =>
    Promise.resolve({
      pod,
      validatorId: '001',
      departed: false,
      final: true,
      code: 'STILL_WANTED',
      reason: 'still wanted',
      height: 7,
    });
  /** Thrown by every read when set (an unexpected failure inside the manager). */
  failReads: Error | undefined;

  /** Back to the defaults above, with no calls recorded (one fake serves a whole file). */
  reset(): void {
    const fresh = new FakeControlPlane();
    this.calls.length = 0;
    this.ready = fresh.ready;
    this.validatorRows = fresh.validatorRows;
    this.planAnswer = fresh.planAnswer;
    this.actionRows = fresh.actionRows;
    this.chainAnswer = fresh.chainAnswer;
    this.metricsBody = fresh.metricsBody;
    this.paused = false;
    this.onScale = fresh.onScale;
    this.onTriggerView = fresh.onTriggerView;
    this.onDeparture = fresh.onDeparture;
    this.failReads = undefined;
  }

  /** Calls of methods that change something. */
  mutations(): ControlCall[] {
    return this.calls.filter((call) => MUTATING_CALLS.includes(call.method));
  }

  readiness(): Readiness {
    this.#read();
    return { ...this.ready, paused: this.paused };
  }

  chain(): ChainSummary {
    this.#read();
    return this.chainAnswer;
  }

  validators(): ValidatorStatus[] {
    this.#read();
    return this.validatorRows;
  }

  plan(): PlanView {
    this.#read();
    return this.planAnswer;
  }

  actions(query: { limit: number; before?: number | undefined; validator?: string | undefined }): {
    actions: ActionSummary[];
    next: number | null;
  } {
    this.calls.push({ method: 'actions', query });
    this.#read();
    const rows = this.actionRows
      .filter((a) => query.before === undefined || a.seq < query.before)
      .filter((a) => query.validator === undefined || a.validatorId === query.validator);
    const page = rows.slice(0, query.limit);
    return { actions: page, next: rows.length > query.limit ? (page.at(-1)?.seq ?? null) : null };
  }

  /** Rejects with this (a follower's NOT_LEADER) instead of pausing, when set. */
  pauseRefusal: Error | undefined;

  setPaused(paused: boolean): Promise<void> {
    this.calls.push({ method: 'setPaused', paused });
    this.#read();
    if (this.pauseRefusal !== undefined) return Promise.reject(this.pauseRefusal);
    this.paused = paused;
    return Promise.resolve();
  }

  scale(request: ScaleRequest, signal: AbortSignal): Promise<ScaleResult> {
    this.calls.push({ method: 'scale', request });
    return this.onScale(request, signal);
  }

  triggerView(signal: AbortSignal): Promise<{ height: number; committed: boolean }> {
    this.calls.push({ method: 'triggerView' });
    return this.onTriggerView(signal);
  }

  departure(pod: string, timeoutMs: number, signal: AbortSignal): Promise<Departure> {
    this.calls.push({ method: 'departure', pod, timeoutMs });
    return this.onDeparture(pod, timeoutMs, signal);
  }

  metrics(): Promise<{ contentType: string; body: string }> {
    this.#read();
    return Promise.resolve({
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      body: this.metricsBody,
    });
  }

  #read(): void {
    if (this.failReads !== undefined) throw this.failReads;
  }
}
