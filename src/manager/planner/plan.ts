// The planner: a pure function of (desired, actual, pending) that decides the one action each
// validator needs, and why. The reconciler acts on it; `GET /v1/plan` shows it as a dry run.
// The rule: docs/design.md §The rule that decides. Each validator's own decision is the first of
// the small rules in planner/rules.ts that decides (key problems, rotations and actions in flight
// first); here come the limits that depend on every validator at once (sync, trust, pause, the
// minimum set, pacing).
import { ActionKind, ChainStatus, DecisionCode, type ValidatorId } from '../model.ts';
import {
  NO_STATE_SYNC,
  Phase,
  Wait,
  blank,
  clockTime,
  joinersVote,
  signersOf,
  type Decision,
  type Draft,
  type PlanInput,
  type PlanSettings,
} from './decision.ts';
import {
  heldBecause,
  quorumStanding,
  splitByMinimumSet,
  type MinimumSet,
  type MinimumSetVerdict,
} from './minimum-set.ts';
import { pacingBudget, type PacingBudget } from './pacing.ts';
import { commits, quorumArithmetic } from './quorum.ts';
import { formerAddresses, rotationOf } from './rotation.ts';
import { orphanReason } from './rotation-decision.ts';
import { decideOne } from './rules.ts';
import { formerOwnerOf } from './signers.ts';
import { isoSecond, pausedDeparture } from './paused-departure.ts';

