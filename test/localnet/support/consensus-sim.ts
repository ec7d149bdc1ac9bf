// A deterministic simulation of N consensus cores on a virtual clock: random delays, message
// loss, crashes and restarts, with a record of every decision to check agreement.
import { createHash } from 'node:crypto';
import { bytesToHex, generateKeys, type Ed25519Verify } from '../../../src/pocket/index.ts';
import { Consensus, type ConsensusMessage } from '../../../src/localnet/consensus.ts';
import { ValidatorSet } from '../../../src/localnet/validator-set.ts';
import { VoteGuard } from '../../../src/localnet/vote-guard.ts';
import type { Signer } from '../../../src/localnet/votes.ts';
import { prng } from '../../../src/harness/random.ts';

/**
 * A cheap stand-in for Ed25519 (SHA-512 of public key and message): the simulation tests the
 * protocol, and real signatures would make it CPU-bound. The node tests use real Ed25519.
 */
function fakeSignature(publicKey: Uint8Array, bytes: Uint8Array): Uint8Array {
  return createHash('sha512').update(publicKey).update(bytes).digest();
}

const fakeVerify: Ed25519Verify = (signature, bytes, publicKey) =>
  bytesToHex(signature) === bytesToHex(fakeSignature(publicKey, bytes));

interface SimKey extends Signer {
  publicKey: Uint8Array;
  publicKeyHex: string;
}

interface Event {
  at: number;
  seq: number;
  run: () => void;
}

interface SimNode {
  key: SimKey;
  /** Survives crashes, as the vote guard file does (unless the sim models amnesia). */
  guard: VoteGuard;
  consensus: Consensus<string> | undefined;
  committed: string[];
}

export interface SimOptions {
  validators: number;
  seed: number;
  /** Probability that one message to one peer is lost. */
  dropRate: number;
  maxDelayMs: number;
  timeoutMs: number;
  /** When false, a restarted node has lost its vote guard (no data dir). */
  persistentGuard: boolean;
  /**
   * When true, a crashed node keeps its committed blocks (its data dir keeps them), so every node
   * may be down at once and the chain survives.
   */
  persistentChain?: boolean;
  /**
   * Members of the set with no node: they never propose or vote (V1's late joiners). Their keys
   * come after the live validators' (ids `validators + 1`…).
   */
  silent?: number;
  /**
   * Manual pacemaker: a height starts only when `trigger(i)` reaches a node (or a peer's message
   * does), as on V1 LocalNet. Default: each node starts the next height right after a commit.
   */
  manual?: boolean;
  /** Passed to every core (see ConsensusOptions.catchUpOnAnyMessage). */
  catchUpOnAnyMessage?: boolean;
  /** Passed to every core: V1's leader never counts its own messages (the `v1` profile). */
  leaderExcluded?: boolean;
  /** Every core bumps an idle height's round each timeout (V1's manual pacemaker). */
  idleRounds?: boolean;
  /** Step timeouts stay the base (the `v1` profile); default: they grow with the round. */
  fixedTimeouts?: boolean;
}

/** A decision as the deciding node made it: the round and who signed its certificate. */
export interface DecisionRecord {
  height: number;
  round: number;
  signers: string[];
}

export class ConsensusSim {
  readonly nodes: SimNode[];
  /** height → every distinct block decided there, by anyone, ever. */
  readonly decisions = new Map<number, Set<string>>();
  /** Every decision a core made (not the blocks copied by sync). */
  readonly certificates: DecisionRecord[] = [];
  readonly #options: SimOptions;
  readonly #random: () => number;
  readonly #set: ValidatorSet;
  readonly #chainTag = 'sim-chain';
  #now = 0;
  #seq = 0;
  #queue: Event[] = [];
  #blocks = 0;

