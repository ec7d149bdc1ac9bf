// What the control RPC needs from the manager, as a narrow interface, and its implementation
// over a running Manager. Routes depend on this, not on the Manager class.
import type { EventEmitter } from 'node:events';
import type { Manager, ManagerEvents } from '../manager.ts';
import type { Decision } from '../planner/plan.ts';
import { Scaler, type ScaleRequest, type ScaleResult } from '../scale/scaler.ts';
import {
  summarizeAction,
  validatorStatuses,
  type ActionSummary,
  type ValidatorStatus,
} from '../status.ts';

export interface Readiness {
  ready: boolean;
  synced: boolean;
  leader: boolean;
  leaderIdentity: string | null;
  paused: boolean;
  chain: { healthy: boolean; height: number; lastError: string | null };
  informers: { name: string; synced: boolean; restarts: number; lastError: string | null }[];
  queueDepth: number;
}

export interface PlanView {
  synced: boolean;
  paused: boolean;
  height: number;
  actions: {
    key: string;
    id: string | null;
    action: 'stake' | 'unstake';
    waitingFor: string | null;
    reason: string;
  }[];
}

export interface ControlPlane {
  readiness(): Readiness;
  validators(): ValidatorStatus[];
  plan(): PlanView;
  actions(query: { limit: number; before?: number | undefined; validator?: string | undefined }): {
    actions: ActionSummary[];
    next: number | null;
  };
  setPaused(paused: boolean): void;
  scale(request: ScaleRequest, signal: AbortSignal): Promise<ScaleResult>;
  triggerView(signal: AbortSignal): Promise<{ height: number }>;
  metrics(): Promise<{ contentType: string; body: string }>;
  readonly events: EventEmitter<ManagerEvents>;
}

export function planView(
  decisions: readonly Decision[],
  state: { synced: boolean; paused: boolean; height: number },
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

/** The control plane of a running manager. */
export class ManagerControlPlane implements ControlPlane {
  readonly #manager: Manager;
  readonly scaler: Scaler;

  constructor(manager: Manager, scaler = new Scaler(manager)) {
    this.#manager = manager;
    this.scaler = scaler;
  }

  get events(): EventEmitter<ManagerEvents> {
    return this.#manager.events;
  }

  readiness(): Readiness {
    const m = this.#manager;
    return {
      ready: m.isReady(),
      synced: m.isSynced(),
      leader: m.isLeader,
      leaderIdentity: m.leaderIdentity ?? null,
      paused: m.paused,
      chain: {
        healthy: m.chain.healthy,
        height: m.chain.height,
        lastError: m.chain.lastError ?? null,
      },
      informers: m.informerStatus().map((i) => ({ ...i, lastError: i.lastError ?? null })),
      queueDepth: m.queueDepth,
    };
  }

  validators(): ValidatorStatus[] {
    return validatorStatuses(this.#manager);
  }

  plan(): PlanView {
    const m = this.#manager;
    return planView(m.plan(), { synced: m.isSynced(), paused: m.paused, height: m.chain.height });
  }

  actions(query: { limit: number; before?: number | undefined; validator?: string | undefined }): {
    actions: ActionSummary[];
    next: number | null;
  } {
    const page = this.#manager.book.journal.page({
      limit: query.limit + 1,
      before: query.before,
      validatorId: query.validator,
    });
    const actions = page.slice(0, query.limit).map(summarizeAction);
    return { actions, next: page.length > query.limit ? (actions.at(-1)?.seq ?? null) : null };
  }

  setPaused(paused: boolean): void {
    this.#manager.setPaused(paused);
  }

  scale(request: ScaleRequest, signal: AbortSignal): Promise<ScaleResult> {
    return this.scaler.scale(request, signal);
  }

  async triggerView(signal: AbortSignal): Promise<{ height: number }> {
    await this.#manager.adapter.triggerView(signal);
    const height = await this.#manager.rpc.height({ signal });
    this.#manager.chain.poke();
    return { height };
  }

  async metrics(): Promise<{ contentType: string; body: string }> {
    const registry = this.#manager.metrics.registry;
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}
