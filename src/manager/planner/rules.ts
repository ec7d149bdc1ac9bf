// The decision rule as an ordered table of small rules (docs/decision-rule.md §The rules in code:
// the same names, in the same order; a unit test keeps the two equal). Each rule looks at one
// validator's context and either decides (a Draft) or passes (undefined); the first rule that
// decides is the decision. A rule is read knowing that no rule above it decided: the safety
// rules come first (sync, key problems, actions in flight, rotations), then the table's rows.
// What depends on every validator at once (S1's minimum set, S6's trust, the pause, pacing) is
// applied afterwards by planner/plan.ts over these decisions.
import {
  ActionKind,
  ActionState,
  ChainStatus,
  type ChainKey,
  type ChainValidator,
  DecisionCode,
  type DesiredValidator,
  type KeyEntry,
  type PodView,
  type ValidatorId,
} from '../model.ts';
import {
  NEAR_HEAD_RETRY_MS,
  NO_STATE_SYNC,
  Phase,
  Wait,
  blank,
  heldByHook,
  joinersVote,
  signersOf,
  stakeFingerprint,
  unstakeFingerprint,
  type Draft,
  type PlanInput,
} from './decision.ts';
import { rotationOf } from './rotation.ts';
import { decideRotation, openAction } from './rotation-decision.ts';
import { signerOf, type Signer } from './signers.ts';
import { staleKeyReason } from './stale-key.ts';
import { hasProvenItself } from './voting.ts';

/** A decision without a code (`Decision.code` undefined), as a rule declares it. */
export const NO_CODE = 'none';
export type RuleCode = DecisionCode | typeof NO_CODE;

/** What every rule may read about one validator, computed once. */
export interface RuleContext {
  readonly id: ValidatorId;
  readonly input: PlanInput;
  readonly desired: DesiredValidator | undefined;
  readonly wanted: boolean;
  /** Why it is wanted or not, in words (the desired state's, or "no StatefulSet wants it"). */
  readonly wantedReason: string;
  readonly entry: KeyEntry | undefined;
  /** Its valid key (undefined: missing or a key problem). */
  readonly key: ChainKey | undefined;
  readonly row: ChainValidator | undefined;
  readonly status: ChainStatus;
  readonly pod: PodView | undefined;
  /** Its own pod's node signs with another address than its key's (undefined: not known so). */
  readonly elsewhere: Signer | undefined;
  /** Its row signed a certificate since its latest stake (`hasProvenItself`). */
  readonly proven: boolean;
  /** Nothing decided yet, with the fields every decision of this validator carries. */
  readonly draft: Draft;
}

/** One row of the table. */
export interface Rule {
  /** Its name, as in docs/decision-rule.md §The rules in code. */
  readonly name: string;
  /** Every code its decisions can carry (`NO_CODE`: none); a unit test holds it to this. */
  readonly codes: readonly RuleCode[];
  /** The decision, or undefined when the rule does not apply (the next one is asked). */
  decide(ctx: RuleContext): Draft | undefined;
}

export function ruleContext(id: ValidatorId, input: PlanInput): RuleContext {
  const desired = input.desired.validators.get(id);
  const wanted = desired?.wanted === true;
  const entry = input.keys.get(id);
  const key = entry?.ok === true ? entry.key : undefined;
  // A duplicate key's address is the shared one: its row is shown, never acted on. (A key gone
  // missing keeps no row here: its address is reported as unmanaged, as any keyless row.)
  const address = key?.address ?? (entry?.ok === false ? entry.address : undefined);
  const row = address === undefined ? undefined : input.chain.get(address);
  const status = row?.status ?? ChainStatus.absent;
  const pod = desired?.pod;
  // Its own pod's node signs with another key (an older one, or another id's): its row's
  // signatures are someone else's node's, and it is not active itself.
  const signer = key === undefined || pod === undefined ? undefined : signerOf(input, id, pod);
  const elsewhere = signer !== undefined && signer.address !== key?.address ? signer : undefined;
  const proven = key !== undefined && hasProvenItself(input, key.address, id);
  const draft = blank({ key: id, id, address, wanted, chainStatus: status });
  draft.signing = proven && elsewhere === undefined;
  const wantedReason = desired?.wantedReason ?? `no validator StatefulSet wants id ${id}`;
  return {
    id,
    input,
    desired,
    wanted,
    wantedReason,
    entry,
    key,
    row,
    status,
    pod,
    elsewhere,
    proven,
    draft,
  };
}

