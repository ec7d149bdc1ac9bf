// The planner: a pure function of (desired, actual, pending) that decides the one action each
// validator needs, and why. The reconciler acts on it; `GET /v1/plan` shows it as a dry run.
// The rule: docs/design.md §The rule that decides; pacing and the sync check are its safety clauses, and
// the safety rules (minimum set, key problems, a chain that is not trusted) come above every row.
import {
  ActionKind,
  ActionState,
  ChainStatus,
  type ActionRecord,
  type ChainCapabilities,
  type ChainKey,
  type ChainValidator,
  DecisionCode,
  type DesiredState,
  type DesiredValidator,
  type FormerKey,
  type KeyEntry,
  type KeyObservation,
  type NodeKey,
  type Pacing,
  type PodView,
  type StakeParams,
  type ValidatorId,
} from '../model.ts';
import {
  heldBecause,
  quorumStanding,
  votesWhenUp,
  splitByMinimumSet,
  type MinimumSet,
  type MinimumSetVerdict,
} from './minimum-set.ts';
import { pacingBudget, type PacingBudget } from './pacing.ts';
import { commits, quorumArithmetic } from './quorum.ts';
import { rotationOf, type Rotation } from './rotation.ts';
import {
  formerOwnerOf,
  isMemberRow,
  signerOf,
  signersByAddress,
  type SigningPod,
} from './signers.ts';
import { hasProvenItself } from './voting.ts';
import { isoSecond, pausedDeparture } from './paused-departure.ts';

/** How soon a node within two blocks of synced is asked for its height again (ms). */
export const NEAR_HEAD_RETRY_MS = 200;
export { hasProvenItself } from './voting.ts';

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
  /** Identifies the action's inputs (key, amount, chains, URL). */
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
}

/** The inputs of a stake: a terminal failure holds while these are unchanged. */
export function stakeFingerprint(
  key: ChainKey,
  settings: PlanSettings,
  serviceUrl: string,
): string {
  const { amount, fields } = settings.stake;
  // Each field as text, in the chain's order (Pocket V1's one field, its relay chains, reads
  // "0001,0021": the same fingerprint as before stakes became data).
  const extra = Object.values(fields)
    .map((value) => (typeof value === 'string' ? value : value.join(',')))
    .join('|');
  return `stake|${key.publicKeyHex}|${amount}|${extra}|${serviceUrl}`;
}

export function unstakeFingerprint(key: ChainKey): string {
  return `unstake|${key.publicKeyHex}`;
}

