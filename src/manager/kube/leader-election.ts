// Leader election on a coordination.k8s.io/v1 Lease, after client-go's algorithm: acquire when the
// lease is free or expired (judged by the lease's own duration and our observation time, not by
// clocks compared across hosts), renew every retry period, step down when renewal has failed for
// the renew deadline, release on clean shutdown. Conflicts (409) mean somebody else won.
import type { V1Lease } from '@kubernetes/client-node';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { jittered, NO_JITTER, type JitterRange } from '../backoff.ts';
import { apiStatus } from './client.ts';
import type { CoordinationApi } from './lean-api.ts';

export interface LeaderElectorOptions {
  coordination: CoordinationApi;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  clock: Clock;
  logger: Logger;
  /** Called when this replica becomes leader; the signal aborts when it stops leading. */
  onStartedLeading: (signal: AbortSignal) => void;
  onStoppedLeading: () => void;
  /** Called whenever the observed holder changes (status). */
  onNewLeader?: (identity: string | undefined) => void;
}

interface Observation {
  holder: string | undefined;
  renewTime: string | undefined;
  /** Our clock when we saw this (holder, renewTime) first. */
  observedAt: number;
}

/** Runs the election loop until `stop()`; `isLeader` tells the current role. */
export class LeaderElector {
  readonly #options: LeaderElectorOptions;
  #leading: AbortController | undefined;
  #observed: Observation | undefined;
  #lastRenew = 0;
  #stopped = false;
  #wake: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #holder: string | undefined;

  constructor(options: LeaderElectorOptions) {
    this.#options = options;
  }

  get isLeader(): boolean {
    return this.#leading !== undefined;
  }

  /** The identity holding the lease as last observed. */
  get holder(): string | undefined {
    return this.#holder;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops the loop; a leader releases the lease so a follower can take over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.abort();
    await this.#loop;
    if (this.#leading !== undefined) {
      this.#stepDown();
      await this.#release();
    }
  }

  async #run(): Promise<void> {
    const { clock, retryPeriodMs } = this.#options;
    while (!this.#stopped) {
      const ok = await this.#tryAcquireOrRenew();
      if (this.#leading !== undefined) {
        if (ok) this.#lastRenew = clock.now();
        else if (clock.now() - this.#lastRenew >= this.#options.renewDeadlineMs) {
          this.#options.logger.warn(
            { identity: this.#options.identity },
            'could not renew the lease in time; stepping down',
          );
          this.#stepDown();
        }
      } else if (ok) {
        this.#lastRenew = clock.now();
        this.#leading = new AbortController();
        this.#options.logger.info(
          { identity: this.#options.identity, lease: this.#options.name },
          'became leader',
        );
        this.#options.onStartedLeading(this.#leading.signal);
      }
      this.#wake = new AbortController();
      await clock
        .sleep(
          jittered(retryPeriodMs, this.#leading === undefined ? FOLLOWER_JITTER : NO_JITTER),
          this.#wake.signal,
        )
        .catch(() => undefined);
    }
  }

  #stepDown(): void {
    const leading = this.#leading;
    if (leading === undefined) return;
    this.#leading = undefined;
    leading.abort(new Error('lost leadership'));
    this.#options.logger.info({ identity: this.#options.identity }, 'stopped leading');
    this.#options.onStoppedLeading();
  }

  /** One attempt; true when we hold the lease afterwards. */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const { coordination, namespace, name, identity, leaseDurationMs, clock } = this.#options;
    const now = new Date(clock.now());
    let lease: V1Lease | undefined;
    try {
      lease = await coordination.readNamespacedLease({ name, namespace });
    } catch (error: unknown) {
      if (apiStatus(error) !== 404) {
        this.#options.logger.debug({ err: error }, 'lease read failed');
        return false;
      }
    }
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      renewTime: now,
    };
    if (lease === undefined) {
      try {
        await coordination.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: { ...spec, acquireTime: now, leaseTransitions: 0 },
          },
        });
        this.#observe(identity, now.toISOString());
        return true;
      } catch (error: unknown) {
        this.#options.logger.debug({ err: error }, 'lease create failed');
        return false;
      }
    }

    const holder = lease.spec?.holderIdentity || undefined;
    const renewTime =
      lease.spec?.renewTime === undefined
        ? undefined
        : new Date(lease.spec.renewTime).toISOString();
    this.#observe(holder, renewTime);
    const durationMs =
      (lease.spec?.leaseDurationSeconds ?? Math.ceil(leaseDurationMs / 1000)) * 1000;
    const expired =
      this.#observed !== undefined && clock.now() >= this.#observed.observedAt + durationMs;
    if (holder !== undefined && holder !== identity && !expired) return false;

    const transitions = (lease.spec?.leaseTransitions ?? 0) + (holder === identity ? 0 : 1);
    try {
      await coordination.replaceNamespacedLease({
        name,
        namespace,
        body: {
          metadata: { ...lease.metadata, name, namespace },
          spec: {
            ...lease.spec,
            ...spec,
            acquireTime: holder === identity ? (lease.spec?.acquireTime ?? now) : now,
            leaseTransitions: transitions,
          },
        },
      });
      this.#observe(identity, now.toISOString());
      return true;
    } catch (error: unknown) {
      this.#options.logger.debug(
        { err: error, conflict: apiStatus(error) === 409 },
        'lease update failed',
      );
      return false;
    }
  }

  #observe(holder: string | undefined, renewTime: string | undefined): void {
    const seen = this.#observed;
    if (seen === undefined || seen.holder !== holder || seen.renewTime !== renewTime) {
      this.#observed = { holder, renewTime, observedAt: this.#options.clock.now() };
    }
    if (holder !== this.#holder) {
      this.#holder = holder;
      this.#options.onNewLeader?.(holder);
    }
  }

  async #release(): Promise<void> {
    const { coordination, namespace, name, identity } = this.#options;
    try {
      const lease = await coordination.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== identity) return;
      await coordination.replaceNamespacedLease({
        name,
        namespace,
        body: {
          metadata: lease.metadata ?? { name },
          spec: {
            ...lease.spec,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            renewTime: new Date(this.#options.clock.now()),
          },
        },
      });
      this.#options.logger.info({ identity }, 'released the lease');
    } catch (error: unknown) {
      this.#options.logger.warn({ err: error }, 'could not release the lease');
    }
  }
}

/** Followers retry with up to 20 % jitter (client-go's JitterFactor 1.2); the leader does not. */
const FOLLOWER_JITTER: JitterRange = { min: 1, max: 1.2 };