/** The decision of one validator: that of the first rule that decides. */
export function decideOne(id: ValidatorId, input: PlanInput): Draft {
  return decideWithRule(ruleContext(id, input)).draft;
}

/** The decision and the rule that made it. */
export function decideWithRule(ctx: RuleContext): { rule: Rule; draft: Draft } {
  for (const rule of RULES) {
    const draft = rule.decide(ctx);
    if (draft !== undefined) return { rule, draft };
  }
  // Unreachable: `unstaked`, the last rule, decides every validator that reaches it.
  throw new Error(`no decision rule decided validator ${ctx.id}`);
}

// ---- Safety rules: above every row of the table ----

const cachesNotSynced: Rule = {
  name: 'caches-not-synced',
  codes: [NO_CODE],
  decide: ({ entry, input, draft }) =>
    // The keys may not have been read yet: a key is not called missing before they are.
    entry === undefined && !input.synced
      ? { ...draft, waitingFor: Wait.sync, reason: 'waiting for the caches and the chain to sync' }
      : undefined,
};

const removedKeyRotation: Rule = {
  name: 'removed-key-rotation',
  codes: [DecisionCode.rotationRefused, DecisionCode.orphaned, DecisionCode.actionFailed, NO_CODE],
  decide: ({ entry, wanted, input, id, draft }) => {
    // A key removed while its row was staked: once the validator is not wanted, the old key held
    // in memory unstakes that row (while wanted, its node goes on signing with it, untouched).
    if (entry !== undefined || wanted) return undefined;
    const removed = rotationOf(input, id, () => signersOf(input));
    if (removed === undefined || removed.holder === 'none') return undefined;
    return openAction(draft, input) ?? decideRotation(draft, removed, input);
  },
};

const keyMissing: Rule = {
  name: 'key-missing',
  codes: [DecisionCode.keyMissing],
  decide: ({ entry, wanted, id, input, draft }) => {
    if (entry !== undefined || !wanted) return undefined;
    const reason = `KEY_MISSING: no key "${id}" in the keys Secret`;
    // The row of the key it had (its node still signs with it) is what the decision is about:
    // `status` shows that row, not "absent" (the subject, as for a rotation's old address) —
    // unless another id has that key now (a key it shared or borrowed: that row is the other's).
    const last = input.keysSeen?.get(id)?.address;
    const row = last === undefined ? undefined : input.chain.get(last);
    if (last === undefined || row === undefined || input.keys.idOfAddress(last) !== undefined)
      return { ...draft, phase: Phase.failed, code: DecisionCode.keyMissing, reason };
    const held = input.keys.heldFor?.(last) === id;
    return {
      ...draft,
      phase: Phase.failed,
      code: DecisionCode.keyMissing,
      subject: last,
      reason: `${reason}; its row ${last} is ${row.status} on chain${held ? ' (the manager holds its old key in memory: a scale-down past it unstakes it)' : ''}`,
    };
  },
};

const noKeyNotWanted: Rule = {
  name: 'no-key-not-wanted',
  codes: [NO_CODE],
  decide: ({ entry, wantedReason, draft }) =>
    entry === undefined ? { ...draft, phase: Phase.unstaked, reason: wantedReason } : undefined,
};

