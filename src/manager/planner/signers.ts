// Which node signs with which address (issue 30: "the chain thinks in addresses"). Quorum,
// signatures and drains belong to the address a node signs with, not to the id whose key the Secret
// holds today: a node reads its key once, when it starts, so after a rotation or a move its pod
// still signs with the old key until it restarts. What the node says (keys/node-keys.ts) comes
// first; else the start times tell: a node that started after its id's current key was first seen
// holds that key, one that started while an earlier key was current holds that one (the journal
// keeps the former keys, keys/key-observations.ts); otherwise it is not known, and the rules that
// ask fall back to what they assumed before (docs/adr/0028).
import {
  ChainStatus,
  type ChainValidator,
  type DesiredState,
  type FormerKey,
  type KeyObservation,
  type NodeKey,
  type PodView,
  type ValidatorId,
} from '../model.ts';

/** Kubernetes writes start times in whole seconds: the true start may be this much later. */
const START_PRECISION_MS = 1_000;

export interface SignerInput {
  readonly desired: DesiredState;
  /** What each pod's node said it signs with, by pod uid (absent: nothing read). */
  readonly nodeKeys?: ReadonlyMap<string, NodeKey> | undefined;
  /** When each id's current key was first seen. */
  readonly keysSeen?: ReadonlyMap<ValidatorId, KeyObservation> | undefined;
  /** Each id's former keys, oldest first. */
  readonly formerKeys?: ReadonlyMap<ValidatorId, readonly FormerKey[]> | undefined;
  /** The pod the manager last deleted for a stale key, by id (its replacement holds the key). */
  readonly staleRestarts?:
    | ReadonlyMap<
        ValidatorId,
        { readonly podName: string; readonly uid: string; readonly observedAt: number }
      >
    | undefined;
}

/** The address a pod's node signs with, and how that is known. */
export interface Signer {
  readonly address: string;
  readonly how: 'read' | 'inferred';
}

/** What `id`'s pod's node signs with, or undefined when it cannot be told (or is not running). */
export function signerOf(input: SignerInput, id: ValidatorId, pod: PodView): Signer | undefined {
  const read = input.nodeKeys?.get(pod.uid);
  if (read !== undefined && read.startedAt === pod.startedAt)
    return { address: read.address, how: 'read' };
  const start = pod.startedAt;
  if (start === undefined) return undefined;
  const seen = input.keysSeen?.get(id);
  if (seen !== undefined) {
    const restart = input.staleRestarts?.get(id);
    const replacement =
      restart !== undefined &&
      restart.observedAt === seen.observedAt &&
      restart.podName === pod.name &&
      restart.uid !== pod.uid;
    if (start >= seen.observedAt || replacement) return { address: seen.address, how: 'inferred' };
  }
  const former = input.formerKeys?.get(id) ?? [];
  for (let i = former.length - 1; i >= 0; i--) {
    const f = former[i];
    // Started (to the second) after that key was seen and before the next one was.
    if (f !== undefined && start >= f.observedAt && start + START_PRECISION_MS <= f.replacedAt)
      return { address: f.address, how: 'inferred' };
  }
  return undefined;
}

/** A pod and what its node signs with. */
export interface SigningPod {
  readonly id: ValidatorId;
  readonly pod: PodView;
  readonly how: 'read' | 'inferred';
}

/**
 * Every running validator pod by the address its node signs with (terminating ones too: their
 * nodes vote until they exit). Pods whose signer cannot be told are left out.
 */
export function signersByAddress(input: SignerInput): Map<string, SigningPod[]> {
  const out = new Map<string, SigningPod[]>();
  for (const entry of input.desired.validators.values()) {
    const pod = entry.pod;
    if (pod === undefined || pod.startedAt === undefined) continue;
    const signer = signerOf(input, entry.id, pod);
    if (signer === undefined) continue;
    const list = out.get(signer.address) ?? [];
    list.push({ id: entry.id, pod, how: signer.how });
    out.set(signer.address, list);
  }
  return out;
}

/** A row that takes part in the set: staked or paused on chain. */
export function isMemberRow(row: Pick<ChainValidator, 'status'> | undefined): boolean {
  return row?.status === ChainStatus.staked || row?.status === ChainStatus.paused;
}

/** The id whose former keys include `address` (the newest such), or undefined. */
export function formerOwnerOf(
  input: Pick<SignerInput, 'formerKeys'>,
  address: string,
): { id: ValidatorId; key: FormerKey } | undefined {
  let best: { id: ValidatorId; key: FormerKey } | undefined;
  for (const [id, list] of input.formerKeys ?? [])
    for (const key of list)
      if (key.address === address && (best === undefined || key.replacedAt > best.key.replacedAt))
        best = { id, key };
  return best;
}

/**
 * The addresses `id`'s pod's node may sign with: the one it is known to sign with, or, when that
 * cannot be told (or there is no pod running), its current key's and every former key's.
 */
export function addressesOf(
  input: SignerInput & { readonly keys: { addressOf(id: ValidatorId): string | undefined } },
  id: ValidatorId,
): string[] {
  const pod = input.desired.validators.get(id)?.pod;
  const signer = pod === undefined ? undefined : signerOf(input, id, pod);
  if (signer !== undefined) return [signer.address];
  const out = new Set<string>();
  const current = input.keys.addressOf(id);
  if (current !== undefined) out.add(current);
  const seen = input.keysSeen?.get(id)?.address;
  if (seen !== undefined) out.add(seen);
  for (const f of input.formerKeys?.get(id) ?? []) out.add(f.address);
  return [...out];
}
