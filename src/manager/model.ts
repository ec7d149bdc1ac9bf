// The manager's vocabulary: what the cluster wants per validator id, what the chain shows, and
// the actions in flight. Plain data, shared by discovery, the planner, the reconciler and the RPC.

/** A validator id as the keys source names it (its format is the chain port's: `IdFormat`). */
export type ValidatorId = string;

/**
 * How a chain numbers its validator ids, as data (the chain's definition declares it; the control
 * RPC serves it at `GET /v1/chain`, so the debug CLI reads a person's `4` the way the manager
 * does). An id is `prefix` + a number from `min` to `max`, zero-padded to `width` digits (0: not
 * padded): a keys Secret naming its keys "005" is (`''`, 3, 1, …); a chain with ids like "val-5"
 * writes (`'val-'`, 0, …). Every bound on a number of validators is the chain's range.
 */
export interface IdFormatSpec {
  readonly prefix: string;
  readonly width: number;
  readonly min: number;
  readonly max: number;
}

/**
 * How a chain names its validators' keys, read off its `IdFormatSpec` (id-format.ts builds it).
 * Discovery maps pods and files to ids with it, the key store picks the keys source's validator
 * entries with it; the core assumes no format of its own.
 */
export interface IdFormat {
  /** The id of number `n` (an ordinal + 1, a number in a pod name); undefined outside `range`. */
  fromNumber(n: number): ValidatorId | undefined;
  /** The id a short text written by a person names (a file, an annotation, a flag), or undefined. */
  fromText(text: string): ValidatorId | undefined;
  /** True when `name` is an id exactly as the keys source names one. */
  isId(name: string): boolean;
  /** The numbers ids cover (for messages). */
  readonly range: { readonly min: number; readonly max: number };
  /** An id to show in messages. */
  readonly example: ValidatorId;
  /** The data it is read off. */
  readonly spec: IdFormatSpec;
}

export const Annotations = {
  /** `"true"` on a pod: the manager leaves its validator alone. */
  hold: 'cluster-manager.dev/hold',
  /** `"true"` on a pod: the pod is leaving (scale-down drain); its validator is not wanted. */
  draining: 'cluster-manager.dev/draining',
  /** On a StatefulSet: replicas to apply once the draining pods' validators have left the set. */
  scaleTarget: 'cluster-manager.dev/scale-target',
  /**
   * On a StatefulSet, beside `scaleTarget`: the replicas the drain started from (what the manager
   * saw and may overwrite). Replicas that differ when the drain ends were set by someone else, and
   * the drain gives way to them.
   */
  scaleFrom: 'cluster-manager.dev/scale-from',
  /** On a StatefulSet, beside `scaleTarget`: `"true"` when the drain was forced (`force: true`). */
  scaleForced: 'cluster-manager.dev/scale-forced',
  /** On a StatefulSet: the minimum validator set as lowered by a forced scale (`force: true`). */
  minimumSet: 'cluster-manager.dev/minimum-set',
  /** On the Lease: `"true"` while the managers are paused (`cluster-manager pause`), else `"false"`. */
  paused: 'cluster-manager.dev/paused',
  /** Published by the emulator's process kubelet: container port name → loopback host port. */
  hostPorts: 'kube-emulator.dev/host-ports',
} as const;

/** A validator pod as the manager sees it. */
export interface PodView {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly ready: boolean;
  /** Manager-clock ms since the pod has been continuously Ready (undefined when not Ready). */
  readonly readySince: number | undefined;
  /**
   * False when this pod (uid) is in its first Ready spell and no container has restarted: the
   * Ready debounce is for pods that flap. Undefined (a source that cannot tell): debounce.
   */
  readonly flapped?: boolean;
  readonly terminating: boolean;
  /**
   * Epoch ms at which the kubelet kills a terminating pod: its deletionTimestamp (the delete's time
   * plus its grace period). Undefined while it is not terminating, or from a source without pods.
   */
  readonly deletingAt?: number | undefined;
  readonly held: boolean;
  readonly draining: boolean;
  /** `http://host:port` of the node's own RPC, when it can be worked out. */
  readonly nodeRpcUrl: string | undefined;
  /** The service URL this validator would stake with. */
  readonly serviceUrl: string | undefined;
  /**
   * Epoch ms (whole seconds, as Kubernetes writes times) when the validator's node started: the
   * earlier of the pod's start and its validator container's current run (pod-view.ts). The key
   * its node holds was read no earlier. Undefined while that container is not running, or from a
   * source without pods (static discovery).
   */
  readonly startedAt?: number | undefined;
}

