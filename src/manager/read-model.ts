// What the readers of the manager's state — the scaler, the status view and the control plane —
// are given: one snapshot of the desired state, the planner's decisions (phase, code, reason),
// the chain as the chain view last read it, the journal's actions, the keys' presence and the
// manager's flags, plus the events that say when any of it changed. Read-only: what a reader may
// also *do* goes through a narrow port of its own (ManagerControl, ViewDriver, ReplicaTarget,
// ClusterPods), never through the manager. The composition root (compose.ts) hands it out.
import type { EventEmitter } from 'node:events';
import type { MempoolTx } from './chain/port.ts';
import type { SourceStatus } from './discovery/port.ts';
import type { ChainIdentity } from './journal/journal.ts';
import type { JournalFailure } from './journal/journal-health.ts';
import type {
  ActionRecord,
  ChainCapabilities,
  ChainValidator,
  DesiredState,
  KeyEntry,
  ValidatorId,
} from './model.ts';
import type { PhaseChange } from './phase-tracker.ts';
import type { MinimumSet } from './planner/minimum-set.ts';
import type { ChainTrust, Decision, KeyLookup } from './planner/plan.ts';

/** The chain as the chain view last read it (a `ChainView` is one). */
export interface ChainSnapshot {
  readonly height: number;
  /** The highest height ever seen (the trust rule's mark). */
  readonly highest: number;
  readonly healthy: boolean;
  readonly lastError: string | undefined;
  /** Manager-clock ms of the last successful read. */
  readonly lastSuccessAt: number | undefined;
  /** The newest block's time, per its header (ms). */
  readonly lastBlockTime: number | undefined;
  readonly trusted: boolean;
  readonly untrustedReason: string | undefined;
  /** Validator rows by address. */
  readonly validators: ReadonlyMap<string, ChainValidator>;
  /** Address → highest height it signed a committed certificate at. */
  readonly signers: ReadonlyMap<string, number>;
  /** Pending transactions by signer address. */
  readonly mempool: ReadonlyMap<string, MempoolTx>;
}

/** The quorum as it stands now: rows it counts, and the addresses of the rows that vote. */
export interface QuorumNow {
  /** Rows the quorum counts now (pending stakes included: they are rows once they commit). */
  readonly rows: number;
  /** Addresses of the counted rows that vote now (a row whose key nobody holds is not one). */
  readonly voters: ReadonlySet<string>;
}

/** The journal's actions: the open ones, each validator's newest, and pages of the history. */
export interface ActionsView {
  readonly open: ReadonlyMap<ValidatorId, ActionRecord>;
  readonly latest: ReadonlyMap<ValidatorId, ActionRecord>;
  readonly stakeHeights: ReadonlyMap<ValidatorId, number>;
  page(query: {
    limit: number;
    before?: number | undefined;
    validatorId?: ValidatorId | undefined;
  }): ActionRecord[];
}

/** The keys as the keys source holds them (which ids have one, and whether they parse). */
export interface KeysView extends KeyLookup {
  /** The keys source has been read once. */
  readonly loaded: boolean;
  /** Read, and no Secret there (keys/key-store.ts): a scale-down is refused (scale-rules.ts). */
  readonly absent?: boolean;
  get(id: ValidatorId): KeyEntry | undefined;
}

/** What a reader may wait on: the same events the manager emits. */
export interface ReadModelEvents {
  height: [number];
  phase: [PhaseChange];
  action: [ActionRecord];
  paused: [boolean];
  /** The chain stopped or started again being trusted (with the reason while not). */
  trust: [ChainTrust];
}

export interface ReadModel {
  /** Where the validators come from: `kubernetes` or `static`. */
  readonly discovery: string;
  desired(): DesiredState;
  /** Every validator's decision now (phase, code, reason; hook holds included). */
  plan(): Decision[];
  /** One validator's decision now, as a reconcile of it would decide. */
  planOne(id: ValidatorId): Decision | undefined;
  readonly keys: KeysView;
  readonly chain: ChainSnapshot;
  readonly actions: ActionsView;
  /** Discovery has read the validators' layout once. */
  informersSynced(): boolean;
  /** Discovery synced, keys read, the chain answered once, and the journal is this chain's. */
  isSynced(): boolean;
  /** Synced, and (when leading or without election) working. */
  isReady(): boolean;
  readonly isLeader: boolean;
  readonly leaderIdentity: string | undefined;
  readonly paused: boolean;
  readonly trust: ChainTrust;
  readonly queueDepth: number;
  /** The minimum set in force (lowered by a forced scale); undefined while not known. */
  minimumSet(): MinimumSet | undefined;
  /** The minimum set as configured, before any forced scale. */
  baseMinimumSet(): MinimumSet | undefined;
  informerStatus(): SourceStatus[];
  journalState(): {
    chain: ChainIdentity | undefined;
    setAside: { to: string; reason: string } | undefined;
    /** The journal's last failed write, until one succeeds. */
    failure?: JournalFailure | undefined;
  };
  /** What the chain can do (the scaler's refusals read it). */
  readonly capabilities: ChainCapabilities;
  /** The quorum as it stands now: rows it counts, addresses that vote (planner/pacing.ts). */
  quorum(): QuorumNow;
  /**
   * The addresses `id`'s pod's node may sign with (planner/signers.ts): the one it is known to
   * sign with, else its current and former keys'. Drains and departures are judged on these.
   */
  addressesOf(id: ValidatorId): readonly string[];
  readonly events: EventEmitter<ReadModelEvents>;
}

/** What a reader may ask the manager to do. */
export interface ManagerControl {
  /** Pauses or resumes every manager; rejects (NOT_LEADER, …) with nothing changed. */
  setPaused(paused: boolean): Promise<void>;
  /** Re-queues every known validator (after the scaler marked pods draining). */
  enqueueAll(): void;
}

/** Moving a chain with a manual pacemaker, and asking the chain view to read again now. */
export interface ViewDriver {
  /** The chain's height now, read from the chain (not the view). */
  height(signal: AbortSignal): Promise<number>;
  triggerView(signal: AbortSignal): Promise<void>;
  /** Reads the chain again now. */
  poke(): void;
  /** A block's time (ms) from its header, when it can be read. */
  blockTime(height: number): Promise<number | undefined>;
}
