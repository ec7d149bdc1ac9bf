// Leader election on a coordination.k8s.io/v1 Lease, after client-go's algorithm, fenced so that
// two replicas never act at once (issue 30; docs/adr/0024-fenced-leadership.md):
// - a lease held by another replica is taken over only once it has not changed for its duration
//   by our own observation, on a monotonic clock (never by clocks compared across hosts, never by
//   a wall clock that can be stepped); a released one (holder "") at once;
// - a leader steps down the moment it reads another holder or no Lease (deleted), and when its
//   last successful renewal began a renew deadline ago (monotonic, by a timer: a hung request or a
//   stepped clock cannot keep it);
// - whoever creates the Lease (none was there: a first start, or a deleted one) waits a renew
//   deadline after the create returned, renewing, before it acts: any replica that created one
//   just before it (deleted since, unseen) has stopped acting by then, since it cannot renew a
//   Lease that is gone and its fence runs out at its deadline.
// `mayAct()` is that fence, checked by the senders; `term` numbers each leadership. A leader
// releases the lease on a clean stop.
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
  /**
   * Every Lease read (undefined: there is none), with the monotonic time the read began, before it
   * is acted on: followers learn what is kept on the Lease (the pause).
   */
  onLeaseRead?: (lease: V1Lease | undefined, readStartedAt: number) => void;
  /** Annotations a Lease this replica creates (again) starts with (state kept on the Lease). */
  annotations?: () => Record<string, string>;
}

/** What was last read of the Lease, and when (monotonic) it was first read that way. */
interface Observation {
  holder: string | undefined;
  renewTime: string | undefined;
  observedAt: number;
}

/** How one try ended: we hold the lease, someone else does, nobody does, or we cannot tell. */
type TryResult = 'held' | 'other' | 'gone' | 'failed';

/** The Lease names us: written by us in `term`; we may act from `actFrom` (monotonic) on. */
interface Hold {
  readonly term: number;
  readonly actFrom: number;
}

interface Leading {
  readonly controller: AbortController;
  readonly term: number;
  /** Monotonic start of the last renewal that succeeded: the fence runs from there. */
  renewedAt: number;
  cancelDeadline: () => void;
}

/** Runs the election loop until `stop()`; `isLeader` tells the current role. */
export class LeaderElector {
  readonly #options: LeaderElectorOptions;
  #leading: Leading | undefined;
  #hold: Hold | undefined;
  #observed: Observation | undefined;
  /** The highest transitions count read or written so far (terms go on from it). */
  #seenTransitions = 0;
  /** A Lease was read or written at least once (a first one starts at 0 transitions). */
  #sawLease = false;
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

  /** The term of the current leadership (the Lease's transitions count it was taken with). */
  get term(): number | undefined {
    return this.#leading?.term;
  }

  /**
   * The fence: leading, and the last successful renewal began less than a renew deadline ago by
   * the monotonic clock. A replica that cannot be sure it still holds the lease sends nothing.
   */
  mayAct(): boolean {
    const leading = this.#leading;
    return (
      leading !== undefined &&
      this.#options.clock.monotonic() - leading.renewedAt < this.#options.renewDeadlineMs
    );
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
    if (this.#leading !== undefined) this.#stepDown('stopping');
    if (this.#hold !== undefined) await this.#release();
    this.#hold = undefined;
  }

  #isStopped(): boolean {
    return this.#stopped;
  }

  async #run(): Promise<void> {
    const { clock, retryPeriodMs } = this.#options;
    while (!this.#stopped) {
      const started = clock.monotonic();
      const result = await this.#tryAcquireOrRenew();
      if (this.#isStopped()) break; // a try that ended during stop() is not acted on
      this.#settle(result, started);
      this.#wake = new AbortController();
      await clock
        .sleep(
          jittered(retryPeriodMs, this.#leading === undefined ? FOLLOWER_JITTER : NO_JITTER),
          this.#wake.signal,
        )
        .catch(() => undefined);
    }
  }

  /** Acts on one try's result; `started` is the monotonic time the try began. */
  #settle(result: TryResult, started: number): void {
    if (result === 'other' || result === 'gone') {
      this.#hold = undefined;
      this.#stepDown(
        result === 'gone' ? 'the Lease was deleted' : `the lease is held by ${this.#holder ?? '?'}`,
      );
      return;
    }
    // A failed try: a leader's deadline timer steps it down if no renewal succeeds in time.
    if (result === 'failed') return;
    const leading = this.#leading;
    if (leading !== undefined) {
      this.#renewed(leading, started);
      return;
    }
    const hold = this.#hold;
    if (hold === undefined || this.#options.clock.monotonic() < hold.actFrom) return;
    const next: Leading = {
      controller: new AbortController(),
      term: hold.term,
      renewedAt: started,
      cancelDeadline: () => undefined,
    };
    this.#leading = next;
    this.#renewed(next, started);
    this.#options.logger.info(
      { identity: this.#options.identity, lease: this.#options.name, term: next.term },
      'became leader',
    );
    this.#options.onStartedLeading(next.controller.signal);
  }

  /** A renewal that began at `started` succeeded: the fence now runs a renew deadline from it. */
  #renewed(leading: Leading, started: number): void {
    const { clock, renewDeadlineMs } = this.#options;
    leading.renewedAt = started;
    leading.cancelDeadline();
    leading.cancelDeadline = clock.setTimer(
      () => {
        if (this.#leading !== leading || this.mayAct()) return;
        this.#hold = undefined;
        this.#stepDown(`could not renew the lease within ${renewDeadlineMs} ms`);
      },
      Math.max(0, started + renewDeadlineMs - clock.monotonic()),
    );
  }

  #stepDown(why: string): void {
    const leading = this.#leading;
    if (leading === undefined) return;
    this.#leading = undefined;
    leading.cancelDeadline();
    leading.controller.abort(new Error('lost leadership'));
    const { logger, identity } = this.#options;
    const line = { identity, term: leading.term, reason: why };
    if (why === 'stopping') logger.info(line, 'stopped leading');
    else logger.warn(line, `stopped leading: ${why}`);
    this.#options.onStoppedLeading();
  }