// A key problem: never staked, unstaked or drained, whatever the cluster wants (S2, S3).
const keyDuplicate: Rule = {
  name: 'key-duplicate',
  codes: [DecisionCode.keyDuplicate],
  decide: ({ entry, id, draft }) =>
    entry?.ok === false && entry.code === 'KEY_DUPLICATE'
      ? {
          ...draft,
          phase: Phase.failed,
          code: DecisionCode.keyDuplicate,
          reason: `KEY_DUPLICATE: key "${id}" is ${entry.message}`,
        }
      : undefined,
};

const keyInvalid: Rule = {
  name: 'key-invalid',
  codes: [DecisionCode.keyInvalid],
  decide: ({ entry, id, draft }) =>
    entry?.ok === false
      ? {
          ...draft,
          phase: Phase.failed,
          code: DecisionCode.keyInvalid,
          reason: `KEY_INVALID: key "${id}" is malformed (${entry.code}: ${entry.message})`,
        }
      : undefined,
};

const podConflict: Rule = {
  name: 'pod-conflict',
  codes: [DecisionCode.podConflict],
  decide: ({ desired, draft }) =>
    desired?.conflict === undefined
      ? undefined
      : {
          ...draft,
          phase: Phase.failed,
          code: DecisionCode.podConflict,
          reason: `conflict: ${desired.conflict}`,
        },
};

const actionInFlight: Rule = {
  name: 'action-in-flight',
  codes: [NO_CODE],
  decide: ({ draft, input }) => openAction(draft, input),
};

// An action found committed at a height the chain view has not read yet (the reconciler looks a
// transaction up by hash; after the RPC node went back, the view may trail it): the rows do not
// show its effect yet, and acting on them would send it a second time (found by the soak: a
// second stake of 008 failed with V1's 60, a second unstake with 54). S9.
const committedAheadOfView: Rule = {
  name: 'committed-ahead-of-view',
  codes: [NO_CODE],
  decide: ({ input, id, draft }) => {
    const done = input.latest.get(id);
    if (
      done?.state !== ActionState.committed ||
      done.committedHeight === undefined ||
      done.committedHeight <= input.height
    )
      return undefined;
    return {
      ...draft,
      phase: done.kind === ActionKind.stake ? Phase.staking : Phase.unstaking,
      requeueAfterMs: 1_000,
      reason: `${done.kind} committed at height ${done.committedHeight}; waiting for the chain view (at ${input.height}) to reach it`,
    };
  },
};

const keyRotation: Rule = {
  name: 'key-rotation',
  codes: [DecisionCode.rotationRefused, DecisionCode.orphaned, DecisionCode.actionFailed, NO_CODE],
  decide: ({ pod, input, id, draft }) => {
    if (pod?.held === true) return undefined;
    const rotation = rotationOf(input, id, () => signersOf(input));
    return rotation === undefined ? undefined : decideRotation(draft, rotation, input);
  },
};

const inMempool: Rule = {
  name: 'in-mempool',
  codes: [NO_CODE],
  decide: ({ key, input, draft }) => {
    const pooled = key === undefined ? undefined : input.mempool.get(key.address);
    if (pooled === undefined) return undefined;
    return {
      ...draft,
      phase: pooled.kind === ActionKind.stake ? Phase.staking : Phase.unstaking,
      reason: `a ${pooled.kind ?? 'transaction'} of this validator (${pooled.hash.slice(0, 12)}…, not in this manager's journal) is in the mempool`,
    };
  },
};

const heldByAnnotation: Rule = {
  name: 'held-by-annotation',
  codes: [NO_CODE],
  decide: ({ pod, draft }) =>
    pod?.held === true
      ? {
          ...draft,
          phase: Phase.held,
          reason: `pod ${pod.name} is held by annotation; nothing is done`,
        }
      : undefined,
};

// ---- The table: wanted and staked ----