  constructor(options: SimOptions) {
    this.#options = options;
    this.#random = prng(options.seed);
    const all = [
      ...generateKeys({
        count: options.validators + (options.silent ?? 0),
        seed: 'consensus-sim',
      }).values(),
    ].map((key): SimKey => ({
      address: key.address,
      publicKey: key.publicKey,
      publicKeyHex: key.publicKeyHex,
      sign: (bytes) => fakeSignature(key.publicKey, bytes),
    }));
    const keys = all.slice(0, options.validators);
    this.#set = new ValidatorSet(
      all.map((key) => ({
        address: key.address,
        publicKey: key.publicKey,
        publicKeyHex: key.publicKeyHex,
        serviceUrl: key.address,
      })),
    );
    this.nodes = keys.map((key) => ({
      key,
      guard: new VoteGuard({ chain: this.#chainTag }),
      consensus: undefined,
      committed: [],
    }));
    for (const node of this.nodes) this.#boot(node);
  }

  get now(): number {
    return this.#now;
  }

  /** The set every node uses (live and silent members). */
  get set(): ValidatorSet {
    return this.#set;
  }

  /** A TriggerView reaching node `index` now: V1's debug message, applied by that node alone. */
  trigger(index: number): void {
    this.nodes[index]?.consensus?.nextView();
  }

  /** Heights committed by the most advanced live node. */
  maxCommitted(): number {
    return Math.max(...this.nodes.map((n) => n.committed.length));
  }

  isUp(index: number): boolean {
    return this.nodes[index]?.consensus !== undefined;
  }

  crash(index: number): void {
    const node = this.nodes[index]!;
    node.consensus?.stop();
    node.consensus = undefined;
    if (this.#options.persistentChain !== true) node.committed = [];
    if (!this.#options.persistentGuard) node.guard = new VoteGuard({ chain: this.#chainTag });
  }

  restart(index: number): void {
    const node = this.nodes[index]!;
    if (node.consensus === undefined) this.#boot(node);
  }

  /** Highest height every live node has committed. */
  minCommitted(): number {
    const live = this.nodes.filter((n) => n.consensus !== undefined);
    return Math.min(...live.map((n) => n.committed.length));
  }

  /** Heights where two different blocks were decided. */
  conflicts(): number[] {
    return [...this.decisions].filter(([, blocks]) => blocks.size > 1).map(([h]) => h);
  }

  /** Runs events until virtual time `until`. */
  runUntil(until: number): void {
    for (;;) {
      const next = this.#queue[0];
      if (next === undefined || next.at > until) break;
      this.#pop();
      this.#now = next.at;
      next.run();
    }
    this.#now = until;
  }

  #schedule(delay: number, run: () => void): { cancelled: boolean } {
    const handle = { cancelled: false };
    this.#push({
      at: this.#now + delay,
      seq: this.#seq++,
      run: () => {
        if (!handle.cancelled) run();
      },
    });
    return handle;
  }

