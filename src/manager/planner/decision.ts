// What the planner decides and from what: the decision's shape (phases, waits), its input, and
// the small helpers every rule shares (planner/rules.ts decides, planner/plan.ts applies the
// limits over all validators).
import {
  ActionKind,
  ChainStatus,
  type ActionRecord,
  type ChainCapabilities,
  type ChainKey,
  type ChainValidator,
  DecisionCode,
  type DesiredState,
  type FormerKey,
  type KeyEntry,
  type KeyObservation,
  type LastStake,
  type NodeKey,
  type Pacing,
  type StakeParams,
  type ValidatorId,
} from '../model.ts';
import type { MinimumSet } from './minimum-set.ts';
import { signersByAddress, type SigningPod } from './signers.ts';
/** How soon a node within two blocks of synced is asked for its height again (ms). */
export const NEAR_HEAD_RETRY_MS = 200;

/** The phase of a validator as reported by the status API. */
export const Phase = {
  pending: 'pending',
  staking: 'staking',
  staked: 'staked',
  active: 'active',
  unstaking: 'unstaking',
  unstaked: 'unstaked',
  held: 'held',
  failed: 'failed',
  unmanaged: 'unmanaged',
} as const;
export type Phase = (typeof Phase)[keyof typeof Phase];

/** Why a needed action is not taken now. */
export const Wait = {
  sync: 'sync',
  paused: 'paused',
  podReady: 'pod-ready',
  debounce: 'debounce',
  nodeSync: 'node-sync',
  pacing: 'pacing',
  podIds: 'pod-ids',
  /** An unstake that would leave fewer staked validators than the minimum set. */
  minimumSet: 'minimum-set',
  /** The chain went back or forked: nothing is done until it is back past the highest height seen. */
  chainUntrusted: 'chain-untrusted',
  /**
   * The chain has no state sync (late joiners never vote) and cannot carry one more silent
   * member: staking this validator would halt it. Waiting changes nothing (NO_STATE_SYNC).
   */
  noStateSync: 'no-state-sync',
  /** A readiness or pre-* hook with failure policy `block` has not passed (hooks/hook-gate.ts). */
  hook: 'hook',
  /**
   * The pod's node started before its id's current key was seen: it may hold an older key, and a
   * stake of the current one would make a member no node signs for. The reconciler deletes the
   * pod (once per uid, unless CM_RESTART_STALE_PODS is false) so that it starts again with it.
   */
  staleKey: 'stale-key',
} as const;
export type Wait = (typeof Wait)[keyof typeof Wait];

export interface Decision {
  /** The validator id; for an unmanaged validator (no key) the key is its address. */
  readonly key: string;
  readonly id: ValidatorId | undefined;
  readonly address: string | undefined;
  /**
   * The address the action is for when it is not `address`: a key rotation's old address, which
   * is unstaked with the old key (planner/rotation.ts).
   */
  readonly subject?: string | undefined;
  readonly action: ActionKind | 'none';
  /** Set when `action` is needed but deferred; the reconciler acts only when this is unset. */
  readonly waitingFor: Wait | undefined;
  readonly phase: Phase;
  /** The condition behind `reason`, as data (readers compare this, never the text). */
  readonly code: DecisionCode | undefined;
  readonly reason: string;
  /** Re-plan after this long (debounce). */
  readonly requeueAfterMs: number | undefined;
  /** Identifies the action's inputs (key, the stake's inputs, URL). */
  readonly fingerprint: string | undefined;
  readonly serviceUrl: string | undefined;
  readonly wanted: boolean;
  /** The status of the row at `address` (absent when there is none or no address). */
  readonly chainStatus: ChainStatus;
  /**
   * Its row has signed a committed certificate since its latest stake (`hasProvenItself`), under
   * its own valid key; what `active` means, also where the phase shows something else first.
   */
  readonly signing: boolean;
}

/** The decision's validator is staked on chain under its own valid key (not a shared one). */
export function isStakedOnChain(d: Decision): boolean {
  return d.chainStatus === ChainStatus.staked && d.code !== DecisionCode.keyDuplicate;
}