const stakedNeverVotes: Rule = {
  name: 'staked-never-votes',
  codes: [DecisionCode.noStateSync],
  decide: ({ wanted, status, proven, input, id, draft }) =>
    wanted &&
    status === ChainStatus.staked &&
    !proven &&
    !joinersVote(input) &&
    input.stakeHeights.has(id)
      ? {
          ...draft,
          phase: Phase.staked,
          code: DecisionCode.noStateSync,
          reason: `${NO_STATE_SYNC}; staked at height ${input.stakeHeights.get(id) ?? '?'} and counted in the quorum, its node never syncs or votes`,
        }
      : undefined,
};

const stakedSignedElsewhere: Rule = {
  name: 'staked-signed-elsewhere',
  codes: [NO_CODE],
  decide: ({ wanted, status, elsewhere, proven, pod, key, input, id, draft }) => {
    if (!wanted || status !== ChainStatus.staked || elsewhere === undefined) return undefined;
    const last = proven ? ` (last at height ${input.signers.get(key?.address ?? '') ?? '?'})` : '';
    const reason = `staked, but the node of its pod ${pod?.name ?? '?'} signs with ${elsewhere.address} (${elsewhere.how === 'read' ? 'it says so' : 'it started before this key was seen'}): this row's signatures${last} are another node's`;
    // Its pod goes on the stale-key restart (docs/adr/0022) like a pod not staked yet: otherwise
    // a row staked while its node held another key (soak seed 951301: a key move undone as the
    // pods restarted) is never signed for, and an id waiting to load that other key waits for
    // good. The restart's own rule keeps every member with a signer (staleRestartBlocker).
    const stale = key === undefined ? undefined : staleKeyReason(id, key, pod, input);
    return stale === undefined
      ? { ...draft, phase: Phase.staked, reason }
      : { ...draft, phase: Phase.staked, waitingFor: Wait.staleKey, reason: `${reason}; ${stale}` };
  },
};

const staked: Rule = {
  name: 'staked',
  codes: [NO_CODE],
  decide: ({ wanted, status, proven, key, input, draft }) => {
    if (!wanted || status !== ChainStatus.staked) return undefined;
    return {
      ...draft,
      phase: proven ? Phase.active : Phase.staked,
      reason: proven
        ? `staked and signing (last signature at height ${input.signers.get(key?.address ?? '') ?? '?'})`
        : 'staked; waiting for its first signature in a committed block',
    };
  },
};

const pausedOnChain: Rule = {
  name: 'paused-on-chain',
  codes: [NO_CODE],
  decide: ({ wanted, status, draft }) =>
    wanted && status === ChainStatus.paused
      ? {
          ...draft,
          phase: Phase.staked,
          reason: 'staked but paused on chain; unpausing is not managed',
        }
      : undefined,
};

// ---- The table: wanted, not staked: a stake, unless its pod or node is not ready for it ----

const staleKey: Rule = {
  name: 'stale-key',
  codes: [NO_CODE],
  decide: ({ wanted, key, pod, input, id, draft }) => {
    if (!wanted || key === undefined) return undefined;
    const stale = staleKeyReason(id, key, pod, input);
    return stale === undefined
      ? undefined
      : { ...draft, action: ActionKind.stake, waitingFor: Wait.staleKey, reason: stale };
  },
};

const podNotReady: Rule = {
  name: 'pod-not-ready',
  codes: [NO_CODE],
  decide: ({ wanted, pod, desired, draft }) => {
    if (!wanted || pod?.ready === true) return undefined;
    return {
      ...draft,
      action: ActionKind.stake,
      waitingFor: Wait.podReady,
      reason:
        pod === undefined
          ? `waiting for pod of ordinal ${desired?.ordinal ?? '?'} to exist`
          : `waiting for pod ${pod.name} to be Ready`,
    };
  },
};