  /** One attempt: read the Lease, then create, take over or renew it when that is allowed. */
  async #tryAcquireOrRenew(): Promise<TryResult> {
    const { coordination, namespace, name, clock } = this.#options;
    const started = clock.monotonic();
    let lease: V1Lease | undefined;
    try {
      lease = await coordination.readNamespacedLease({ name, namespace });
    } catch (error: unknown) {
      if (apiStatus(error) !== 404) {
        this.#options.logger.debug({ err: error }, 'lease read failed');
        return 'failed';
      }
    }
    this.#options.onLeaseRead?.(lease, started);
    return lease === undefined ? this.#create() : this.#update(lease);
  }

  /**
   * No Lease (never made, or deleted). A leader stops at once: the Lease it renewed is gone. The
   * Lease is created again here, by whoever reads its absence first; the creator acts only a
   * renew deadline after the create returned (see the file's head).
   */
  async #create(): Promise<TryResult> {
    const { coordination, namespace, name, identity, clock, renewDeadlineMs } = this.#options;
    this.#observe(undefined, undefined);
    if (this.#leading !== undefined) return 'gone';
    const now = new Date(clock.now());
    const term = this.#sawLease ? this.#seenTransitions + 1 : 0;
    try {
      await coordination.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace, annotations: this.#options.annotations?.() ?? {} },
          spec: { ...this.#spec(now), acquireTime: now, leaseTransitions: term },
        },
      });
    } catch (error: unknown) {
      this.#options.logger.debug({ err: error }, 'lease create failed');
      return 'failed';
    }
    this.#hold = { term, actFrom: clock.monotonic() + renewDeadlineMs };
    this.#seenTransitions = term;
    this.#sawLease = true;
    this.#observe(identity, now.toISOString());
    this.#options.logger.info(
      { identity, lease: name, term, actInMs: renewDeadlineMs },
      'created the lease; acting after a renew deadline, if it is still ours then',
    );
    return 'held';
  }

  async #update(lease: V1Lease): Promise<TryResult> {
    const { coordination, namespace, name, identity, clock } = this.#options;
    const holder = lease.spec?.holderIdentity || undefined;
    const renewTime =
      lease.spec?.renewTime === undefined
        ? undefined
        : new Date(lease.spec.renewTime).toISOString();
    const transitions = lease.spec?.leaseTransitions ?? 0;
    this.#sawLease = true;
    this.#seenTransitions = Math.max(this.#seenTransitions, transitions);
    this.#observe(holder, renewTime);
    const mine = holder === identity;
    const durationMs =
      (lease.spec?.leaseDurationSeconds ?? Math.ceil(this.#options.leaseDurationMs / 1000)) * 1000;
    if (holder !== undefined && !mine && !this.#expired(durationMs)) return 'other';
    // Ours already (renewing, or waiting to act on a Lease we created): the same term. Otherwise
    // a new term, even on a lease that still names us (a restart, or a lapsed leadership).
    const hold = mine ? this.#hold : undefined;
    const term = hold?.term ?? this.#seenTransitions + 1;
    const now = new Date(clock.now());
    try {
      await coordination.replaceNamespacedLease({
        name,
        namespace,
        body: {
          metadata: { ...lease.metadata, name, namespace },
          spec: {
            ...lease.spec,
            ...this.#spec(now),
            acquireTime: hold === undefined ? now : (lease.spec?.acquireTime ?? now),
            leaseTransitions: term,
          },
        },
      });
    } catch (error: unknown) {
      this.#options.logger.debug(
        { err: error, conflict: apiStatus(error) === 409 },
        'lease update failed',
      );
      return 'failed';
    }
    // Taken over an expired or released lease: nobody else can be acting (see the file's head).
    this.#hold = hold ?? { term, actFrom: 0 };
    this.#seenTransitions = term;
    this.#observe(identity, now.toISOString());
    return 'held';
  }

  #spec(now: Date): { holderIdentity: string; leaseDurationSeconds: number; renewTime: Date } {
    return {
      holderIdentity: this.#options.identity,
      leaseDurationSeconds: Math.ceil(this.#options.leaseDurationMs / 1000),
      renewTime: now,
    };
  }

  /** The observed lease has not changed for `durationMs` by our monotonic clock. */
  #expired(durationMs: number): boolean {
    const seen = this.#observed;
    return seen !== undefined && this.#options.clock.monotonic() >= seen.observedAt + durationMs;
  }

  #observe(holder: string | undefined, renewTime: string | undefined): void {
    const seen = this.#observed;
    if (seen === undefined || seen.holder !== holder || seen.renewTime !== renewTime)
      this.#observed = { holder, renewTime, observedAt: this.#options.clock.monotonic() };
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