/** The owner of a validator pod. */
export interface StatefulSetView {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly replicas: number;
  readonly serviceName: string;
  readonly scaleTarget: number | undefined;
}

/** What the cluster wants for one id. */
export interface DesiredValidator {
  readonly id: ValidatorId;
  readonly wanted: boolean;
  /** Why it is (not) wanted, in words. */
  readonly wantedReason: string;
  readonly statefulSet: StatefulSetView | undefined;
  readonly ordinal: number | undefined;
  /** Absent while the pod does not exist (e.g. being recreated). */
  readonly pod: PodView | undefined;
  /** Two pods claim this id; nothing is done until that is fixed. */
  readonly conflict: string | undefined;
}

/** The cluster side as a whole. */
export interface DesiredState {
  readonly validators: ReadonlyMap<ValidatorId, DesiredValidator>;
  /** Wanted pods whose id cannot be known yet (annotation mapping, pod missing). */
  readonly unresolvedWanted: readonly string[];
  /** Problems worth reporting (unparseable names, collisions). */
  readonly problems: readonly string[];
}

/** On-chain status of a validator row. */
export const ChainStatus = {
  absent: 'absent',
  staked: 'staked',
  unstaking: 'unstaking',
  unstaked: 'unstaked',
  paused: 'paused',
} as const;
export type ChainStatus = (typeof ChainStatus)[keyof typeof ChainStatus];

export interface ChainValidator {
  readonly address: string;
  readonly status: ChainStatus;
  readonly stakedAmount: string;
  readonly unstakingHeight: number;
  readonly serviceUrl: string;
}

/**
 * What the chain can do (see chain/capabilities.ts for the profiles and their sources). The
 * planner's safety rules read these; they never assume.
 */
export interface ChainCapabilities {
  readonly profile: string;
  /** A validator staked after genesis syncs with the chain and then votes (state sync). */
  readonly lateJoinersVote: boolean;
  /** An unstaked row leaves the quorum; when false every row ever staked still counts in it. */
  readonly unstakeLeavesQuorum: boolean;
  /**
   * The leader's own vote counts toward the quorum. When false (Pocket V1: its RainTree router
   * drops a send to its own address) a height commits only when the *other* live voters are more
   * than 2/3 of all rows (planner/quorum.ts).
   */
  readonly leaderVoteCounts: boolean;
}

/**
 * What a stake carries besides the key and the service URL, as the chain's settings make it
 * (data, `ChainPort.stake`): the amount, a whole number of the chain's smallest unit written as
 * digits (it passes 2^53), that unit's name, and the further fields the chain's stake needs. The
 * chain also writes it as text, twice: `inputs` for a stake's fingerprint and `shown` for people.
 * The core reads neither the fields nor the texts; only the chain's own sender reads the fields.
 */
export interface StakeParams {
  readonly amount: string;
  readonly denomination: string;
  readonly fields: Readonly<Record<string, string | readonly string[]>>;
  /**
   * The amount and the fields as the chain writes them for a fingerprint: two stakes with the
   * same text are the same stake (a terminal failure holds while it is unchanged).
   */
  readonly inputs: string;
  /** The stake as a person reads it, the chain's way: the amount with its denomination, and the fields. */
  readonly shown: string;
}

/** How stakes are paced: BFT-safe waves (fewer than a third of the voters per height), or none. */
export const Pacing = { bft: 'bft', off: 'off' } as const;
export type Pacing = (typeof Pacing)[keyof typeof Pacing];

/** What the core reads of a parsed validator key, whatever the chain (the chain port parses it). */
export interface ChainKey {
  readonly address: string;
  readonly publicKeyHex: string;
}

/** One id's key as the keys source holds it: parsed, or why not. */
export type KeyEntry<K extends ChainKey = ChainKey> =
  | { readonly id: ValidatorId; readonly ok: true; readonly key: K }
  | {
      readonly id: ValidatorId;
      readonly ok: false;
      readonly code: string;
      readonly message: string;
      /** Known for a duplicate (a valid key under several ids); undefined for a malformed one. */
      readonly address?: string | undefined;
    };

/**
 * Why a decision is what it is, as data: set when the planner's reason starts with a condition a
 * reader acts on (reported once, blocks a scale's wait, lets a pod go); undefined for ordinary
 * progress (waiting for a pod, a block, pacing). The reason stays the human text.
 */
