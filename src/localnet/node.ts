// One localnet node: its chain, mempool and consensus, admission of transactions, gossip, block
// sync, the pacemaker and the debug actions. The RPC and p2p servers are thin views of this. The
// fidelity profile decides where V1's code and V1's intent differ (docs/localnet-node.md).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  admitTransaction,
  bytesToHex,
  hexToBytes,
  transactionHash,
  V1Error,
  v1Errors,
  verifyEd25519Native,
  type AdmittedTransaction,
  type ValidatorKey,
} from '../pocket/index.ts';
import { blockHash, type Block, type CommittedBlock, type QuorumCert } from './block.ts';
import { BlockSync } from './block-sync.ts';
import { Chain } from './chain.ts';
import { Consensus, type ConsensusMessage, type Decision, type Step } from './consensus.ts';
import { buildBlock, executeBlock, type Execution, type ResolveTx } from './execute.ts';
import { fidelityProfile, type Fidelity, type FidelityProfile } from './fidelity.ts';
import type { Genesis } from './genesis.ts';
import { Mempool, type MempoolLimits } from './mempool.ts';
import { NodeStorage } from './node-storage.ts';
import { PacemakerMode, Pacemaker } from './pacemaker.ts';
import { PeerClient } from './p2p-client.ts';
import { Peers } from './peers.ts';
import type { ValidatorSet } from './validator-set.ts';
import { VoteGuard } from './vote-guard.ts';
import type { Vote } from './votes.ts';
import { parseBlock, parseConsensusMessage, parseVote } from './wire.ts';

export interface LocalnetNodeOptions {
  genesis: Genesis;
  /** The validator key; a full node has none. */
  key?: ValidatorKey | undefined;
  pacemaker?: PacemakerMode;
  /** Auto pacemaker: time from one commit to the next height's start. */
  blockIntervalMs?: number;
  /** Base timeout of a consensus step (grows with the round); default 3 block intervals. */
  roundTimeoutMs?: number;
  /** Extra peers, `host:port` of their p2p servers. */
  peers?: readonly string[];
  /**
   * Where the vote guard and the committed blocks are kept across restarts (a StatefulSet volume
   * per ordinal); in memory when omitted. Throws DataDirError when the folder is unusable.
   */
  dataDir?: string | undefined;
  /** How often to compare heights with peers while the chain moves (default 500 ms). */
  syncIntervalMs?: number;
  /**
   * How often at most while polls find nobody ahead and no consensus message arrives (default
   * 4 s; block-sync.ts). A node that is not in the active set polls every `syncIntervalMs`.
   */
  syncIdleIntervalMs?: number;
  /** `intended` (default): V1's intent; `v1`: V1's code as it runs. */
  fidelity?: Fidelity | undefined;
  /** Mempool bounds (default V1 LocalNet's: 9000 transactions, 1 GiB). */
  mempoolLimits?: MempoolLimits | undefined;
  /**
   * The debug actions (`/v1/debug/*` on the RPC, forwarded ones on the p2p port, and — in the
   * intended profile — V1's debug messages): off unless asked for. They reset, trigger and
   * re-mode a chain with no signature and no token (docs/adr/0023-debug-routes-off-unless-asked.md).
   * The v1 profile takes V1's debug messages either way, as V1 does.
   */
  debugRoutes?: boolean | undefined;
  logger: Logger;
}

/** Debug actions a node forwards to its peers (V1 sends these over P2P as DebugMessages). */
export type DebugAction =
  | { action: 'trigger_view'; height: number; round: number }
  | { action: 'set_pacemaker'; mode: PacemakerMode }
  | { action: 'reset_to_genesis' };

/**
 * V1's `DebugMessageAction`s (shared/messaging/proto/debug_message.proto) that a client sends to
 * each validator (`p1 Debug …`); each receiver applies it to itself only, as V1's
 * `consensus/debugging.go` does.
 */
export const V1DebugAction = {
  resetToGenesis: 'DEBUG_CONSENSUS_RESET_TO_GENESIS',
  printNodeState: 'DEBUG_CONSENSUS_PRINT_NODE_STATE',
  triggerNextView: 'DEBUG_CONSENSUS_TRIGGER_NEXT_VIEW',
  togglePacemakerMode: 'DEBUG_CONSENSUS_TOGGLE_PACE_MAKER_MODE',
} as const;
export type V1DebugAction = (typeof V1DebugAction)[keyof typeof V1DebugAction];

