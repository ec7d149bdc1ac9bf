// The stale-key rule (docs/adr/0022, S10): a pod whose node may sign with another key than its
// id's current one is not staked, and is restarted only when no member loses its signer.
import { ChainStatus, type ChainKey, type PodView, type ValidatorId } from '../model.ts';
import { clockTime, signersOf, type PlanInput } from './decision.ts';
import { isMemberRow, signerOf } from './signers.ts';

/**
 * Why the pod's node may hold an older key than its id's current one, or undefined (the rule of
 * docs/adr/0022): its node started before the key was first seen. Kubernetes gives the start in
 * whole seconds, so a node that started in the key's own second counts as before it — one
 * harmless restart of a pod not yet staked, rather than a stake no node signs for. A pod that
 * replaces one the manager deleted for this same key was created after the delete, hence after
 * the key was seen, whatever its truncated start says: never judged stale again for that key.
 */
export function staleKeyReason(
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