export const DecisionCode = {
  /** A wanted id has no key in the keys source. */
  keyMissing: 'KEY_MISSING',
  /** The id's key is also under another id. */
  keyDuplicate: 'KEY_DUPLICATE',
  /** The id's key does not parse. */
  keyInvalid: 'KEY_INVALID',
  /** Two pods claim the id. */
  podConflict: 'POD_CONFLICT',
  /** The service URL cannot be filled yet (no pod IP or port): it fills itself. */
  serviceUrlUnfilled: 'SERVICE_URL_UNFILLED',
  /** The last action failed for good with these inputs (its error code leads the reason). */
  actionFailed: 'ACTION_FAILED',
  /** The chain has no state sync: refused (it would halt the chain) or staked but never voting. */
  noStateSync: 'NO_STATE_SYNC',
  /** The chain went back or forked; nothing is done until it is past the highest height seen. */
  chainUntrusted: 'CHAIN_UNTRUSTED',
  /** Kept staked: unstaking it would leave fewer than the minimum set. */
  belowMinimumSet: 'BELOW_MINIMUM_SET',
  /** Kept staked: the minimum set is not known yet (the genesis set has not been read). */
  minimumSetUnknown: 'MINIMUM_SET_UNKNOWN',
  /** Staked on chain with no key in the keys source: reported, never touched. */
  unmanaged: 'UNMANAGED',
  /**
   * A member row whose key nobody holds any more (a key changed while the manager was not
   * running): it cannot be unstaked, and no rule counts it as a voter.
   */
  orphaned: 'ORPHANED',
  /** The chain cannot carry a key rotation (its old row stays counted, a new one never votes). */
  rotationRefused: 'ROTATION_REFUSED',
} as const;
export type DecisionCode = (typeof DecisionCode)[keyof typeof DecisionCode];

/** Kinds of action the manager takes. */
export const ActionKind = { stake: 'stake', unstake: 'unstake' } as const;
export type ActionKind = (typeof ActionKind)[keyof typeof ActionKind];

/** States of a journal entry. `prepared` and `sent` are open; the rest are final. */
export const ActionState = {
  prepared: 'prepared',
  sent: 'sent',
  committed: 'committed',
  failed: 'failed',
  dropped: 'dropped',
} as const;
export type ActionState = (typeof ActionState)[keyof typeof ActionState];

export function isOpenState(state: ActionState): boolean {
  return state === ActionState.prepared || state === ActionState.sent;
}

/** One journal entry. */
export interface ActionRecord {
  readonly seq: number;
  readonly validatorId: ValidatorId;
  readonly address: string;
  readonly kind: ActionKind;
  readonly state: ActionState;
  /** The name of the transport that sent it (`TransportCapabilities.name`: the chain's label). */
  readonly mode: string;
  readonly txHash: string | undefined;
  readonly txHex: string | undefined;
  readonly nonce: string | undefined;
  /** Identifies the inputs (key, the stake's `inputs`, service URL); a terminal failure holds while it is unchanged. */
  readonly fingerprint: string;
  readonly reason: string;
  readonly preparedHeight: number;
  readonly sentHeight: number | undefined;
  readonly committedHeight: number | undefined;
  readonly resultCode: number | undefined;
  readonly errorCode: string | undefined;
  readonly error: string | undefined;
  readonly terminal: boolean;
  readonly attempts: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/**
 * A validator id as the query names it: a generic token, not one chain's id format (the chain
 * port maps pods to ids). An id that matches no validator answers an empty page.
 */
export const VALIDATOR_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$';

/**
 * When the manager first saw a validator id's current key, named by its address (never the key):
 * kept by keys/key-observations.ts and the journal, read by the planner's stale-key rule.
 */
export interface KeyObservation {
  readonly address: string;
  /** Manager-clock ms. */
  readonly observedAt: number;
}

/** A key an id had before its current one, named by its address (never the key). */
export interface FormerKey {
  readonly address: string;
  /** Manager-clock ms when it was first seen, and when the next one was (it ceased to be current). */
  readonly observedAt: number;
  readonly replacedAt: number;
}

/**
 * Who staked an address last, as the journal knows it: the validator id whose committed, applied
 * stake of it is the newest, and when that stake was prepared (manager-clock ms: the id held the
 * key then; `seq` orders two of one millisecond). A key's row staked by another id after the key left an id is that
 * id's row, not a rotation's (planner/rotation.ts).
 */
export interface LastStake {
  readonly id: ValidatorId;
  readonly at: number;
  readonly seq: number;
}

/** The address a pod's node told it signs with, for the node's run that started at `startedAt`. */
export interface NodeKey {
  readonly address: string;
  /** The pod's `startedAt` (PodView) when it was read: a later start is another run. */
  readonly startedAt: number | undefined;
}