/** V1's step numbers for `/v1/consensus/state`. */
const STEP_NUMBERS: Record<Step, number> = { idle: 1, propose: 2, prevote: 3, precommit: 4 };

const ROUND_STATE_INTERVAL_MS = 200;
/** How long a TriggerView waits for a sync pass before it picks its target. */
const TRIGGER_SYNC_MS = 2000;

export class LocalnetNode {
  readonly nodeId = randomUUID();
  readonly genesis: Genesis;
  readonly #options: LocalnetNodeOptions;
  readonly #log: Logger;
  readonly #key: ValidatorKey | undefined;
  readonly #client: PeerClient;
  readonly #peers: Peers;
  readonly #mempool: Mempool;
  readonly profile: FidelityProfile;
  /** Whether this node syncs and takes part in consensus (v1: genesis validators only). */
  readonly #follows: boolean;
  readonly #pacemaker: Pacemaker;
  readonly #sync: BlockSync;
  readonly #storage: NodeStorage | undefined;
  #chain: Chain;
  #guard: VoteGuard;
  #consensus: Consensus<Block>;
  #executions = new Map<string, Execution>();
  #waiters = new Set<{ height: number; resolve: (ok: boolean) => void }>();
  #gossipQueue: string[] = [];
  #lastRoundStatePull = 0;
  #stopped = false;