const serviceUrlUnfilled: Rule = {
  name: 'service-url-unfilled',
  codes: [DecisionCode.serviceUrlUnfilled],
  decide: ({ wanted, pod, draft }) =>
    wanted && pod !== undefined && pod.serviceUrl === undefined
      ? {
          ...draft,
          phase: Phase.failed,
          code: DecisionCode.serviceUrlUnfilled,
          reason: `cannot fill the service-URL template for pod ${pod.name} (missing pod IP or port)`,
        }
      : undefined,
};

/** The stake the rows below decide about: its pod (Ready), URL and fingerprint. */
function stakeOf(
  ctx: RuleContext,
): { pod: PodView; serviceUrl: string; fingerprint: string } | undefined {
  const { wanted, key, pod, input } = ctx;
  const serviceUrl = pod?.serviceUrl;
  if (!wanted || key === undefined || pod === undefined || serviceUrl === undefined)
    return undefined;
  return { pod, serviceUrl, fingerprint: stakeFingerprint(key, input.settings, serviceUrl) };
}

const stakeFailed: Rule = {
  name: 'stake-failed',
  codes: [DecisionCode.actionFailed],
  decide: (ctx) => {
    const stake = stakeOf(ctx);
    const latest = ctx.input.latest.get(ctx.id);
    if (
      stake === undefined ||
      latest?.terminal !== true ||
      latest.fingerprint !== stake.fingerprint
    )
      return undefined;
    return {
      ...ctx.draft,
      phase: Phase.failed,
      fingerprint: stake.fingerprint,
      serviceUrl: stake.serviceUrl,
      code: DecisionCode.actionFailed,
      reason: `${latest.errorCode ?? 'FAILED'}: ${latest.error ?? 'stake failed'}; fix the inputs to retry`,
    };
  },
};

// A pod in its first Ready spell with no restarts is staked at once; one that flapped (or a source
// that cannot tell) must stay Ready for the debounce first.
const readyDebounce: Rule = {
  name: 'ready-debounce',
  codes: [NO_CODE],
  decide: (ctx) => {
    const stake = stakeOf(ctx);
    const { input, draft } = ctx;
    if (stake === undefined) return undefined;
    const readyFor = input.now - (stake.pod.readySince ?? input.now);
    if (stake.pod.flapped === false || readyFor >= input.settings.readyDebounceMs) return undefined;
    return {
      ...draft,
      action: ActionKind.stake,
      waitingFor: Wait.debounce,
      fingerprint: stake.fingerprint,
      serviceUrl: stake.serviceUrl,
      requeueAfterMs: input.settings.readyDebounceMs - readyFor,
      reason: `pod ${stake.pod.name} Ready for ${readyFor} ms of ${input.settings.readyDebounceMs}`,
    };
  },
};

/** The stake, as the rows below decide it when nothing holds it. */
function stakeDraft(
  ctx: RuleContext,
  stake: { pod: PodView; serviceUrl: string; fingerprint: string },
): Draft {
  const { draft, wantedReason, status, input } = ctx;
  return {
    ...draft,
    action: ActionKind.stake,
    fingerprint: stake.fingerprint,
    serviceUrl: stake.serviceUrl,
    reason: `${wantedReason}; pod ${stake.pod.name} is Ready; on chain: ${status}${
      joinersVote(input)
        ? ''
        : '; the chain has no state sync: it joins as a member that never votes, within the margin'
    }`,
  };
}

