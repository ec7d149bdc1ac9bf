// The address each validator pod's node signs with, as the node says it (the chain port's
// `nodeAddress`): read once per run of the node (pod uid and start), when the pod is Ready, a few at
// a time; a read that fails is tried again with a growing delay while the pod stays. The planner's
// address rules (planner/signers.ts) prefer this to anything inferred from the Secret: a node holds
// the key it read when it started, which may be one the Secret no longer has, or another id's.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { DesiredState, NodeKey, PodView, ValidatorId } from '../model.ts';

export interface NodeKeysOptions {
  /** Asks the node at this service URL for its address (undefined: it runs without a key). */
  read(serviceUrl: string, signal: AbortSignal): Promise<string | undefined>;
  clock: Clock;
  logger: Logger;
  /** A node's address became known (or changed): re-decide its validator. */
  onRead(id: ValidatorId): void;
  /** Reads at once (4). */
  concurrency?: number;
}

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

interface Wanted {
  readonly id: ValidatorId;
  readonly pod: PodView;
  readonly serviceUrl: string;
}

export class NodeKeys {
  readonly #o: NodeKeysOptions;
  /** By pod uid: what its node said, for the run that started at `startedAt`. */
  readonly #known = new Map<string, NodeKey>();
  /** By pod uid: reads under way or waiting for their retry. */
  readonly #busy = new Set<string>();
  readonly #retryMs = new Map<string, number>();
  readonly #queue: Wanted[] = [];
  readonly #cancels = new Set<() => void>();
  readonly #controller = new AbortController();
  #running = 0;
  #latest = new Map<string, Wanted>();

  constructor(options: NodeKeysOptions) {
    this.#o = options;
  }

  /** What each pod's node said, by pod uid (a live view). */
  get known(): ReadonlyMap<string, NodeKey> {
    return this.#known;
  }

  /** Takes in the pods as they are now: reads the nodes not read for their current run. */
  observe(desired: DesiredState): void {
    const latest = new Map<string, Wanted>();
    for (const entry of desired.validators.values()) {
      const pod = entry.pod;
      if (pod === undefined || !pod.ready || pod.terminating || pod.serviceUrl === undefined)
        continue;
      latest.set(pod.uid, { id: entry.id, pod, serviceUrl: pod.serviceUrl });
    }
    this.#latest = latest;
    for (const uid of this.#known.keys()) if (!latest.has(uid)) this.#forget(uid);
    for (const [uid, wanted] of latest) {
      const known = this.#known.get(uid);
      if (known !== undefined && known.startedAt === wanted.pod.startedAt) continue;
      if (this.#busy.has(uid)) continue;
      this.#busy.add(uid);
      this.#queue.push(wanted);
    }
    this.#pump();
  }

  stop(): void {
    this.#controller.abort();
    for (const cancel of this.#cancels) cancel();
    this.#cancels.clear();
  }

  #forget(uid: string): void {
    this.#known.delete(uid);
    this.#retryMs.delete(uid);
  }

  #pump(): void {
    const limit = this.#o.concurrency ?? 4;
    while (this.#running < limit && !this.#controller.signal.aborted) {
      const next = this.#queue.shift();
      if (next === undefined) return;
      this.#running++;
      void this.#read(next).finally(() => {
        this.#running--;
        this.#pump();
      });
    }
  }

  async #read(wanted: Wanted): Promise<void> {
    const { uid, startedAt } = wanted.pod;
    try {
      const address = await this.#o.read(wanted.serviceUrl, this.#controller.signal);
      this.#busy.delete(uid);
      this.#retryMs.delete(uid);
      // The pod went (or restarted) meanwhile: what was read is not about its current run.
      if (this.#latest.get(uid)?.pod.startedAt !== startedAt) return;
      const before = this.#known.get(uid);
      if (address === undefined) this.#known.delete(uid);
      else this.#known.set(uid, { address, startedAt });
      if (before?.address !== address) this.#o.onRead(wanted.id);
    } catch (error: unknown) {
      if (this.#controller.signal.aborted) return;
      const delay = Math.min(MAX_RETRY_MS, this.#retryMs.get(uid) ?? FIRST_RETRY_MS);
      this.#retryMs.set(uid, delay * 2);
      this.#o.logger.debug(
        { validator: wanted.id, pod: wanted.pod.name, err: error, retryInMs: delay },
        'the node did not say which key it signs with',
      );
      const cancel = this.#o.clock.setTimer(() => {
        this.#cancels.delete(cancel);
        this.#busy.delete(uid);
        const again = this.#latest.get(uid);
        if (again === undefined) return;
        this.#busy.add(uid);
        this.#queue.push(again);
        this.#pump();
      }, delay);
      this.#cancels.add(cancel);
    }
  }
}
