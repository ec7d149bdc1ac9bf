// The read model's assembly (read-model.ts's ReadModel) over the manager's parts: what the readers
// — the scaler, the status view, the control plane — see of the desired state, the plan, the
// chain view, the journal's actions and the manager's flags, each read afresh on every call. The
// manager's own questions (is it synced, the minimum set in force) are answered here too, once.
import type { EventEmitter } from 'node:events';
import type { SourceStatus } from './discovery/port.ts';
import type { ChainView } from './chain/chain-view.ts';
import type { KeyStore } from './keys/key-store.ts';
import type { ChainCapabilities, DesiredState, ValidatorId } from './model.ts';
import type { JournalState } from './parts/journal-binding.ts';
import type { ManagerCore } from './parts/manager-core.ts';
import type { ReconcileLoop } from './parts/reconcile-loop.ts';
import { resolveMinimumSet, type MinimumSet } from './planner/minimum-set.ts';
import { quorumNow } from './planner/pacing.ts';
import type { ChainTrust, Decision } from './planner/plan.ts';
import { addressesOf } from './planner/signers.ts';
import type { ActionsView, QuorumNow, ReadModel, ReadModelEvents } from './read-model.ts';

/** What the read model reads: what every part shares, and the loop (built after it). */
export interface ReadModelParts extends ManagerCore {
  loop(): ReconcileLoop;
}

/** The manager's state as its readers see it (never the manager itself). */
export class ManagerReadModel implements ReadModel {
  readonly #p: ReadModelParts;
  readonly discovery: string;
  readonly keys: KeyStore;
  readonly chain: ChainView;
  readonly actions: ActionsView;
  readonly capabilities: ChainCapabilities;
  readonly events: EventEmitter<ReadModelEvents>;

  constructor(parts: ReadModelParts) {
    this.#p = parts;
    this.discovery = parts.discovery.mode;
    this.keys = parts.keys;
    this.chain = parts.chain;
    this.capabilities = parts.chainPort.capabilities;
    this.events = parts.events;
    const book = parts.book;
    this.actions = {
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
    };
  }

  desired(): DesiredState {
    return this.#p.desired();
  }

  plan(): Decision[] {
    return this.#p.loop().plan();
  }

  planOne(id: ValidatorId): Decision | undefined {
    return this.#p.loop().planOne(id);
  }

  /** Discovery has read the validators' layout once (before that, no layout is known). */
  informersSynced(): boolean {
    return this.#p.discovery.layoutSynced;
  }

  /** Discovery synced, keys read, the chain answered once, the journal is this chain's, pause known. */
  isSynced(): boolean {
    const { discovery, keys, chain, journal, pause } = this.#p;
    return discovery.synced && keys.loaded && chain.synced && journal.checked && pause.known;
  }

  /** Ready = synced, and (when leading or without election) the work queue runs. */
  isReady(): boolean {
    return this.isSynced() && (this.#p.election.following || this.#p.loop().running);
  }

  get isLeader(): boolean {
    return this.#p.election.isLeader;
  }

  get leaderIdentity(): string | undefined {
    return this.#p.election.leaderIdentity;
  }

  get paused(): boolean {
    return this.#p.pause.paused;
  }

  /** Whether the chain view can be acted on (see ChainView: it went back or forked). */
  get trust(): ChainTrust {
    return { trusted: this.chain.trusted, reason: this.chain.untrustedReason };
  }

  get queueDepth(): number {
    return this.#p.loop().queueDepth;
  }

  /**
   * The minimum validator set in force: CM_MIN_VALIDATORS (auto: a quorum of the genesis set, once
   * read), lowered by a forced scale recorded on the validator StatefulSet.
   */
  minimumSet(): MinimumSet | undefined {
    return this.#minimumSet(this.#p.discovery.forcedMinimumSet());
  }

  /** The minimum set as configured (auto: a quorum of the genesis set), before any forced scale. */
  baseMinimumSet(): MinimumSet | undefined {
    return this.#minimumSet(undefined);
  }

  /** Each input of discovery (informers, or the static files) and its health. */
  informerStatus(): SourceStatus[] {
    return this.#p.discovery.status();
  }

  /** The chain the journal is bound to, and the journal of another chain set aside at start. */
  journalState(): JournalState {
    return this.#p.journal.state();
  }

  quorum(): QuorumNow {
    return quorumNow(this.#p.loop().planInput());
  }

  addressesOf(id: ValidatorId): readonly string[] {
    return addressesOf(this.#p.loop().planInput(), id);
  }

  #minimumSet(forced: number | undefined): MinimumSet | undefined {
    return resolveMinimumSet({
      configured: this.#p.config.minValidators,
      genesisCount: this.chain.genesisCount,
      forced,
      capabilities: this.capabilities,
    });
  }
}