// Stake only a node that has caught up (CM_SYNC_CHECK). Without state sync the node of a late
// joiner never syncs: there is nothing to wait for (pacing's ceiling decides whether it may join
// as a member that never votes).
const nodeSyncing: Rule = {
  name: 'node-syncing',
  codes: [NO_CODE],
  decide: (ctx) => {
    const stake = stakeOf(ctx);
    const { input, id } = ctx;
    if (stake === undefined || !input.settings.syncCheck || !joinersVote(input)) return undefined;
    const node = input.nodeHeights.get(id);
    if (node === undefined || input.now - node.at > input.settings.nodeHeightMaxAgeMs)
      return {
        ...stakeDraft(ctx, stake),
        waitingFor: Wait.nodeSync,
        reason: `asking node of pod ${stake.pod.name} for its height`,
      };
    if (node.height >= input.height - input.settings.syncTolerance) return undefined;
    // A node a block or two short of the tolerance is polling its way to the head and will be
    // there within its next poll: asked again soon, not after the usual second (a devnet wave
    // waited a whole block for it). A node far behind is asked at the usual pace.
    const nearHead = input.height - node.height <= input.settings.syncTolerance + 2;
    return {
      ...stakeDraft(ctx, stake),
      waitingFor: Wait.nodeSync,
      ...(nearHead ? { requeueAfterMs: NEAR_HEAD_RETRY_MS } : {}),
      reason: `node of pod ${stake.pod.name} is syncing (height ${node.height}, chain ${input.height})`,
    };
  },
};

const stake: Rule = {
  name: 'stake',
  codes: [NO_CODE],
  decide: (ctx) => {
    const found = stakeOf(ctx);
    return found === undefined ? undefined : heldByHook(stakeDraft(ctx, found), ctx.input);
  },
};

// ---- The table: not wanted ----

const unstakeFailed: Rule = {
  name: 'unstake-failed',
  codes: [DecisionCode.actionFailed],
  decide: ({ wanted, status, key, input, id, draft }) => {
    if (wanted || key === undefined) return undefined;
    if (status !== ChainStatus.staked && status !== ChainStatus.paused) return undefined;
    const fingerprint = unstakeFingerprint(key);
    const latest = input.latest.get(id);
    if (latest?.terminal !== true || latest.fingerprint !== fingerprint) return undefined;
    return {
      ...draft,
      phase: Phase.failed,
      fingerprint,
      code: DecisionCode.actionFailed,
      reason: `${latest.errorCode ?? 'FAILED'}: ${latest.error ?? 'unstake failed'}`,
    };
  },
};

const unstake: Rule = {
  name: 'unstake',
  codes: [NO_CODE],
  decide: ({ wanted, status, key, proven, wantedReason, input, draft }) => {
    if (wanted || key === undefined) return undefined;
    if (status !== ChainStatus.staked && status !== ChainStatus.paused) return undefined;
    return heldByHook(
      {
        ...draft,
        action: ActionKind.unstake,
        fingerprint: unstakeFingerprint(key),
        phase: proven ? Phase.active : Phase.staked,
        reason: `${wantedReason}; still staked on chain`,
      },
      input,
    );
  },
};

/** The last row: whatever reaches it is not staked and not wanted, and nothing is done. */
const unstaked: Rule = {
  name: 'unstaked',
  codes: [NO_CODE],
  decide: ({ row, status, wantedReason, input, draft }) => {
    const counted =
      row !== undefined && !(input.settings.capabilities?.unstakeLeavesQuorum ?? true)
        ? '; its row still counts in the quorum (this chain keeps every row ever staked in it)'
        : '';
    return {
      ...draft,
      phase: Phase.unstaked,
      reason: `${wantedReason}; on chain: ${status}${counted}`,
    };
  },
};

/** The table, in order: the first rule that decides is the decision. */
export const RULES: readonly Rule[] = [
  cachesNotSynced,
  removedKeyRotation,
  keyMissing,
  noKeyNotWanted,
  keyDuplicate,
  keyInvalid,
  podConflict,
  actionInFlight,
  committedAheadOfView,
  keyRotation,
  inMempool,
  heldByAnnotation,
  stakedNeverVotes,
  stakedSignedElsewhere,
  staked,
  pausedOnChain,
  staleKey,
  podNotReady,
  serviceUrlUnfilled,
  stakeFailed,
  readyDebounce,
  nodeSyncing,
  stake,
  unstakeFailed,
  unstake,
  unstaked,
];