  // A binary min-heap on (at, seq): events run in time order, ties in scheduling order.
  #push(event: Event): void {
    const q = this.#queue;
    q.push(event);
    for (let i = q.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!before(q[i]!, q[parent]!)) break;
      [q[i], q[parent]] = [q[parent]!, q[i]!];
      i = parent;
    }
  }

  #pop(): void {
    const q = this.#queue;
    const last = q.pop();
    if (last === undefined || q.length === 0) return;
    q[0] = last;
    for (let i = 0; ;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < q.length && before(q[left]!, q[smallest]!)) smallest = left;
      if (right < q.length && before(q[right]!, q[smallest]!)) smallest = right;
      if (smallest === i) return;
      [q[i], q[smallest]] = [q[smallest]!, q[i]!];
      i = smallest;
    }
  }

  #boot(node: SimNode): void {
    const consensus: Consensus<string> = new Consensus<string>({
      host: {
        validators: () => this.#set,
        buildBlock: (height) => {
          const block = `${height}:${node.key.address.slice(0, 6)}:${this.#blocks++}`;
          return { block, hash: hashOf(block) };
        },
        hashOf,
        isValid: () => true,
        commit: (decision) => {
          if (node.consensus !== consensus) return;
          this.#record(decision.height, decision.block);
          this.certificates.push({
            height: decision.height,
            round: decision.round,
            signers: decision.precommits.map((vote) => vote.validator),
          });
          node.committed.push(decision.block);
          if (this.#options.manual !== true)
            this.#schedule(5, () => consensus.advanceTo(node.committed.length + 1, 0));
        },
        broadcast: (message) => this.#broadcast(node, message),
        requestSync: () => this.#schedule(10, () => this.#sync(node, consensus)),
        requestRoundState: () => this.#schedule(10, () => this.#pullRoundState(node, consensus)),
        onLateVote: () => undefined,
        restoreMessage: (value) => structuredClone(value) as ConsensusMessage<string>,
        restoreLock: (lock) =>
          typeof lock.block === 'string'
            ? { block: lock.block, polVotes: lock.polVotes ?? [] }
            : undefined,
      },
      chainTag: this.#chainTag,
      signer: node.key,
      guard: node.guard,
      verify: fakeVerify,
      timers: {
        setTimeout: (callback, ms) => this.#schedule(ms, callback),
        clearTimeout: (handle) => {
          (handle as { cancelled: boolean }).cancelled = true;
        },
      },
      timeoutMs: (round) =>
        this.#options.fixedTimeouts === true
          ? this.#options.timeoutMs
          : this.#options.timeoutMs * Math.min(1 + round / 2, 4),
      log: { debug: () => undefined, warn: () => undefined },
      height: node.committed.length + 1,
      catchUpOnAnyMessage: this.#options.catchUpOnAnyMessage,
      leaderExcluded: this.#options.leaderExcluded,
      idleRounds: this.#options.idleRounds === true ? () => true : undefined,
    });
    node.consensus = consensus;
    this.#schedule(1, () => {
      this.#sync(node, consensus);
      this.#pullRoundState(node, consensus);
      if (this.#options.manual !== true) consensus.advanceTo(node.committed.length + 1, 0);
    });
  }

  #record(height: number, block: string): void {
    const blocks = this.decisions.get(height) ?? new Set<string>();
    blocks.add(block);
    this.decisions.set(height, blocks);
  }

  #broadcast(from: SimNode, message: ConsensusMessage<string>): void {
    if (from.consensus === undefined) return;
    for (const to of this.nodes) {
      if (to === from || this.#random() < this.#options.dropRate) continue;
      this.#schedule(1 + Math.floor(this.#random() * this.#options.maxDelayMs), () =>
        to.consensus?.receive(frozen(message)),
      );
    }
  }

  /** Block sync: copy committed blocks from the most advanced live peer. */
  #sync(node: SimNode, consensus: Consensus<string>): void {
    if (node.consensus !== consensus) return;
    const best = this.nodes
      .filter((n) => n.consensus !== undefined)
      .reduce((a, b) => (b.committed.length > a.committed.length ? b : a));
    if (best.committed.length <= node.committed.length) return;
    for (let h = node.committed.length; h < best.committed.length; h++) {
      const block = best.committed[h]!;
      this.#record(h + 1, block);
      node.committed.push(block);
    }
    consensus.syncedTo(node.committed.length);
  }

  #pullRoundState(node: SimNode, consensus: Consensus<string>): void {
    for (const peer of this.nodes) {
      if (peer === node || peer.consensus === undefined) continue;
      for (const message of peer.consensus.roundState().messages) {
        if (node.consensus === consensus) consensus.receive(frozen(message));
      }
    }
  }
}

/**
 * A message as a peer receives it: deep-frozen and shared, not copied. A real node gets its own
 * parsed copy; here one object reaches every peer, so freezing it makes any write a core might
 * make to a received message throw (strict mode) instead of leaking into another node. Copying
 * each delivery (structuredClone) cost 43 % of the simulation's CPU.
 */
function frozen<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const child of Object.values(value)) frozen(child);
  return Object.freeze(value);
}

function before(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

function hashOf(block: string): string {
  return createHash('sha256').update(block).digest('hex');
}
