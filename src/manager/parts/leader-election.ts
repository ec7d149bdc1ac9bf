// Leader election, a part of the manager (runnable.ts): it owns the elector when the manager
// elects (a Lease in the cluster: kube/lease-election.ts builds it) and answers who leads. Without
// an elector this manager is the only one: it leads, under its own identity. The elector's
// callbacks start and cancel the reconcile loop's workers (controller-runtime's leader-election
// runnables) and carry the pause the leader keeps on the Lease.
import type { Clock } from '../clock.ts';
import { ManagerError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Leadership } from '../reconcile/send-fence.ts';
import type { Runnable } from '../runnable.ts';

/** What the manager asks of an elector, in its own terms (the Lease stays behind it). */
export interface Elector extends Leadership {
  readonly isLeader: boolean;
  /** The identity holding the lease as last observed. */
  readonly holder: string | undefined;
  start(): void;
  /** Stops electing; a leader releases the lease so that a follower can take over at once. */
  stop(): Promise<void>;
}

/** What an elector tells the manager, and what the leader keeps on its record. */
export interface ElectorCallbacks {
  onStartedLeading(): void;
  onStoppedLeading(): void;
  /** The pause as the elector's read of its record found it (undefined: none recorded). */
  onPauseRead(paused: boolean | undefined, readStartedAt: number): void;
  /** What the leader writes on its record beside the lease (the pause). */
  annotations(): Record<string, string>;
}

/** What the manager shares with the elector it builds. */
export interface ElectionDeps {
  clock: Clock;
  logger: Logger;
}

/** Builds an elector (compose.ts: the Lease's, when discovery is Kubernetes and config asks). */
export type ElectorFactory = (callbacks: ElectorCallbacks, deps: ElectionDeps) => Elector;

export class LeaderElection implements Runnable {
  readonly name = 'leader election';
  readonly #elector: Elector | undefined;
  readonly #identity: string;

  /** `factory` undefined: no election (one manager, which leads as `identity`). */
  constructor(
    factory: ElectorFactory | undefined,
    callbacks: ElectorCallbacks,
    deps: ElectionDeps & { identity: string },
  ) {
    this.#identity = deps.identity;
    this.#elector = factory?.(callbacks, deps);
  }

  /** Whether this manager elects (otherwise it always leads). */
  get elects(): boolean {
    return this.#elector !== undefined;
  }

  get isLeader(): boolean {
    return this.#elector === undefined || this.#elector.isLeader;
  }

  /** Electing and not leading: a follower (it is ready without running workers). */
  get following(): boolean {
    return this.#elector !== undefined && !this.#elector.isLeader;
  }

  /** Who leads: the lease's holder as last observed, or this manager without election. */
  get leaderIdentity(): string | undefined {
    return this.#elector === undefined ? this.#identity : this.#elector.holder;
  }

  /** Throws NOT_LEADER (naming the leader) unless this manager leads: nothing was changed. */
  requireLeader(): void {
    if (this.isLeader) return;
    const leader = this.leaderIdentity;
    throw new ManagerError(
      'NOT_LEADER',
      `this manager (${this.#identity}) does not lead${leader === undefined ? '' : `; ${leader} does`}: ask the leader (nothing changed)`,
      { details: { leader: leader ?? null } },
    );
  }

  /** What the send fence reads (undefined without election: the fence never closes). */
  get leadership(): Leadership | undefined {
    return this.#elector;
  }

  start(): Promise<void> {
    this.#elector?.start();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.#elector?.stop();
  }
}