// The planner's vocabulary (decision.ts) is read from here, as before the rules were split off.
export * from './decision.ts';
export { staleRestartBlocker } from './stale-key.ts';
export { hasProvenItself } from './voting.ts';

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
  if (!listed(input, id)) return undefined;
  const draft = decideOne(id, input);
  if (draft.action === 'none') return draft;
  const gate = !input.synced || !input.trust.trusted || input.paused;
  if (
    draft.waitingFor !== undefined &&
    draft.waitingFor !== Wait.hook &&
    !(gate && LOCAL_WAITS.has(draft.waitingFor))
  ) {
    if (!gate) refuseIfNeverFits(draft, input, id);
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

/** Whether `plan` lists the id: wanted or desired, its key's row on chain, or a rotating row. */
function listed(input: PlanInput, id: ValidatorId): boolean {
  const entry = input.keys.get(id);
  const address = entry?.ok === true ? entry.key.address : entry?.address;
  // plan() lists an on-chain row under every id whose key has its address (all of duplicates).
  const onChain =
    address !== undefined &&
    input.chain.has(address) &&
    input.keys.idsOfAddress(address).includes(id);
  return input.desired.validators.has(id) || onChain || holdsRotatingRow(input, id);
}

/**
 * Without state sync a stake that could never fit is said so at once, pod Ready or not (a stake
 * that waits on itself, while nothing gates the plan: planOne's share of applyGlobalWaits).
 */
function refuseIfNeverFits(draft: Draft, input: PlanInput, id: ValidatorId): void {
  if (!isStakeWaitingOnItself(draft) || joinersVote(input) || input.settings.pacing === 'off')
    return;
  const pacing = pacingBudget(input);
  if (lowerStakes(input, id, pacing).claimed >= pacing.ceiling)
    refuseNoStateSync(draft, pacing, input.settings.capabilities);
}

/** A row whose old key is held for `id`'s rotation is on chain (plan() lists `id` for it). */
function holdsRotatingRow(input: PlanInput, id: ValidatorId): boolean {
  const candidates = formerAddresses(input, id);
  const seen = input.keysSeen?.get(id)?.address;
  if (seen !== undefined && !candidates.includes(seen)) candidates.push(seen);
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

/** Waits of one validator's own that the global gates (sync, trust, pause) report over. */
const LOCAL_WAITS: ReadonlySet<Wait> = new Set([
  Wait.hook,
  Wait.nodeSync,
  Wait.debounce,
  Wait.staleKey,
]);

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
  if (input.settings.pacing !== 'off') applyPacing(drafts, input);
}

/**
 * Pacing over every stake, in id order: the ones that may go now take the height's budget, and
 * without state sync every stake that waits only on itself takes a place under the ceiling.
 */
function applyPacing(drafts: readonly Draft[], input: PlanInput): void {
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
  // A rotation onto a key moved from another id in rotation ends only after that one's (its pod
  // restarts onto the key once the other node no longer signs with it): it waits for it.
  const waiting = new Map<ValidatorId, ValidatorId>();
  for (const id of rotating.values()) {
    const to = rotationOf(input, id, () => signersOf(input))?.to;
    const other = to === undefined ? undefined : rotating.get(to);
    if (other !== undefined) waiting.set(id, other);
  }
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
      return { ...splitAll(input, after, rotating, waiting), waitsFor: waiting };
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
  return {
    ...splitByMinimumSet(input, candidates, new Set(waiting.keys())),
    waitsFor: waiting,
  };
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
  waiting: ReadonlyMap<ValidatorId, ValidatorId>,
): MinimumSetVerdict {
  const everyone = new Set<ValidatorId>(rotating.values());
  for (const address of input.chain.keys()) {
    const id = input.keys.idOfAddress(address);
    if (id !== undefined) everyone.add(id);
  }
  for (const id of waiting.keys()) everyone.delete(id);
  return { ...after, allowed: everyone, held: new Set(waiting.keys()), limit: undefined };
}

function holdForMinimum(d: Draft, input: PlanInput, verdict: MinimumSetVerdict): void {
  const minimum = input.minimumSet;
  const first = d.id === undefined ? undefined : verdict.waitsFor?.get(d.id);
  if (first !== undefined) {
    waitForRotation(d, first, input);
    return;
  }
  if (minimum !== undefined && d.wanted && d.subject !== undefined) {
    holdRotation(d, input, verdict, minimum);
    return;
  }
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

/**
 * A key rotation onto a key that `first`'s rotation still frees (a key moved from `first`): its old
 * address stays until `first`'s is out, whatever the minimum set would allow — its pod cannot
 * restart onto the key before, and its unstake first would take a voter `first` needs (soak seeds
 * 28461 and 245363: held for good at 3 voters against a minimum of 3).
 */
function waitForRotation(d: Draft, first: ValidatorId, input: PlanInput): void {
  const to = d.id === undefined ? undefined : input.keys.addressOf(d.id);
  Object.assign(d, {
    // The minimum set's wait (a passive one: nothing is done meanwhile), for another reason.
    waitingFor: Wait.minimumSet,
    code: undefined,
    reason: `its key rotation waits for ${first}'s: its new key (address ${to ?? '?'}) is ${first}'s old one, still staked and signed by ${first}'s node; its old address ${d.subject ?? '?'} goes once that one is out; ${d.reason}`,
  });
}

/**
 * A wanted validator's key rotation that the minimum set holds: each rotation takes a voter away
 * until its new address votes. With more validators wanted than the minimum, its turn comes once
 * the rotations before it are done (it is not `held`: a scale waits for it, SCALE_BLOCKED would be
 * untrue). With no more than the minimum wanted it never comes: the reason says so, and the ways
 * out (a validator more for the time of the rotation, or the old key back).
 */
function holdRotation(
  d: Draft,
  input: PlanInput,
  verdict: MinimumSetVerdict,
  minimum: MinimumSet,
): void {
  let wanted = 0;
  for (const entry of input.desired.validators.values()) if (entry.wanted) wanted++;
  const why = heldBecause(verdict, minimum, input.settings.capabilities);
  if (wanted > minimum.size) {
    Object.assign(d, {
      waitingFor: Wait.minimumSet,
      code: DecisionCode.belowMinimumSet,
      reason: `BELOW_MINIMUM_SET: its key rotation waits its turn: ${why}; it goes on once the rotations and stakes before it are done and their addresses vote (${wanted} validators wanted against a minimum of ${minimum.size}); ${d.reason}`,
    });
    return;
  }
  Object.assign(d, {
    waitingFor: Wait.minimumSet,
    phase: Phase.held,
    code: DecisionCode.belowMinimumSet,
    reason: `BELOW_MINIMUM_SET: its key rotation cannot go on: ${why}, and with ${wanted} validator(s) wanted against a minimum of ${minimum.size} (${minimum.source}) no other voter can join first. The way out: scale to ${minimum.size + 1} until the rotation is done (the new validator votes, then the old address goes), or put the old key back under its id; ${d.reason}`,
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