  constructor(options: LocalnetNodeOptions) {
    this.#options = options;
    this.genesis = options.genesis;
    this.#key = options.key;
    this.#log = options.logger;
    this.#client = new PeerClient({ timeoutMs: 3000, nodeId: this.nodeId });
    this.profile = fidelityProfile(options.fidelity);
    this.#follows = this.profile.follows(options.key?.address, options.genesis);
    this.#mempool = new Mempool(options.mempoolLimits);
    this.#chain = new Chain(options.genesis, verifyEd25519Native, this.profile);
    if (options.dataDir !== undefined) {
      this.#storage = NodeStorage.open(options.dataDir, this.#chain, this.#log);
      const restored = this.#storage.restore(this.#chain, this.#resolve);
      if (restored.height > 0) this.#log.info(restored, 'resumed from the data dir');
    }
    this.#guard = this.#newGuard();
    this.#consensus = this.#newConsensus();
    this.#peers = new Peers({
      configured: options.peers ?? [],
      genesis: () => this.genesis.validators.map((v) => v.service_url ?? ''),
      current: () =>
        this.#chain.validatorSet(this.#chain.height + 1).members.map((m) => m.serviceUrl),
      own: () =>
        this.#key === undefined
          ? undefined
          : this.#chain.state.at().actor(4, this.#key.address)?.serviceUrl,
    });
    this.#pacemaker = new Pacemaker({
      mode: options.pacemaker ?? PacemakerMode.manual,
      // V1's auto pacemaker starts the next height at once (fidelity.ts, rounds.blockInterval).
      intervalMs: this.profile.rounds.blockInterval ? (options.blockIntervalMs ?? 1000) : 0,
      startHeight: (height) => this.#consensus.advanceTo(height, 0),
      currentHeight: () => this.#consensus.height,
    });
    this.#sync = new BlockSync({
      client: this.#client,
      nodeId: this.nodeId,
      genesisHash: () => this.#chain.genesisHash,
      peers: () => this.#peers.list(),
      height: () => this.#chain.height,
      apply: (block) => this.#applySynced(block),
      markSelf: (peer) => this.#peers.markSelf(peer),
      warn: (details, message) => this.#log.warn(details, message),
      intervalMs: options.syncIntervalMs ?? 500,
      idleIntervalMs: options.syncIdleIntervalMs ?? Math.max(4_000, options.syncIntervalMs ?? 0),
      // Validators send their consensus messages to the active set: a full node (the chain RPC)
      // or a validator not in the set yet learns of a block by polling only, so it keeps the fast
      // poll. Slowed down, the chain RPC saw blocks up to 4 s late.
      mayIdle: () => this.#isActiveMember(),
    });
  }

  /** Starts syncing with peers and the pacemaker (unless the profile says it never follows). */
  start(): void {
    if (!this.#follows) {
      this.#log.info(
        { fidelity: this.profile.name },
        'not a genesis validator: like V1, this node never syncs and never votes',
      );
      return;
    }
    this.#sync.start();
    this.#pullRoundState(true);
    this.#pacemaker.ready();
  }

  /** True when this node's validator signs the next height (it hears of it by consensus). */
  #isActiveMember(): boolean {
    const address = this.#key?.address;
    if (address === undefined) return false;
    try {
      return this.#chain.validatorSet(this.#chain.height + 1).has(address);
    } catch {
      return false;
    }
  }

  /** False for a node that stays at its height (v1: not a genesis validator). */
  get follows(): boolean {
    return this.#follows;
  }

  stop(): void {
    this.#stopped = true;
    this.#sync.stop();
    this.#pacemaker.stop();
    this.#consensus.stop();
    this.#client.close();
    for (const waiter of this.#waiters) waiter.resolve(false);
    this.#waiters.clear();
    this.#storage?.close();
  }

  get chain(): Chain {
    return this.#chain;
  }

  get mempool(): Mempool {
    return this.#mempool;
  }

  get address(): string | undefined {
    return this.#key?.address;
  }

  /** True when this node's key is in the set that signs the next block. */
  inActiveSet(): boolean {
    const address = this.#key?.address;
    if (address === undefined) return false;
    return this.#chain
      .validatorSet(this.#chain.height + 1)
      .members.some((m) => m.address === address);
  }

  /** Whether this node takes debug actions from its RPC and its peers (`debugRoutes`). */
  get debugRoutes(): boolean {
    return this.#options.debugRoutes === true;
  }

  get pacemakerMode(): PacemakerMode {
    return this.#pacemaker.mode;
  }

  /**
   * `/v1/consensus/state`: the height being decided (committed + 1), round and step; V1 says 0
   * until its first height starts.
   */
  consensusState(): { height: number; round: number; step: number } {
    const genesis = this.profile.rpc.heightZeroAtGenesis && this.#consensus.atGenesis;
    return {
      height: genesis ? 0 : this.#consensus.height,
      round: this.#consensus.round,
      step: STEP_NUMBERS[this.#consensus.step],
    };
  }

  describe(): object {
    return {
      nodeId: this.nodeId,
      address: this.address ?? null,
      committedHeight: this.#chain.height,
      pacemaker: this.#pacemaker.mode,
      mempool: this.#mempool.size,
      peers: this.#peers.list(),
      syncPollMs: this.#sync.pollMs,
      consensus: this.#consensus.describe(),
    };
  }

  // --- transactions ---------------------------------------------------------------------

  /**
   * V1 stage A for a broadcast: duplicate in the mempool (35) or committed (95), then decode,
   * basic checks and signature. Throws the `V1Error`; on success the tx is pooled and gossiped.
   */
  submit(bytes: Uint8Array): AdmittedTransaction {
    const tx = this.#admit(bytes);
    this.#gossip(bytesToHex(bytes));
    return tx;
  }

  /** Transactions gossiped by a peer: admitted the same way, errors ignored, not re-gossiped. */
  receiveTxs(raws: readonly string[]): void {
    for (const raw of raws) {
      try {
        this.#admit(hexToBytes(raw));
      } catch {
        // Duplicates are the normal case for gossip; anything else a peer sends is its problem.
      }
    }
  }

  #admit(bytes: Uint8Array): AdmittedTransaction {
    const limit = this.profile.maxTxBytes(this.genesis);
    if (limit !== undefined && bytes.length > limit) {
      throw v1Errors.payloadTooBig(bytes.length, limit);
    }
    const hash = transactionHash(bytes);
    if (this.#mempool.has(hash)) throw v1Errors.duplicateTransaction();
    if (this.#chain.transaction(hash) !== undefined) throw v1Errors.transactionAlreadyCommitted();
    const tx = admitTransaction(bytes, {
      verify: verifyEd25519Native,
      canonical: this.profile.name !== 'v1',
    });
    const evicted = this.#mempool.add({ raw: bytesToHex(bytes), tx });
    if (evicted.length > 0) {
      this.#log.warn({ evicted: evicted.length }, 'mempool full: dropped the oldest transactions');
    }
    return tx;
  }

  /** Batches transactions admitted in one turn of the event loop into one message per peer. */
  #gossip(raw: string): void {
    this.#gossipQueue.push(raw);
    if (this.#gossipQueue.length > 1) return;
    setImmediate(() => {
      const txs = this.#gossipQueue;
      this.#gossipQueue = [];
      for (const peer of this.#peers.list()) this.#client.send(peer, '/p2p/v1/txs', { txs });
    });
  }

  // --- pacemaker and debug actions --------------------------------------------------------

  /**
   * TriggerView from the RPC: starts the next height (or, if it is stuck, its next round) here
   * and on every peer. A sync pass first (bounded) makes a lagging node target the chain's next
   * height rather than its own, which up-to-date peers would ignore.
   *
   * `forHeight`: the height the caller wants committed. When it is committed here already, nothing
   * is triggered (the target is that height): a caller that sends a trigger again because the
   * first seemed lost must not start a second block when the first one was only slow.
   */
  async triggerView(forHeight?: number): Promise<{ height: number; round: number }> {
    await Promise.race([
      this.#sync.request(),
      new Promise((resolve) => setTimeout(resolve, TRIGGER_SYNC_MS).unref()),
    ]);
    if (forHeight !== undefined && this.#chain.height >= forHeight)
      return { height: forHeight, round: 0 };
    // A block is coming: poll at the fast period for it.
    this.#sync.activity();
    const target = this.#consensus.nextView();
    this.#forward({ action: 'trigger_view', ...target });
    return target;
  }

  setPacemaker(mode: PacemakerMode): void {
    this.#pacemaker.setMode(mode);
    this.#forward({ action: 'set_pacemaker', mode });
  }

  resetToGenesis(): void {
    this.#forward({ action: 'reset_to_genesis' });
    this.#reset();
  }

  /**
   * A V1 debug message sent to this node (`p1 Debug …` sends one to every validator): applied
   * here only, as V1's `consensus/debugging.go:27-84` does. A node that does not follow ignores
   * the consensus actions.
   */
  receiveDebugMessage(action: V1DebugAction): void {
    this.#log.info({ action }, 'debug message');
    if (!this.#follows) return;
    switch (action) {
      case V1DebugAction.triggerNextView:
        this.#consensus.nextView();
        return;
      case V1DebugAction.togglePacemakerMode:
        this.#pacemaker.setMode(
          this.#pacemaker.mode === PacemakerMode.manual ? PacemakerMode.auto : PacemakerMode.manual,
        );
        return;
      case V1DebugAction.resetToGenesis:
        this.#reset();
        return;
      case V1DebugAction.printNodeState:
        this.#log.info(this.consensusState(), 'node state');
        return;
    }
  }

  /** A debug action forwarded by a peer (applied here, not forwarded again). */
  receiveDebug(action: DebugAction): void {
    if (!this.#follows) return;
    switch (action.action) {
      case 'trigger_view':
        this.#consensus.advanceTo(action.height, action.round);
        return;
      case 'set_pacemaker':
        this.#pacemaker.setMode(action.mode);
        return;
      case 'reset_to_genesis':
        this.#reset();
        return;
    }
  }

  #forward(action: DebugAction): void {
    for (const peer of this.#peers.list()) this.#client.send(peer, '/p2p/v1/debug', action);
  }

  #reset(): void {
    this.#log.info({ height: this.#chain.height }, 'reset to genesis');
    this.#consensus.stop();
    this.#mempool.clear();
    this.#executions.clear();
    this.#guard.clear();
    this.#storage?.clear();
    this.#chain = new Chain(this.genesis, verifyEd25519Native, this.profile);
    this.#guard = this.#newGuard();
    this.#consensus = this.#newConsensus();
    this.#pacemaker.ready();
  }

  /** Resolves true once block `height` is committed here, false after `timeoutMs`. */
  waitForHeight(height: number, timeoutMs: number): Promise<boolean> {
    if (this.#chain.height >= height) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        height,
        resolve: (ok: boolean) => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  // --- p2p --------------------------------------------------------------------------------

  receiveConsensus(body: unknown): boolean {
    const message = parseConsensusMessage(body);
    if (message === undefined) return false;
    if (this.#follows) {
      this.#sync.activity();
      this.#consensus.receive(message);
    }
    return true;
  }

  status(): object {
    return {
      nodeId: this.nodeId,
      address: this.address ?? null,
      genesisHash: this.#chain.genesisHash,
      height: this.#chain.height,
      round: this.#consensus.round,
    };
  }

  /** Committed blocks `from`…`to` (at most 50) for a syncing peer. */
  blocks(from: number, to: number): { block: Block; qc: QuorumCert }[] {
    const out: { block: Block; qc: QuorumCert }[] = [];
    for (let h = Math.max(1, from); h <= Math.min(to, from + 49, this.#chain.height); h++) {
      const committed = this.#chain.block(h);
      if (committed !== undefined) out.push({ block: committed.block, qc: committed.qc });
    }
    return out;
  }

  roundState(): { height: number; round: number; messages: ConsensusMessage<Block>[] } {
    return this.#consensus.roundState();
  }

  // --- consensus host ---------------------------------------------------------------------

  #newGuard(): VoteGuard {
    return new VoteGuard({
      chain: this.#chain.genesisHash,
      file: this.#storage?.voteGuardFile,
    });
  }

  #newConsensus(): Consensus<Block> {
    const interval = this.#options.blockIntervalMs ?? 1000;
    const base = this.#options.roundTimeoutMs ?? Math.max(3 * interval, 1000);
    return new Consensus<Block>({
      host: {
        validators: (height) => this.#validators(height),
        buildBlock: () => this.#buildBlock(),
        hashOf: (block) => blockHash(block.header),
        isValid: (height, block, hash) => this.#isValid(height, block, hash),
        commit: (decision) => this.#commitDecision(decision),
        broadcast: (message) => {
          for (const peer of this.#peers.list()) {
            this.#client.send(peer, '/p2p/v1/consensus', message);
          }
        },
        requestSync: () => void this.#sync.request(),
        requestRoundState: () => this.#pullRoundState(false),
        restoreMessage: (value) => parseConsensusMessage(value),
        restoreLock: (lock) => {
          const block = parseBlock(lock.block);
          const polVotes = (Array.isArray(lock.polVotes) ? lock.polVotes : []).map(parseVote);
          if (block === undefined || polVotes.includes(undefined)) return undefined;
          return { block, polVotes: polVotes as Vote[] };
        },
        onLateVote: (vote: Vote) => {
          if (this.#chain.addLateSignature(vote))
            this.#storage?.signatureAdded(vote.height, vote.validator, vote.signature);
        },
      },
      chainTag: this.#chain.genesisHash,
      signer: this.#follows ? this.#key : undefined,
      guard: this.#guard,
      verify: verifyEd25519Native,
      timers: { setTimeout, clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout) },
      timeoutMs: (round) =>
        this.profile.rounds.timeoutGrows ? Math.round(base * Math.min(1 + round / 2, 4)) : base,
      log: this.#log,
      height: this.#chain.height + 1,
      catchUpOnAnyMessage: this.profile.rounds.catchUpOnAnyMessage,
      leaderExcluded: this.profile.rounds.leaderExcluded,
      idleRounds: this.profile.rounds.idleRounds
        ? () => this.#pacemaker.mode === PacemakerMode.manual
        : undefined,
    });
  }

  #validators(height: number): ValidatorSet {
    return this.#chain.validatorSet(height);
  }

  #buildBlock(): { block: Block; hash: string } {
    const proposer = this.#key?.address;
    if (proposer === undefined) throw new Error('a full node cannot propose');
    const execution = buildBlock(this.#chain.executionBase(), {
      candidates: this.#mempool.list(),
      proposer,
      time: Date.now(),
      maxBytes: this.profile.blockTxBytes(this.genesis),
    });
    this.#executions.set(execution.hash, execution);
    return { block: execution.block, hash: execution.hash };
  }

  #isValid(height: number, block: Block, hash: string): boolean {
    if (height !== this.#chain.height + 1) return false;
    if (this.#executions.has(hash)) return true;
    const result = executeBlock(this.#chain.executionBase(), block, this.#resolve);
    if (typeof result === 'string') {
      this.#log.warn({ height, hash, problem: result }, 'rejected a proposed block');
      return false;
    }
    if (result.hash !== hash) return false;
    this.#executions.set(hash, result);
    return true;
  }

  /** Stage A for a transaction inside a block (skipped for one already admitted here). */
  readonly #resolve: ResolveTx = (raw) => {
    let bytes: Uint8Array;
    try {
      bytes = hexToBytes(raw);
    } catch {
      return 'not hex';
    }
    const hash = transactionHash(bytes);
    if (this.#chain.transaction(hash) !== undefined) return 'already committed';
    const pooled = this.#mempool.get(hash);
    if (pooled !== undefined) return pooled.tx;
    try {
      return admitTransaction(bytes, { verify: verifyEd25519Native });
    } catch (error: unknown) {
      return error instanceof V1Error ? error.message : 'not admissible';
    }
  };

  #commitDecision(decision: Decision<Block>): void {
    const execution = this.#executions.get(decision.hash);
    if (execution === undefined)
      throw new Error(`decided block ${decision.hash} was never executed`);
    const qc: QuorumCert = {
      height: decision.height,
      round: decision.round,
      blockHash: decision.hash,
      signatures: decision.precommits
        .map((v) => ({ address: v.validator, signature: v.signature }))
        .sort((a, b) => (a.address < b.address ? -1 : 1)),
    };
    this.#chain.commit(execution, qc);
    this.#afterCommit(execution, qc);
  }

  #applySynced(candidate: Omit<CommittedBlock, 'hash'>): string | undefined {
    const { block, qc } = candidate;
    const height = this.#chain.height + 1;
    if (block.header.height !== height || qc.height !== height) return 'not the next height';
    const hash = blockHash(block.header);
    const problem = this.#chain.checkCertificate(qc, hash);
    if (problem !== undefined) return problem;
    const execution = executeBlock(this.#chain.executionBase(), block, this.#resolve);
    if (typeof execution === 'string') return execution;
    if (execution.hash !== hash) return 'block hash mismatch';
    const cert = { ...qc, signatures: [...qc.signatures] };
    this.#chain.commit(execution, cert);
    this.#afterCommit(execution, cert);
    this.#consensus.syncedTo(this.#chain.height);
    return undefined;
  }

  #afterCommit(execution: Execution, qc: QuorumCert): void {
    const { header } = execution.block;
    const committed = this.#chain.block(header.height);
    if (committed !== undefined) this.#storage?.blockCommitted(committed);
    this.#mempool.remove([...execution.txs.map((t) => t.tx.hash), ...execution.block.dropped]);
    this.#executions.clear();
    this.#log.info(
      {
        height: header.height,
        hash: execution.hash,
        round: qc.round,
        proposer: header.proposer,
        txs: execution.txs.length,
        dropped: execution.block.dropped.length,
        signers: qc.signatures.length,
        validators: this.#chain.validatorSet(header.height).size,
      },
      'committed block',
    );
    for (const waiter of [...this.#waiters]) {
      if (waiter.height <= header.height) waiter.resolve(true);
    }
    this.#pacemaker.committed(header.height);
  }

  /** Asks every peer for the proposals and votes of our height (throttled unless forced). */
  #pullRoundState(force: boolean): void {
    const now = Date.now();
    if (this.#stopped || (!force && now - this.#lastRoundStatePull < ROUND_STATE_INTERVAL_MS)) {
      return;
    }
    this.#lastRoundStatePull = now;
    for (const peer of this.#peers.list()) {
      this.#client
        .get(peer, '/p2p/v1/round-state')
        .then((body) => {
          const messages = (body as { messages?: unknown } | undefined)?.messages;
          if (!Array.isArray(messages)) return;
          for (const message of messages) this.receiveConsensus(message);
        })
        .catch(() => undefined);
    }
  }
}