export interface PlanSettings {
  readyDebounceMs: number;
  syncTolerance: number;
  syncCheck: boolean;
  pacing: Pacing;
  /** What a stake carries (the chain port's `stake`): part of its fingerprint. */
  stake: StakeParams;
  /** A node height older than this is stale and must be asked again. */
  nodeHeightMaxAgeMs: number;
  /** A staked row votes while it signed one of the certificates of the last this many heights. */
  votingWindow: number;
  /** What the chain can do; undefined: the intended chain (chain/capabilities.ts). */
  capabilities?: ChainCapabilities | undefined;
  /** A pod whose node started before its key was seen is restarted (undefined: yes), or only reported. */
  restartStalePods?: boolean | undefined;
  /**
   * While paused, a validator whose pod the cluster is removing is unstaked anyway this long
   * before the kubelet kills the pod (planner/paused-departure.ts); undefined: never.
   */
  pauseDepartureMarginMs?: number | undefined;
}

/** A pod the manager deleted because its node started before the key seen at `observedAt`. */
export interface StaleRestart {
  readonly podName: string;
  readonly uid: string;
  readonly observedAt: number;
}

/** The reason code and words of a validator that cannot vote on a chain without state sync. */
export const NO_STATE_SYNC = 'NO_STATE_SYNC: cannot vote: chain has no state sync for late joiners';

/** Whether the chain view's answers can be acted on (see ChainView: monotonic heights). */
export interface ChainTrust {
  readonly trusted: boolean;
  /** Why not, in words (undefined while trusted). */
  readonly reason: string | undefined;
}

/** Read access to the keys (a `KeyStore` satisfies it). */
export interface KeyLookup {
  get(id: ValidatorId): KeyEntry | undefined;
  idOfAddress(address: string): ValidatorId | undefined;
  /** Every id whose key has this address (several when they share it: KEY_DUPLICATE). */
  idsOfAddress(address: string): ValidatorId[];
  /** The key's address now, or the one it had when last valid. */
  addressOf(id: ValidatorId): string | undefined;
  /** The id whose old key (held in memory since the Secret dropped it) has this address. */
  heldFor?(address: string): ValidatorId | undefined;
  /** A key with this address to sign with: the Secret's, or one held in memory. */
  signingKey?(address: string): ChainKey | undefined;
}

export interface PlanInput {
  readonly now: number;
  /** Caches synced and the chain answered at least once: before that, nothing is decided. */
  readonly synced: boolean;
  readonly paused: boolean;
  /** Latest committed height the chain view has read. */
  readonly height: number;
  /** False while the chain went back below a height already seen, or forked: no action then. */
  readonly trust: ChainTrust;
  /** The fewest staked validators the manager keeps; undefined while it is not known (no unstake). */
  readonly minimumSet: MinimumSet | undefined;
  readonly desired: DesiredState;
  readonly keys: KeyLookup;
  /** On-chain validator rows by address. */
  readonly chain: ReadonlyMap<string, ChainValidator>;
  /** Address → highest height at which it signed a committed block's certificate. */
  readonly signers: ReadonlyMap<string, number>;
  /** The genesis set's addresses, once read (chain/chain-view.ts). */
  readonly genesis?: ReadonlySet<string> | undefined;
  /** Open (prepared or sent) actions by validator id. */
  readonly open: ReadonlyMap<ValidatorId, ActionRecord>;
  /**
   * Transactions waiting in the mempool by signer address. One that is not in this manager's
   * journal (another replica's, or from before the journal was lost) still counts as pending.
   */
  readonly mempool: ReadonlyMap<
    string,
    { readonly hash: string; readonly kind: ActionKind | undefined }
  >;
  /** The newest action of each validator (terminal failures live here). */
  readonly latest: ReadonlyMap<ValidatorId, ActionRecord>;
  /** Height at which each validator's latest applied stake committed. */
  readonly stakeHeights: ReadonlyMap<ValidatorId, number>;
  /** What each validator's own node last said its height was, and when. */
  readonly nodeHeights: ReadonlyMap<ValidatorId, { height: number; at: number }>;
  readonly settings: PlanSettings;
  /**
   * Actions a `block` hook holds (hooks/hook-gate.ts), by validator id: such an action waits for
   * `hook` and takes no place in the height's pacing budget, so one failing hook holds only its
   * own validator.
   */
  readonly hookHolds?: ReadonlyMap<
    ValidatorId,
    { readonly kind: ActionKind; readonly reason: string }
  >;
  /**
   * When each id's current key was first seen: a wanted pod whose node started before it is not
   * staked (`Wait.staleKey`). Undefined: the rule is off (nothing records it).
   */
  readonly keysSeen?: ReadonlyMap<ValidatorId, KeyObservation>;
  /** The pod the manager last deleted for a stale key, by id (the reconciler's memory). */
  readonly staleRestarts?: ReadonlyMap<ValidatorId, StaleRestart>;
  /** What each pod's node said it signs with, by pod uid (keys/node-keys.ts). */
  readonly nodeKeys?: ReadonlyMap<string, NodeKey> | undefined;
  /** Each id's former keys (addresses), oldest first (keys/key-observations.ts). */
  readonly formerKeys?: ReadonlyMap<ValidatorId, readonly FormerKey[]> | undefined;
  /** Per address, who staked it last as the journal knows (the action book's index). */
  readonly lastStakes?: ReadonlyMap<string, LastStake> | undefined;
}