interface Draft {
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

/**
 * Decides every validator's action. Deterministic: the same input gives the same plan, so
 * concurrent reconciles of different ids agree on shared limits (pacing).
 */
export function plan(input: PlanInput): Decision[] {
  const drafts = new Map<string, Draft>();
  for (const id of planIds(input)) drafts.set(id, decideOne(id, input));

  // Staked validators whose key is not in the Secret: reported, never touched. A row whose old key
  // is held for a rotation is its validator's (decided above); one whose key a former owner had is
  // orphaned (a key change the manager did not see).
  for (const row of input.chain.values()) {
    if (input.keys.idOfAddress(row.address) !== undefined) continue;
    if (row.status !== ChainStatus.staked && row.status !== ChainStatus.paused) continue;
    if (input.keys.heldFor?.(row.address) !== undefined) continue;
    const former = formerOwnerOf(input, row.address);
    drafts.set(row.address, {
      ...blank({
        key: row.address,
        id: undefined,
        address: row.address,
        wanted: false,
        chainStatus: row.status,
      }),
      phase: Phase.unmanaged,
      ...(former === undefined
        ? {
            code: DecisionCode.unmanaged,
            reason: 'staked on chain, but no key in the Secret has this address',
          }
        : {
            code: DecisionCode.orphaned,
            reason: orphanReason(
              row.address,
              `${former.id}'s key until ${clockTime(former.key.replacedAt, undefined)}`,
              row.status,
              input,
            ),
          }),
    });
  }

  applyGlobalWaits([...drafts.values()], input, (id) => drafts.get(id) ?? decideOne(id, input));
  return [...drafts.values()];
}

/**
 * The decision of one validator: exactly `plan(input).find((d) => d.id === id)`, without deciding
 * every other validator first (a reconcile needs only its own). Only a stake that may go out now
 * under BFT pacing looks at others: at the lower ids, to find its place in the height's budget.
 * Undefined when `plan` would not list the id.
 */
export function planOne(input: PlanInput, id: ValidatorId): Decision | undefined {
  const entry = input.keys.get(id);
  const address = entry?.ok === true ? entry.key.address : entry?.address;
  // plan() lists an on-chain row under every id whose key has its address (all of duplicates).
  const onChain =
    address !== undefined &&
    input.chain.has(address) &&
    input.keys.idsOfAddress(address).includes(id);
  if (!input.desired.validators.has(id) && !onChain && !holdsRotatingRow(input, id))
    return undefined;
  const draft = decideOne(id, input);
  if (draft.action === 'none') return draft;
  const gate = !input.synced || !input.trust.trusted || input.paused;
  if (
    draft.waitingFor !== undefined &&
    draft.waitingFor !== Wait.hook &&
    !(gate && LOCAL_WAITS.has(draft.waitingFor))
  ) {
    // Without state sync a stake that could never fit is said so at once, pod Ready or not.
    if (
      isStakeWaitingOnItself(draft) &&
      !joinersVote(input) &&
      input.settings.pacing !== 'off' &&
      input.synced &&
      input.trust.trusted &&
      !input.paused
    ) {
      const pacing = pacingBudget(input);
      if (lowerStakes(input, id, pacing).claimed >= pacing.ceiling)
        refuseNoStateSync(draft, pacing, input.settings.capabilities);
    }
    return draft;
  }
  // Sync, trust, pause and unresolved pod ids depend on nothing but the input; the minimum set
  // only on the other unstakes; pacing spares unstakes.
  if (gate || draft.action === ActionKind.unstake) {
    applyGlobalWaits([draft], input, (other) => (other === id ? draft : decideOne(other, input)));
    return draft;
  }
  if (input.settings.pacing === 'off' || draft.waitingFor === Wait.hook) return draft;
  const pacing = pacingBudget(input);
  // plan() hands the budget out in id order: the stakes that may go out at lower ids come first
  // (and, without state sync, the ceiling to every stake the rule wants, waiting or not).
  const { granted, claimed } = lowerStakes(input, id, pacing);
  if (!joinersVote(input) && claimed >= pacing.ceiling)
    refuseNoStateSync(draft, pacing, input.settings.capabilities);
  else if (granted >= pacing.budget) waitForPacing(draft, pacing);
  return draft;
}

/** A row whose old key is held for `id`'s rotation is on chain (plan() lists `id` for it). */
function holdsRotatingRow(input: PlanInput, id: ValidatorId): boolean {
  const candidates = (input.formerKeys?.get(id) ?? []).map((f) => f.address);
  const seen = input.keysSeen?.get(id)?.address;
  if (seen !== undefined) candidates.push(seen);
  return candidates.some((a) => input.chain.has(a) && input.keys.heldFor?.(a) === id);
}

/** Every validator id `plan` decides, sorted. */
function planIds(input: PlanInput): ValidatorId[] {
  const ids = new Set<ValidatorId>(input.desired.validators.keys());
  // Keys whose validator is on chain are managed even when no pod or ordinal names them; a key
  // shared by several ids shows its problem on each of them.
  for (const address of input.chain.keys()) {
    for (const id of input.keys.idsOfAddress(address)) ids.add(id);
    // A row whose old key is held for a rotation: its validator unstakes it, pod or no pod.
    const held = input.keys.heldFor?.(address);
    if (held !== undefined) ids.add(held);
  }
  return [...ids].sort();
}

function blank(fields: Pick<Draft, 'key' | 'id' | 'address' | 'wanted' | 'chainStatus'>): Draft {
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

function decideOne(id: ValidatorId, input: PlanInput): Draft {
  const desired: DesiredValidator | undefined = input.desired.validators.get(id);
  const wanted = desired?.wanted === true;
  const entry = input.keys.get(id);
  const key = entry?.ok === true ? entry.key : undefined;
  // A duplicate key's address is the shared one: its row is shown, never acted on. (A key gone
  // missing keeps no row here: its address is reported as unmanaged, as any keyless row.)
  const address = key?.address ?? (entry?.ok === false ? entry.address : undefined);
  const row = address === undefined ? undefined : input.chain.get(address);
  const status = row?.status ?? ChainStatus.absent;
  const draft = blank({ key: id, id, address, wanted, chainStatus: status });
  const wantedReason = desired?.wantedReason ?? `no validator StatefulSet wants id ${id}`;

  if (entry === undefined && !input.synced) {
    // The keys may not have been read yet: a key is not called missing before they are.
    return {
      ...draft,
      waitingFor: Wait.sync,
      reason: 'waiting for the caches and the chain to sync',
    };
  }
  if (entry === undefined) {
    // A key removed while its row was staked: once the validator is not wanted, the old key held
    // in memory unstakes that row (while wanted, its node goes on signing with it, untouched).
    const removed = wanted ? undefined : rotationOf(input, id, () => signersOf(input));
    if (removed !== undefined && removed.holder !== 'none')
      return openAction(draft, input) ?? decideRotation(draft, removed, input);
    return {
      ...draft,
      phase: wanted ? Phase.failed : Phase.unstaked,
      code: wanted ? DecisionCode.keyMissing : undefined,
      reason: wanted ? `KEY_MISSING: no key "${id}" in the keys Secret` : wantedReason,
    };
  }
  if (!entry.ok) {
    // A key problem: never staked, unstaked or drained, whatever the cluster wants.
    return {
      ...draft,
      phase: Phase.failed,
      code: entry.code === 'KEY_DUPLICATE' ? DecisionCode.keyDuplicate : DecisionCode.keyInvalid,
      reason:
        entry.code === 'KEY_DUPLICATE'
          ? `KEY_DUPLICATE: key "${id}" is ${entry.message}`
          : `KEY_INVALID: key "${id}" is malformed (${entry.code}: ${entry.message})`,
    };
  }
  if (key === undefined) return draft; // unreachable: entry.ok implies a key
  const pod = desired?.pod;
  // Its own pod's node signs with another key (an older one, or another id's): its row's
  // signatures are someone else's node's, and it is not active itself.
  const signer = pod === undefined ? undefined : signerOf(input, id, pod);
  const elsewhere = signer !== undefined && signer.address !== key.address ? signer : undefined;
  const proven = hasProvenItself(input, key.address, id);
  draft.signing = proven && elsewhere === undefined;
  if (desired?.conflict !== undefined) {
    return {
      ...draft,
      phase: Phase.failed,
      code: DecisionCode.podConflict,
      reason: `conflict: ${desired.conflict}`,
    };
  }

  const open = openAction(draft, input);
  if (open !== undefined) return open;

  // An action found committed at a height the chain view has not read yet (the reconciler looks
  // a transaction up by hash; after the RPC node went back, the view may trail it): the rows do
  // not show its effect yet, and acting on them would send it a second time (found by the soak:
  // a second stake of 008 failed with V1's 60, a second unstake with 54).
  const done = input.latest.get(id);
  if (
    done?.state === ActionState.committed &&
    done.committedHeight !== undefined &&
    done.committedHeight > input.height
  ) {
    return {
      ...draft,
      phase: done.kind === ActionKind.stake ? Phase.staking : Phase.unstaking,
      requeueAfterMs: 1_000,
      reason: `${done.kind} committed at height ${done.committedHeight}; waiting for the chain view (at ${input.height}) to reach it`,
    };
  }

  if (pod?.held !== true) {
    const rotation = rotationOf(input, id, () => signersOf(input));
    if (rotation !== undefined) return decideRotation(draft, rotation, input);
  }

  const pooled = input.mempool.get(key.address);
  if (pooled !== undefined) {
    const staking = pooled.kind === ActionKind.stake;
    return {
      ...draft,
      phase: staking ? Phase.staking : Phase.unstaking,
      reason: `a ${pooled.kind ?? 'transaction'} of this validator (${pooled.hash.slice(0, 12)}…, not in this manager's journal) is in the mempool`,
    };
  }

  if (pod?.held === true) {
    return {
      ...draft,
      phase: Phase.held,
      reason: `pod ${pod.name} is held by annotation; nothing is done`,
    };
  }

  const latest = input.latest.get(id);

  if (wanted) {
    if (status === ChainStatus.staked) {
      if (!proven && !joinersVote(input) && input.stakeHeights.has(id)) {
        return {
          ...draft,
          phase: Phase.staked,
          code: DecisionCode.noStateSync,
          reason: `${NO_STATE_SYNC}; staked at height ${input.stakeHeights.get(id) ?? '?'} and counted in the quorum, its node never syncs or votes`,
        };
      }
      if (elsewhere !== undefined)
        return {
          ...draft,
          phase: Phase.staked,
          reason: `staked, but the node of its pod ${pod?.name ?? '?'} signs with ${elsewhere.address} (${elsewhere.how === 'read' ? 'it says so' : 'it started before this key was seen'}): this row's signatures${proven ? ` (last at height ${input.signers.get(key.address) ?? '?'})` : ''} are another node's`,
        };
      return {
        ...draft,
        phase: proven ? Phase.active : Phase.staked,
        reason: proven
          ? `staked and signing (last signature at height ${input.signers.get(key.address) ?? '?'})`
          : 'staked; waiting for its first signature in a committed block',
      };
    }
    if (status === ChainStatus.paused) {
      return {
        ...draft,
        phase: Phase.staked,
        reason: 'staked but paused on chain; unpausing is not managed',
      };
    }
    const stale = staleKeyReason(id, key, pod, input);
    if (stale !== undefined)
      return { ...draft, action: ActionKind.stake, waitingFor: Wait.staleKey, reason: stale };
    if (pod === undefined || !pod.ready) {
      return {
        ...draft,
        action: ActionKind.stake,
        waitingFor: Wait.podReady,
        reason:
          pod === undefined
            ? `waiting for pod of ordinal ${desired.ordinal ?? '?'} to exist`
            : `waiting for pod ${pod.name} to be Ready`,
      };
    }
    const serviceUrl = pod.serviceUrl;
    if (serviceUrl === undefined) {
      return {
        ...draft,
        phase: Phase.failed,
        code: DecisionCode.serviceUrlUnfilled,
        reason: `cannot fill the service-URL template for pod ${pod.name} (missing pod IP or port)`,
      };
    }
    const fingerprint = stakeFingerprint(key, input.settings, serviceUrl);
    if (latest?.terminal === true && latest.fingerprint === fingerprint) {
      return {
        ...draft,
        phase: Phase.failed,
        fingerprint,
        serviceUrl,
        code: DecisionCode.actionFailed,
        reason: `${latest.errorCode ?? 'FAILED'}: ${latest.error ?? 'stake failed'}; fix the inputs to retry`,
      };
    }
    // A pod in its first Ready spell with no restarts is staked at once; one that flapped (or a
    // source that cannot tell) must stay Ready for the debounce first.
    const readyFor = input.now - (pod.readySince ?? input.now);
    if (pod.flapped !== false && readyFor < input.settings.readyDebounceMs) {
      const remaining = input.settings.readyDebounceMs - readyFor;
      return {
        ...draft,
        action: ActionKind.stake,
        waitingFor: Wait.debounce,
        fingerprint,
        serviceUrl,
        requeueAfterMs: remaining,
        reason: `pod ${pod.name} Ready for ${readyFor} ms of ${input.settings.readyDebounceMs}`,
      };
    }
    const stakeDraft: Draft = {
      ...draft,
      action: ActionKind.stake,
      fingerprint,
      serviceUrl,
      reason: `${wantedReason}; pod ${pod.name} is Ready; on chain: ${status}${
        joinersVote(input)
          ? ''
          : '; the chain has no state sync: it joins as a member that never votes, within the margin'
      }`,
    };
    // Without state sync the node of a late joiner never syncs: there is nothing to wait for (the
    // ceiling above decides whether it may join as a member that never votes).
    if (input.settings.syncCheck && joinersVote(input)) {
      const node = input.nodeHeights.get(id);
      if (node === undefined || input.now - node.at > input.settings.nodeHeightMaxAgeMs) {
        return {
          ...stakeDraft,
          waitingFor: Wait.nodeSync,
          reason: `asking node of pod ${pod.name} for its height`,
        };
      }
      if (node.height < input.height - input.settings.syncTolerance) {
        // A node a block or two short of the tolerance is polling its way to the head and will
        // be there within its next poll: asked again soon, not after the usual second (a devnet
        // wave waited a whole block for it). A node far behind is asked at the usual pace.
        const nearHead = input.height - node.height <= input.settings.syncTolerance + 2;
        return {
          ...stakeDraft,
          waitingFor: Wait.nodeSync,
          ...(nearHead ? { requeueAfterMs: NEAR_HEAD_RETRY_MS } : {}),
          reason: `node of pod ${pod.name} is syncing (height ${node.height}, chain ${input.height})`,
        };
      }
    }
    return heldByHook(stakeDraft, input);
  }

  // Not wanted.
  if (status === ChainStatus.staked || status === ChainStatus.paused) {
    const fingerprint = unstakeFingerprint(key);
    if (latest?.terminal === true && latest.fingerprint === fingerprint) {
      return {
        ...draft,
        phase: Phase.failed,
        fingerprint,
        code: DecisionCode.actionFailed,
        reason: `${latest.errorCode ?? 'FAILED'}: ${latest.error ?? 'unstake failed'}`,
      };
    }
    return heldByHook(
      {
        ...draft,
        action: ActionKind.unstake,
        fingerprint,
        phase: proven ? Phase.active : Phase.staked,
        reason: `${wantedReason}; still staked on chain`,
      },
      input,
    );
  }
  const counted =
    row !== undefined && !(input.settings.capabilities?.unstakeLeavesQuorum ?? true)
      ? '; its row still counts in the quorum (this chain keeps every row ever staked in it)'
      : '';
  return {
    ...draft,
    phase: Phase.unstaked,
    reason: `${wantedReason}; on chain: ${status}${counted}`,
  };
}

/** The decision of a validator with an open action: staking or unstaking, waiting for it. */
function openAction(draft: Draft, input: PlanInput): Draft | undefined {
  const open = draft.id === undefined ? undefined : input.open.get(draft.id);
  if (open === undefined) return undefined;
  const phase = open.kind === ActionKind.stake ? Phase.staking : Phase.unstaking;
  const tx =
    open.txHash === undefined ? 'a transaction' : `transaction ${open.txHash.slice(0, 12)}…`;
  const of = open.address === draft.address ? '' : ` of its old address ${open.address}`;
  return {
    ...draft,
    phase,
    ...(open.address === draft.address ? {} : { subject: open.address }),
    reason: `${open.kind}${of} sent at height ${open.sentHeight ?? open.preparedHeight}; waiting for ${tx} to commit`,
  };
}

/** Who signs with what, computed once per plan input (an O(validators) walk). */
const SIGNERS = new WeakMap<PlanInput, ReadonlyMap<string, readonly SigningPod[]>>();
function signersOf(input: PlanInput): ReadonlyMap<string, readonly SigningPod[]> {
  let found = SIGNERS.get(input);
  if (found === undefined) {
    found = signersByAddress(input);
    SIGNERS.set(input, found);
  }
  return found;
}

/**
 * A validator in a key rotation (planner/rotation.ts): its old address is unstaked with the old
 * key first; refused on a chain that cannot carry it; orphaned when nobody holds the old key.
 */
function decideRotation(draft: Draft, rotation: Rotation, input: PlanInput): Draft {
  const { from } = rotation;
  const row = input.chain.get(from);
  const lastSigned = input.signers.get(from);
  const signing =
    lastSigned !== undefined && lastSigned > input.height - input.settings.votingWindow;
  const who =
    rotation.signer === undefined ? 'its pod' : `the node of pod ${rotation.signer.pod.name}`;
  const base: Draft = {
    ...draft,
    subject: from,
    phase: signing ? Phase.active : Phase.staked,
    signing: false,
  };
  const changed =
    rotation.to === undefined
      ? 'its key was removed from the Secret'
      : `the Secret gives it a new key (address ${rotation.to})`;
  if (rotation.refused)
    return {
      ...base,
      code: DecisionCode.rotationRefused,
      reason: `ROTATION_REFUSED: ${changed}, but on this chain its old row ${from} would stay counted in the quorum and a new row would never vote (${rotationArithmetic(input, from)}): nothing is done, and ${who} goes on signing with the old key; put the old key back under its id`,
    };
  const key = rotation.holder === 'none' ? undefined : input.keys.signingKey?.(from);
  if (key === undefined)
    return {
      ...base,
      phase: Phase.failed,
      code: DecisionCode.orphaned,
      reason: orphanReason(from, `${draft.id ?? '?'}'s key until it changed`, row?.status, input),
    };
  const fingerprint = unstakeFingerprint(key);
  const latest = draft.id === undefined ? undefined : input.latest.get(draft.id);
  if (latest?.terminal === true && latest.fingerprint === fingerprint)
    return {
      ...base,
      phase: Phase.failed,
      fingerprint,
      code: DecisionCode.actionFailed,
      reason: `${latest.errorCode ?? 'FAILED'}: ${latest.error ?? 'unstake failed'}`,
    };
  const pooled = input.mempool.get(from);
  if (pooled !== undefined)
    return {
      ...base,
      phase: pooled.kind === ActionKind.unstake ? Phase.unstaking : base.phase,
      reason: `a ${pooled.kind ?? 'transaction'} of its old address ${from} (${pooled.hash.slice(0, 12)}…) is in the mempool`,
    };
  const held =
    rotation.holder === 'memory'
      ? 'the old key, held in memory'
      : 'its key, which the Secret holds under another id';
  return heldByHook(
    {
      ...base,
      action: ActionKind.unstake,
      fingerprint,
      reason: `key rotation: ${changed}; unstaking its old address ${from} with ${held}, while ${who} still signs with it; ${rotation.to === undefined ? 'then its pod may go' : 'then its pod restarts on the new key, and the new address is staked'}`,
    },
    input,
  );
}

/**
 * What a key change would do to the quorum on a chain that cannot carry a rotation: one row more
 * (the new address), and the old row's voter gone (its node restarts on a key that never votes).
 */
function rotationArithmetic(input: PlanInput, from: string): string {
  const { voters, rows } = quorumStanding(input);
  const after = votesWhenUp(input, from) ? voters - 1 : voters;
  return `${rows + 1} rows with ${after} voters: ${quorumArithmetic(after, rows + 1, input.settings.capabilities)}`;
}

/**
 * Why a member row whose key nobody holds is a problem, with the quorum's arithmetic and the way
 * out (the orphan of a key change the manager did not see, docs/adr/0029).
 */
function orphanReason(
  address: string,
  whose: string,
  status: ChainStatus | undefined,
  input: PlanInput,
): string {
  const { voters, rows } = quorumStanding(input);
  const caps = input.settings.capabilities;
  const live = commits(voters, rows, caps);
  return `ORPHANED: row ${address} (${whose}) is ${status ?? 'staked'} on chain, and no key for it is held (the Secret changed while the manager was not running): it cannot be unstaked, and no rule counts it as a voter; the node that still signs with it stops at its next restart, and then ${quorumArithmetic(voters, rows, caps)}${live ? '' : ': the chain halts'}. The way out: put that key back in the Secret (the manager then unstakes the row and rotates properly), or unstake it with the key yourself`;
}

/**
 * `hh:mm:ss` (UTC) of a time, with its milliseconds when asked, and with its date when it is not
 * on the day of `day` (a pod started yesterday at 13:00 is not "13:00" against a key seen at 12:00).
 */
function clockTime(ms: number | undefined, day: number | undefined, withMs = false): string {
  if (ms === undefined) return '?';
  const iso = new Date(ms).toISOString();
  const sameDay =
    day !== undefined && new Date(day).toISOString().slice(0, 10) === iso.slice(0, 10);
  return `${sameDay ? '' : `${iso.slice(0, 10)}T`}${iso.slice(11, withMs ? 23 : 19)}Z`;
}

/**
 * Why the pod's node may hold an older key than its id's current one, or undefined (the rule of
 * docs/adr/0022): its node started before the key was first seen. Kubernetes gives the start in
 * whole seconds, so a node that started in the key's own second counts as before it — one
 * harmless restart of a pod not yet staked, rather than a stake no node signs for. A pod that
 * replaces one the manager deleted for this same key was created after the delete, hence after
 * the key was seen, whatever its truncated start says: never judged stale again for that key.
 */
function staleKeyReason(
  id: ValidatorId,
  key: ChainKey,
  pod: PodView | undefined,
  input: PlanInput,
): string | undefined {
  const seen = input.keysSeen?.get(id);
  if (pod === undefined || seen === undefined || seen.address !== key.address) return undefined;
  // Its own address leaving the set (unstaking) is judged too: a drained validator scaled back
  // while its key flapped has a new pod that may hold another id's key, and staking it again (the
  // stake reactivates the row) gave the chain a member no node signs for, and the soak's chain
  // halted (docs/adr/0022). Whether its pod may be deleted is `staleRestartBlocker`'s question.
  const restart = input.staleRestarts?.get(id);
  const forThisKey = restart !== undefined && restart.observedAt === seen.observedAt;
  const restarting = forThisKey && restart.uid === pod.uid;
  // What the node says it signs with (this run of it) settles the question; the times only guess.
  const read = input.nodeKeys?.get(pod.uid);
  const told = read !== undefined && read.startedAt === pod.startedAt ? read.address : undefined;
  if (!restarting) {
    if (pod.terminating || pod.startedAt === undefined || told === key.address) return undefined;
    if (told === undefined && pod.startedAt >= seen.observedAt) return undefined;
    if (told === undefined && forThisKey && restart.podName === pod.name) return undefined; // its replacement
  }
  const what =
    told !== undefined && told !== key.address
      ? `the node of pod ${pod.name} signs with ${told}, not with its current key (the node says so)`
      : `pod ${pod.name} started before its current key was seen (started ${clockTime(pod.startedAt, seen.observedAt)}, key seen ${clockTime(seen.observedAt, pod.startedAt, true)}): its node may hold an older key`;
  if (restarting) return `${what}; restarted it, waiting for its replacement`;
  if (input.settings.restartStalePods === false)
    return `${what}; not restarted (CM_RESTART_STALE_PODS=false): delete the pod to start it with the current key`;
  const blocker = staleRestartBlocker(id, input);
  if (blocker !== undefined) return `${what}; not restarted while ${blocker}`;
  return `${what}; restarting it`;
}

/**
 * Why deleting `id`'s stale pod could take a voter off the chain, or undefined when it cannot.
 *
 * When the pod's node is known to sign with some address (it said so, or its start tells: planner/
 * signers.ts), the question is exact (issue 30): the pod may go only when no member row loses its
 * last signer — the address it signs with is not a member of the set (staked, paused, or leaving
 * and still signing), or another Ready pod's node signs it too — and when no other running node
 * signs with the key it would load on its restart (two nodes with one key sign twice). A rotation
 * therefore restarts the pod only once its old address is out of the set; a key moved to another
 * id is loaded by that id's pod only once the node that signed with it has restarted.
 *
 * When it cannot be told, the old rule stands: if a member of the set has no key in the Secret
 * (the old address of a rotated key), or its key's own id has no Ready pod whose node signs it (a
 * key this pod borrowed), this pod may be the node that signs for it, and it waits, reported. A
 * leaving row (unstaking) counts only while its address still signs blocks: a chain that drops
 * leaving rows from its set (ours) takes no vote of theirs, and one that keeps them (V1 counts
 * every row) shows their votes in its certificates. Counting every leaving row held a stale pod
 * for as long as a drained validator's unstaking lasts (2016 blocks) — the soak's "006: wanted but
 * pending". Walks the chain's rows: called only for a pod already judged stale.
 */
export function staleRestartBlocker(id: ValidatorId, input: PlanInput): string | undefined {
  const pod = input.desired.validators.get(id)?.pod;
  const mine = pod === undefined ? undefined : signerOf(input, id, pod);
  if (pod !== undefined && mine !== undefined) return signerBlocker(id, pod, mine.address, input);
  for (const row of input.chain.values()) {
    if (!isMemberRow(row) && row.status !== ChainStatus.unstaking) continue;
    const last = input.signers.get(row.address);
    if (row.status === ChainStatus.unstaking && !stillSigning(row.address, input)) continue;
    const owner = input.keys.idOfAddress(row.address);
    if (owner === undefined)
      return `chain member ${row.address} has no key in the Secret (a rotated key's old address?): this pod's node may be the one signing for it; delete the pod yourself once that is settled`;
    if (owner === id) {
      // Its own row, leaving (the only member status a validator judged stale can have) and
      // still signing: this very pod's node may be the one.
      if (row.status !== ChainStatus.unstaking) continue;
      return `its own address ${row.address} is leaving the set but signed block ${last ?? '?'}: this pod's node may be the one signing`;
    }
    const ownerPod = input.desired.validators.get(owner)?.pod;
    if (ownerPod === undefined || !ownerPod.ready)
      return `chain member ${owner} has no Ready pod of its own: this pod's node may be signing with its key`;
    const ownerSigns = signerOf(input, owner, ownerPod);
    if (ownerSigns !== undefined && ownerSigns.address !== row.address)
      return `chain member ${row.address} is ${owner}'s key, but the node of ${owner}'s pod ${ownerPod.name} signs with ${ownerSigns.address}: this pod's node may be the one signing for it`;
  }
  return undefined;
}

/** The exact blocker when `pod`'s node is known to sign with `signs` (staleRestartBlocker). */
function signerBlocker(
  id: ValidatorId,
  pod: PodView,
  signs: string,
  input: PlanInput,
): string | undefined {
  const row = input.chain.get(signs);
  const member =
    isMemberRow(row) || (row?.status === ChainStatus.unstaking && stillSigning(signs, input));
  if (member) {
    const others = (signersOf(input).get(signs) ?? []).filter(
      (p) => p.pod.uid !== pod.uid && p.pod.ready,
    );
    if (others.length === 0)
      return `its node signs with ${signs}, ${row?.status ?? 'staked'} on chain: deleting the pod would take that row's only signer away (it is restarted once the row is out of the set)`;
  }
  const entry = input.keys.get(id);
  const next = entry?.ok === true ? entry.key.address : undefined;
  if (next === undefined || next === signs) return undefined;
  const twin = (signersOf(input).get(next) ?? []).find((p) => p.pod.uid !== pod.uid);
  if (twin !== undefined)
    return `the node of pod ${twin.pod.name} signs with ${next}, the key this pod would load: two nodes would sign with one key (it is restarted once that node has restarted)`;
  return undefined;
}

/** A leaving row whose address signed one of the last few blocks (STILL_SIGNING_BLOCKS). */
function stillSigning(address: string, input: PlanInput): boolean {
  const last = input.signers.get(address);
  return last !== undefined && last >= input.height - STILL_SIGNING_BLOCKS;
}

/**
 * A leaving address whose last signature is this many blocks below the chain's height, or closer,
 * still signs: the certificate of a block is read with the block after it, and a node one block
 * behind signs one lower (staleRestartBlocker). Only leaving rows are read so: a staked member
 * counts whether it signs or not.
 */
const STILL_SIGNING_BLOCKS = 3;

/** Waits of one validator's own that the global gates (sync, trust, pause) report over. */
const LOCAL_WAITS: ReadonlySet<Wait> = new Set([
  Wait.hook,
  Wait.nodeSync,
  Wait.debounce,
  Wait.staleKey,
]);

/** A stake or unstake that would go now, unless a `block` hook holds it. */
function heldByHook(d: Draft, input: PlanInput): Draft {
  if (d.id === undefined || d.waitingFor !== undefined) return d;
  const hold = input.hookHolds?.get(d.id);
  if (hold?.kind !== d.action) return d;
  return { ...d, waitingFor: Wait.hook, code: undefined, reason: hold.reason };
}

/**
 * Limits that depend on all validators at once: sync, trust, pause, unresolved ids, the minimum set
 * and pacing. `decide` answers the (undeferred) decision of any id, for the minimum set's split.
 */
function applyGlobalWaits(
  drafts: Draft[],
  input: PlanInput,
  decide: (id: ValidatorId) => Draft,
): void {
  const actionable = drafts.filter((d) => d.action !== 'none' && d.waitingFor === undefined);
  // A hook's hold, a node's sync, a pod's Ready debounce and a stale key's restart are below sync,
  // trust and pause: while those stop everything, no hook runs, no node is asked, no pod is
  // deleted, and the validator reports the gate (with its own wait after it) rather than a wait
  // that a new block makes come and go.
  const gated = drafts.filter(
    (d) => d.action !== 'none' && (d.waitingFor === undefined || LOCAL_WAITS.has(d.waitingFor)),
  );
  if (!input.synced) {
    for (const d of gated)
      Object.assign(d, {
        waitingFor: Wait.sync,
        code: undefined,
        reason: `waiting for the caches and the chain to sync; then: ${d.reason}`,
      });
    return;
  }
  if (!input.trust.trusted) {
    for (const d of gated)
      Object.assign(d, {
        waitingFor: Wait.chainUntrusted,
        code: DecisionCode.chainUntrusted,
        reason: `CHAIN_UNTRUSTED: ${input.trust.reason ?? 'the chain is not trusted'}; would ${d.action}: ${d.reason}`,
      });
    return;
  }
  if (input.paused && !holdForPause(gated, input)) return;
  if (input.desired.unresolvedWanted.length > 0) {
    for (const d of actionable) {
      if (d.action === ActionKind.unstake && d.waitingFor === undefined) {
        Object.assign(d, {
          waitingFor: Wait.podIds,
          code: undefined,
          reason: `waiting for pods ${input.desired.unresolvedWanted.join(', ')} to show their validator ids before unstaking anything`,
        });
      }
    }
  }
  const unstakes = actionable.filter(
    (d) => d.action === ActionKind.unstake && d.waitingFor === undefined,
  );
  if (unstakes.length > 0) {
    const verdict = minimumSetVerdict(input, decide);
    for (const d of unstakes)
      if (d.id !== undefined && !verdict.allowed.has(d.id)) holdForMinimum(d, input, verdict);
  }
  if (input.settings.pacing === 'off') return;

  const pacing = pacingBudget(input);
  let budget = pacing.budget;
  let ceiling = pacing.ceiling;
  const noSync = !joinersVote(input);
  for (const d of drafts) {
    if (d.action !== ActionKind.stake) continue;
    const now = d.waitingFor === undefined;
    if (!now && !(noSync && isStakeWaitingOnItself(d))) continue;
    if (noSync) {
      if (ceiling <= 0) {
        refuseNoStateSync(d, pacing, input.settings.capabilities);
        continue;
      }
      ceiling--;
    }
    if (!now) continue;
    if (budget > 0) {
      budget--;
      continue;
    }
    waitForPacing(d, pacing);
  }
}

/**
 * The pause: every action waits, except the unstake of a validator whose pod the cluster removes
 * and kills soon (planner/paused-departure.ts), which goes on under the rules after the pause.
 * False when nothing goes on.
 */
function holdForPause(gated: readonly Draft[], input: PlanInput): boolean {
  let goesOn = false;
  for (const d of gated) {
    const departure =
      d.action === ActionKind.unstake && d.id !== undefined
        ? pausedDeparture(input.desired.validators.get(d.id), input.settings.pauseDepartureMarginMs)
        : undefined;
    if (departure !== undefined && input.now >= departure.yieldAt) {
      goesOn = true;
      d.reason = `paused, but pod ${departure.pod} is being removed and is killed at ${isoSecond(departure.killAt)}: unstaking now, while its node still votes; ${d.reason}`;
      continue;
    }
    Object.assign(d, {
      waitingFor: Wait.paused,
      code: undefined,
      reason:
        departure === undefined
          ? `paused; would ${d.action}: ${d.reason}`
          : `paused; would ${d.action}: ${d.reason}; pod ${departure.pod} is being removed: held until ${isoSecond(departure.yieldAt)} (resume or scale back up before then), then unstaked anyway, since it is killed at ${isoSecond(departure.killAt)}`,
    });
  }
  return goesOn;
}

function joinersVote(input: PlanInput): boolean {
  return input.settings.capabilities?.lateJoinersVote ?? true;
}

/** A stake that waits only for its own pod or node (not for the manager or the chain). */
function isStakeWaitingOnItself(d: Draft | Decision): boolean {
  return (
    d.action === ActionKind.stake &&
    (d.waitingFor === undefined ||
      d.waitingFor === Wait.podReady ||
      d.waitingFor === Wait.staleKey ||
      d.waitingFor === Wait.debounce ||
      d.waitingFor === Wait.nodeSync)
  );
}

/**
 * The stakes at ids below `id` as plan() counts them: `granted` of the budget (those that may go
 * now) and `claimed` of the ceiling (every stake that waits only on itself).
 */
function lowerStakes(
  input: PlanInput,
  id: ValidatorId,
  pacing: PacingBudget,
): { granted: number; claimed: number } {
  let granted = 0;
  let claimed = 0;
  const noSync = !joinersVote(input);
  if (pacing.budget <= 0 && !noSync) return { granted, claimed };
  for (const other of planIds(input)) {
    if (other >= id) break;
    const d = decideOne(other, input);
    if (!isStakeWaitingOnItself(d)) continue;
    if (noSync) {
      if (claimed >= pacing.ceiling) continue; // refused itself: it claims nothing
      claimed++;
    }
    if (d.waitingFor === undefined && granted < pacing.budget) granted++;
  }
  return { granted, claimed };
}

/**
 * The minimum set's split of every unstake the rule would send now. Cheap when the set stays above
 * the minimum whatever goes (the usual case): only then near the minimum is every candidate decided.
 */
export function minimumSetVerdict(
  input: PlanInput,
  decide: (id: ValidatorId) => Draft | Decision,
): MinimumSetVerdict {
  const candidates: { id: ValidatorId; address: string }[] = [];
  const rotating = rotatingRows(input);
  if (input.minimumSet !== undefined) {
    // Every row that might leave (not wanted, rotated out, or on its way out) gone at once: still
    // enough?
    const after = quorumStanding(
      input,
      (address, id) =>
        rotating.has(address) ||
        (id === undefined ? false : input.desired.validators.get(id)?.wanted !== true),
    );
    if (
      after.voters >= input.minimumSet.size &&
      (input.minimumSet.size === 0 ||
        commits(after.voters, after.rows, input.settings.capabilities))
    ) {
      // Nothing near the minimum: every unstake may go (held stays empty).
      return splitAll(input, after, rotating);
    }
  }
  for (const row of input.chain.values()) {
    if (row.status !== ChainStatus.staked) continue;
    const id = rotating.get(row.address) ?? input.keys.idOfAddress(row.address);
    if (id === undefined) continue;
    if (!rotating.has(row.address) && input.desired.validators.get(id)?.wanted === true) continue;
    const d = decide(id);
    if (
      d.action === ActionKind.unstake &&
      (d.subject ?? row.address) === row.address &&
      (d.waitingFor === undefined || d.waitingFor === Wait.minimumSet)
    )
      candidates.push({ id, address: row.address });
  }
  return splitByMinimumSet(input, candidates);
}

/**
 * Old addresses a key rotation unstakes (few: the ids whose key changed), with their ids: those of
 * ids with former keys, and those of ids whose key was removed and that are not wanted (decideOne
 * unstakes them with the held key). A removal records no former key (keys/key-observations.ts):
 * found by former keys only, a removed key's row was no candidate of the minimum set, held "below
 * the minimum set" whatever the count, and stayed staked after its pod went (S11).
 */
function rotatingRows(input: PlanInput): Map<string, ValidatorId> {
  const ids = new Set<ValidatorId>(input.formerKeys?.keys() ?? []);
  for (const id of input.keysSeen?.keys() ?? [])
    if (input.keys.get(id) === undefined && input.desired.validators.get(id)?.wanted !== true)
      ids.add(id);
  const rotating = new Map<string, ValidatorId>();
  for (const id of ids) {
    const rotation = rotationOf(input, id, () => signersOf(input));
    if (rotation !== undefined) rotating.set(rotation.from, id);
  }
  return rotating;
}

function splitAll(
  input: PlanInput,
  after: { voters: number; rows: number },
  rotating: ReadonlyMap<string, ValidatorId>,
): MinimumSetVerdict {
  const everyone = new Set<ValidatorId>(rotating.values());
  for (const address of input.chain.keys()) {
    const id = input.keys.idOfAddress(address);
    if (id !== undefined) everyone.add(id);
  }
  return { ...after, allowed: everyone, held: new Set(), limit: undefined };
}

function holdForMinimum(d: Draft, input: PlanInput, verdict: MinimumSetVerdict): void {
  const minimum = input.minimumSet;
  Object.assign(d, {
    waitingFor: Wait.minimumSet,
    phase: Phase.held,
    code: minimum === undefined ? DecisionCode.minimumSetUnknown : DecisionCode.belowMinimumSet,
    reason:
      minimum === undefined
        ? `BELOW_MINIMUM_SET: the minimum set is not known yet (the genesis set has not been read); nothing is unstaked until it is (${d.reason})`
        : `BELOW_MINIMUM_SET: below the minimum set: kept staked, since ${heldBecause(verdict, minimum, input.settings.capabilities)}; ${d.reason}`,
  });
}

function refuseNoStateSync(
  d: Draft,
  pacing: PacingBudget,
  caps: PlanSettings['capabilities'],
): void {
  // The first joiner beyond the ceiling: the rows it would make, against every member able to vote.
  const rows = pacing.members + pacing.ceiling + 1;
  Object.assign(d, {
    waitingFor: Wait.noStateSync,
    code: DecisionCode.noStateSync,
    reason: `${NO_STATE_SYNC}; it would never vote, and a set of ${pacing.members} member(s) with ${pacing.voting} voting can carry no more silent members: staking it would halt the chain for good (${quorumArithmetic(pacing.able, rows, caps)}), so it is not staked; the way out is a larger genesis set`,
  });
}

function waitForPacing(d: Draft, pacing: PacingBudget): void {
  Object.assign(d, {
    waitingFor: Wait.pacing,
    code: undefined,
    reason: `pacing: ${pacing.silent} validator(s) joining or silent in a set of ${pacing.members} with ${pacing.voting} voting; no more may join until they vote`,
  });
}
