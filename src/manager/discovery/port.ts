// The discovery port: where the manager learns which validators are wanted, whether their nodes
// are ready, where their nodes answer, and their keys. Two implementations: Kubernetes (informers
// on pods, StatefulSets and the keys Secret) and static (a validators file and a keys file). The
// port speaks the manager's terms: a source keeps its own types (client-node's) behind it.
import type { Clock } from '../clock.ts';
import type { PauseRecord } from '../pause/pause-state.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { DesiredState, DesiredValidator, IdFormat, ValidatorId } from '../model.ts';

/**
 * The discovery modes: the one list CM_DISCOVERY's values (config.ts), its help and reference,
 * and each source's `mode` derive from.
 */
export const discoveryModes = ['kubernetes', 'static'] as const;
export type DiscoveryMode = (typeof discoveryModes)[number];

/**
 * What an Event is about, as the source names it: a kind and a name. The manager only hands a
 * target back to the source's `events`; a source's own targets may carry more behind this type
 * (the Kubernetes source's: the object's API version, namespace and uid).
 */
export interface EventTarget {
  readonly kind: string;
  readonly name: string;
}

export type EventType = 'Normal' | 'Warning';

/** Where Events go: the Kubernetes API (EventRecorder), or the log when there is no cluster. */
export interface EventSink {
  /** Never throws. */
  record(target: EventTarget, type: EventType, reason: string, message: string): Promise<void>;
}

/** The validators' keys as a source holds them (a Secret, a keys file). */
export interface KeySet {
  /** Entry name → the key's text, for the chain's key codec; entries not named like an id are not keys. */
  readonly keys: Readonly<Record<string, string>>;
  /** Changes whenever the keys may have (a Secret's resourceVersion, a file's digest). */
  readonly version: string | undefined;
  /**
   * The last moment any key may have changed, as far as the source can tell (a Secret's own
   * record: secret-written.ts); undefined when it cannot tell (the caller knows only "now").
   */
  readonly writtenBy: number | undefined;
}

/** How the source tells the manager that something it reads changed (the manager re-reads). */
export interface DiscoveryListener {
  /** The desired state may have changed: recompute soon (coalesced). */
  desiredChanged(): void;
  /** The desired state changed and a caller waits on it: recompute now. */
  desiredChangedNow(): void;
  /** The key material changed: read `keys()` again. */
  keysChanged(): void;
}

/** A validator pod by name, with the uid a request about it applies to. */
export interface PodRef {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

/** One input of the source and its health, as `GET /readyz` lists it under `informers`. */
export interface SourceStatus {
  name: string;
  synced: boolean;
  restarts: number;
  lastError: string | undefined;
}

/** What a source is given by the manager that composes it. */
export interface DiscoveryDeps {
  /** How the chain names validator ids (the chain port's `ids`). */
  ids: IdFormat;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}

export interface DiscoverySource {
  readonly mode: DiscoveryMode;
  /** Starts watching; resolves once every input has been read once (or failed to be). */
  start(listener: DiscoveryListener): Promise<void>;
  stop(): Promise<void>;
  /** The validators' layout has been read once (before that nothing can be decided). */
  readonly layoutSynced: boolean;
  /** Layout and keys have been read once. */
  readonly synced: boolean;
  /** The desired state now (pure over the source's caches, apart from its ready-since memory). */
  computeDesired(now: number): DesiredState;
  /** The validators' keys as the source holds them now; undefined when there are none. */
  keys(): KeySet | undefined;
  /** Names the key source in messages: `Secret validators-private-keys`, `keys file /etc/keys.yaml`. */
  readonly keysLabel: string;
  /** Where Events about key problems go. */
  keysTarget(): EventTarget | undefined;
  /** Where Events about one validator go (undefined: nowhere). */
  eventTarget(id: ValidatorId, entry: DesiredValidator | undefined): EventTarget | undefined;
  /** Where Events about the chain as a whole (trust) go. */
  chainTargets(): EventTarget[];
  /** A minimum set lowered by a forced scale, as recorded by the source; undefined when none. */
  forcedMinimumSet(): number | undefined;
  /** Why the control RPC cannot scale with this source (501 SCALE_UNSUPPORTED); undefined: it can. */
  scaleUnsupported(): string | undefined;
  /** Each input and its health. */
  status(): SourceStatus[];
  /** For the start and sync log lines. */
  describe(): Record<string, unknown>;
  readonly events: EventSink;
  /**
   * Deletes a validator pod so that its controller starts it again (a node that started before
   * its key was seen, docs/adr/0022), only while it still has `pod.uid`: `gone` when it is
   * already gone or replaced, `forbidden` when the manager may not delete pods (403). Absent
   * where there are no pods (static discovery).
   */
  restartPod?(pod: PodRef): Promise<'deleted' | 'gone' | 'forbidden'>;
  /**
   * Where the managers' pause is kept so that every manager and every new pod sees it (the Lease);
   * absent where there is no such place (static discovery: the manager keeps it in its journal).
   */
  pauseRecord?(): PauseRecord;
}