/** The inputs of a stake: a terminal failure holds while these are unchanged. */
export function stakeFingerprint(
  key: ChainKey,
  settings: PlanSettings,
  serviceUrl: string,
): string {
  // The amount and the chain's fields, as the chain writes them (StakeParams.inputs).
  return `stake|${key.publicKeyHex}|${settings.stake.inputs}|${serviceUrl}`;
}

export function unstakeFingerprint(key: ChainKey): string {
  return `unstake|${key.publicKeyHex}`;
}

/** A decision being made: a Decision the global waits may still defer. */
export interface Draft {
  key: string;
  id: ValidatorId | undefined;
  address: string | undefined;
  subject?: string | undefined;
  action: ActionKind | 'none';
  waitingFor: Wait | undefined;
  phase: Phase;
  code: DecisionCode | undefined;
  reason: string;
  requeueAfterMs: number | undefined;
  fingerprint: string | undefined;
  serviceUrl: string | undefined;
  wanted: boolean;
  chainStatus: ChainStatus;
  signing: boolean;
}

/** A decision with nothing decided yet: pending, no action. */
export function blank(
  fields: Pick<Draft, 'key' | 'id' | 'address' | 'wanted' | 'chainStatus'>,
): Draft {
  return {
    signing: false,
    ...fields,
    action: 'none',
    waitingFor: undefined,
    phase: Phase.pending,
    code: undefined,
    reason: '',
    requeueAfterMs: undefined,
    fingerprint: undefined,
    serviceUrl: undefined,
  };
}

/** Who signs with what, computed once per plan input (an O(validators) walk). */
const SIGNERS = new WeakMap<PlanInput, ReadonlyMap<string, readonly SigningPod[]>>();
export function signersOf(input: PlanInput): ReadonlyMap<string, readonly SigningPod[]> {
  let found = SIGNERS.get(input);
  if (found === undefined) {
    found = signersByAddress(input);
    SIGNERS.set(input, found);
  }
  return found;
}

/**
 * `hh:mm:ss` (UTC) of a time, with its milliseconds when asked, and with its date when it is not
 * on the day of `day` (a pod started yesterday at 13:00 is not "13:00" against a key seen at 12:00).
 */
export function clockTime(ms: number | undefined, day: number | undefined, withMs = false): string {
  if (ms === undefined) return '?';
  const iso = new Date(ms).toISOString();
  const sameDay =
    day !== undefined && new Date(day).toISOString().slice(0, 10) === iso.slice(0, 10);
  return `${sameDay ? '' : `${iso.slice(0, 10)}T`}${iso.slice(11, withMs ? 23 : 19)}Z`;
}

/** A stake or unstake that would go now, unless a `block` hook holds it. */
export function heldByHook(d: Draft, input: PlanInput): Draft {
  if (d.id === undefined || d.waitingFor !== undefined) return d;
  const hold = input.hookHolds?.get(d.id);
  if (hold?.kind !== d.action) return d;
  return { ...d, waitingFor: Wait.hook, code: undefined, reason: hold.reason };
}

/** Whether a late joiner's node syncs and votes (a chain with state sync). */
export function joinersVote(input: PlanInput): boolean {
  return input.settings.capabilities?.lateJoinersVote ?? true;
}
