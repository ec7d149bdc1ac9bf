// The consensus core: Tendermint-style BFT (propose, prevote, precommit with locks) for one
// node, over any block type. Pure logic: messages and timeouts in, signed messages and
// decisions out through the host; time comes from injected timers. Protocol: docs/localnet-node.md.
import type { Ed25519Verify } from '../pocket/index.ts';
import type { ValidatorSet } from './validator-set.ts';
import { SignStep, type Lock, type VoteGuard } from './vote-guard.ts';
import {
  newRoundSignBytes,
  proposalSignBytes,
  signVote,
  verifyHex,
  voteSignBytes,
  VoteKind,
  type SignedNewRound,
  type SignedProposal,
  type Signer,
  type Vote,
} from './votes.ts';
import { bytesToHex } from '../pocket/index.ts';

/** A proposal with its block and, when re-proposing a locked block, the prevotes that justify it. */
export interface ProposalMessage<B> {
  type: 'proposal';
  proposal: SignedProposal;
  block: B;
  polVotes: Vote[];
}

export interface VoteMessage {
  type: 'vote';
  vote: Vote;
}

/** V1's NewRound: the sender is in this round (sent by the `v1` profile only). */
export interface NewRoundMessage {
  type: 'newround';
  newRound: SignedNewRound;
}

export type ConsensusMessage<B> = ProposalMessage<B> | VoteMessage | NewRoundMessage;

/** Everything consensus needs from the node around it. */
export interface ConsensusHost<B> {
  /** The active set that signs `height`. */
  validators(height: number): ValidatorSet;
  /** A new block for `height` from the mempool, with its hash. */
  buildBlock(height: number): { block: B; hash: string };
  /** The hash of a block body, recomputed (never taken from a message). */
  hashOf(block: B): string;
  /** Full validity of a block for `height` (the host executes it and caches the result). */
  isValid(height: number, block: B, hash: string): boolean;
  /** Applies a decided block: the precommits are its certificate. Called once per height. */
  commit(decision: Decision<B>): void;
  broadcast(message: ConsensusMessage<B>): void;
  /** Peers are ahead of us (or decided a block we lack): fetch committed blocks. */
  requestSync(): void;
  /** We may have missed messages of our height: pull proposals and votes from peers. */
  requestRoundState(): void;
  /** A precommit for the block committed just before our height (joins its certificate). */
  onLateVote(vote: Vote): void;
  /**
   * The block and prevotes a lock kept in the vote guard carries, checked for shape (they were
   * read from disk); undefined when there are none or they do not parse. Optional: without it a
   * restarted validator keeps its lock but cannot re-propose the locked block.
   */
  restoreLock?(lock: Lock): { block: B; polVotes: Vote[] } | undefined;
  /** A message this validator signed, as kept in the vote guard, checked for shape. Optional. */
  restoreMessage?(value: unknown): ConsensusMessage<B> | undefined;
}

export interface Decision<B> {
  height: number;
  round: number;
  block: B;
  hash: string;
  precommits: Vote[];
}

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface ConsensusLog {
  debug(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface ConsensusOptions<B> {
  host: ConsensusHost<B>;
  /** Bound into every signature: the genesis hash. */
  chainTag: string;
  /** This node's key; full nodes have none and only follow. */
  signer: Signer | undefined;
  guard: VoteGuard;
  verify: Ed25519Verify;
  timers: Timers;
  /** Timeout of each step in `round` (grows with the round so slow networks catch up). */
  timeoutMs: (round: number) => number;
  log: ConsensusLog;
  /** The first height to decide (last committed + 1). */
  height: number;
  /**
   * How a node that sees a higher round of its height catches up. Default (Tendermint): once
   * f + 1 members have spoken in it, so one faulty member cannot drag the set up. True (V1's
   * pacemaker, `consensus/pacemaker/module.go:146-167`): on any valid message of that round from
   * a member. The v1 profile needs it: each validator applies its own TriggerView, so one can be
   * a round ahead of the rest, and with every live voter needed in a round (a silent member in
   * the quorum) neither side could reach a quorum or a timeout without it (docs/localnet-node.md).
   */
  catchUpOnAnyMessage?: boolean | undefined;
  /**
   * V1's leader (the `v1` profile): the proposer of a round never counts its own messages. V1's
   * leader sends its votes (`sendToLeader`, consensus/hotstuff_leader.go:96-102, 147-153,
   * 198-204) and its NewRound (`broadcastToValidators`, helpers.go:179-200) through
   * `P2PModule.Send`, and RainTree's `sendInternal` returns without sending to its own address
   * (p2p/raintree/router.go:172-179); the threshold stays `num > 2/3 × all rows`
   * (helpers.go:119-134). So here the proposer of a round signs no vote in it (no certificate
   * holds its signature), a vote in its name is not counted, every member announces each round
   * it enters (a signed NewRound), and the proposer proposes only once more than 2/3 of the set
   * besides itself announced the round. A height then commits only while the other live voters
   * are more than 2/3 of all rows.
   */
  leaderExcluded?: boolean | undefined;
  /**
   * V1's manual pacemaker (`v1` profile, manual mode): while a height waits for its trigger, its
   * round goes up by one every step timeout (the timer keeps running and `InterruptRound` bumps
   * the round without sending anything: consensus/pacemaker/module.go:172-224, 246-261), and a
   * trigger starts the round after it (`triggerNextView` → `InterruptRound`,
   * consensus/debugging.go:60-74) — except at genesis, where it starts round 0 of height 1
   * (`NewHeight`). Asked each time a height waits (the mode can change).
   */
  idleRounds?: (() => boolean) | undefined;
}

/** Step of the current round. `idle`: the height is not started yet (manual pacemaker). */
export const Step = {
  idle: 'idle',
  propose: 'propose',
  prevote: 'prevote',
  precommit: 'precommit',
} as const;
export type Step = (typeof Step)[keyof typeof Step];

interface StoredProposal<B> {
  proposal: SignedProposal;
  block: B;
  polVotes: Vote[];
}

type VotesByRound = Map<number, Map<string, Vote>>;

/** Round state of one height. Fresh for every height. */
interface HeightState<B> {
  height: number;
  set: ValidatorSet;
  round: number;
  step: Step;
  lockedRound: number;
  lockedHash: string | null;
  validRound: number;
  validHash: string | null;
  proposals: Map<number, StoredProposal<B>>;
  bodies: Map<string, B>;
  validity: Map<string, boolean>;
  prevotes: VotesByRound;
  precommits: VotesByRound;
  /** NewRound announcements by round and sender (leaderExcluded only). */
  newRounds: Map<number, Map<string, SignedNewRound>>;
  /** A round was started at this height (by a trigger, a timeout or a message). */
  started: boolean;
  prevoteTimeoutFor: Set<number>;
  precommitTimeoutFor: Set<number>;
  polkaSeenFor: Set<number>;
  /** Decided blocks already reported (missing body, or `invalid:<hash>`), to ask or warn once. */
  missingBodyFor: Set<string>;
  /** Validators seen voting at the next height (they have decided this one). */
  aheadSenders: Set<string>;
  decided: boolean;
  /** Messages this process signed at this height, re-sent when a round stalls. */
  own: ConsensusMessage<B>[];
}

const FUTURE_LIMIT = 10_000;

/**
 * One node's consensus. Safety rests on three rules: a validator signs at most one message per
 * (height, round, step) (the vote guard), precommits only a block with a prevote quorum in that
 * round and then locks on it, and prevotes another block only when shown a newer prevote quorum
 * for it. A block is decided by precommits from more than 2/3 of the height's set.
 */
export class Consensus<B> {
  readonly #options: ConsensusOptions<B>;
  readonly #host: ConsensusHost<B>;
  #s: HeightState<B>;
  #future: ConsensusMessage<B>[] = [];
  /** Pacemaker target: start (height, round) once reached. */
  #target: { height: number; round: number } | undefined;
  #timers = new Set<unknown>();
  #stopped = false;

  constructor(options: ConsensusOptions<B>) {
    this.#options = options;
    this.#host = options.host;
    this.#s = this.#freshHeight(options.height);
    this.#restoreFromGuard();
    this.#scheduleIdleRound(options.height);
  }

  get height(): number {
    return this.#s.height;
  }

  get round(): number {
    return this.#s.round;
  }

  get step(): Step {
    return this.#s.step;
  }

  /**
   * No round of the first height has started: V1's consensus height is still 0 there
   * (consensus/module.go:116, 298-302) until a trigger starts height 1 (`NewHeight`).
   */
  get atGenesis(): boolean {
    return this.#s.height === 1 && !this.#s.started;
  }

  /** Pacemaker input: make sure this node is at least at (height, round) (see docs). */
  advanceTo(height: number, round: number): void {
    if (this.#stopped) return;
    if (height > this.#s.height) {
      if (
        this.#target === undefined ||
        height > this.#target.height ||
        (height === this.#target.height && round > this.#target.round)
      ) {
        this.#target = { height, round };
      }
      return;
    }
    if (height < this.#s.height || this.#s.decided) return;
    if (this.#s.step === Step.idle || round > this.#s.round) {
      this.#startRound(Math.max(round, this.#s.step === Step.idle ? 0 : this.#s.round));
      this.#evaluate();
    }
  }

  /**
   * Manual trigger: start an idle height at round 0, or move a started one to the next round.
   * With idle rounds (V1's manual pacemaker), a waiting height starts at the round after the one
   * its timer reached, except the first height at genesis (round 0).
   */
  nextView(): { height: number; round: number } {
    const s = this.#s;
    const idle = s.step === Step.idle;
    const round =
      idle && (this.#options.idleRounds?.() !== true || this.atGenesis) ? 0 : s.round + 1;
    const target = { height: s.height, round };
    this.advanceTo(target.height, target.round);
    return target;
  }

  /** A message from a peer (or a peer's replay of round state). */
  receive(message: ConsensusMessage<B>): void {
    if (this.#stopped) return;
    const height = heightOf(message);
    if (height === this.#s.height) {
      if (this.#accept(message)) this.#evaluate();
      return;
    }
    if (height === this.#s.height + 1) {
      if (this.#future.length < FUTURE_LIMIT) this.#future.push(message);
      this.#noteAhead(message);
      return;
    }
    if (height > this.#s.height + 1) {
      this.#host.requestSync();
      return;
    }
    if (message.type === 'vote' && message.vote.height === this.#s.height - 1) {
      this.#host.onLateVote(message.vote);
    }
  }

  /** f + 1 validators speaking at the next height have decided ours: fetch that block. */
  #noteAhead(message: ConsensusMessage<B>): void {
    const sender = senderOf(message);
    if (!this.#s.set.has(sender)) return;
    this.#s.aheadSenders.add(sender);
    if (this.#s.aheadSenders.size === this.#s.set.skipThreshold) this.#host.requestSync();
  }

  /** The chain advanced without us (block sync): move to the next height to decide. */
  syncedTo(committedHeight: number): void {
    if (committedHeight + 1 > this.#s.height) this.#enterHeight(committedHeight + 1);
  }

  /** Our proposals and votes of the current height, for a peer that missed them. */
  roundState(): { height: number; round: number; messages: ConsensusMessage<B>[] } {
    const messages: ConsensusMessage<B>[] = [];
    for (const stored of this.#s.proposals.values()) {
      messages.push({ type: 'proposal', ...stored, polVotes: [] });
    }
    for (const byRound of [this.#s.prevotes, this.#s.precommits]) {
      for (const votes of byRound.values()) {
        for (const vote of votes.values()) messages.push({ type: 'vote', vote });
      }
    }
    for (const announced of this.#s.newRounds.values()) {
      for (const newRound of announced.values()) messages.push({ type: 'newround', newRound });
    }
    return { height: this.#s.height, round: this.#s.round, messages };
  }

  /** Diagnostics: the round state in brief. */
  describe(): object {
    const s = this.#s;
    return {
      height: s.height,
      round: s.round,
      step: s.step,
      lockedRound: s.lockedRound,
      lockedHash: s.lockedHash,
      validators: s.set.size,
      proposals: [...s.proposals.keys()],
      prevotes: Object.fromEntries([...s.prevotes].map(([r, v]) => [r, v.size])),
      precommits: Object.fromEntries([...s.precommits].map(([r, v]) => [r, v.size])),
    };
  }

  stop(): void {
    this.#stopped = true;
    this.#clearTimers();
  }

  // --- heights and rounds ---------------------------------------------------------------

  #freshHeight(height: number): HeightState<B> {
    const lock = this.#options.guard.lockAt(height);
    return {
      height,
      set: this.#host.validators(height),
      round: 0,
      step: Step.idle,
      lockedRound: lock?.round ?? -1,
      lockedHash: lock?.hash ?? null,
      validRound: -1,
      validHash: null,
      proposals: new Map(),
      bodies: new Map(),
      validity: new Map(),
      prevotes: new Map(),
      precommits: new Map(),
      newRounds: new Map(),
      started: false,
      prevoteTimeoutFor: new Set(),
      precommitTimeoutFor: new Set(),
      polkaSeenFor: new Set(),
      missingBodyFor: new Set(),
      aheadSenders: new Set(),
      decided: false,
      own: [],
    };
  }

  #enterHeight(height: number): void {
    this.#clearTimers();
    this.#s = this.#freshHeight(height);
    this.#restoreFromGuard();
    const replay = this.#future.filter((m) => heightOf(m) === height);
    this.#future = this.#future.filter((m) => heightOf(m) > height);
    const target = this.#target;
    if (target !== undefined && target.height <= height) {
      this.#target = undefined;
      if (target.height === height) this.#startRound(target.round);
    }
    let changed = false;
    for (const message of replay) changed = this.#accept(message) || changed;
    if (changed || this.#s.step !== Step.idle) this.#evaluate();
    this.#scheduleIdleRound(height);
  }

  /**
   * While this height waits for its trigger on V1's manual pacemaker, its round goes up by one
   * every step timeout, silently (see ConsensusOptions.idleRounds).
   */
  #scheduleIdleRound(height: number): void {
    if (this.#options.idleRounds === undefined) return;
    const s = this.#s;
    if (s.height !== height || s.step !== Step.idle || s.decided) return;
    this.#schedule(() => {
      if (this.#s !== s || s.step !== Step.idle || s.decided) return;
      if (this.#options.idleRounds?.() === true) s.round += 1;
      this.#scheduleIdleRound(height);
    }, s.round);
  }

  /**
   * What a validator restarted mid-height gets back from its vote guard: the messages it signed
   * in its last round (re-sent when that round starts here: it may not sign them again, and a
   * vote that never left the old process would be missing for good), and when locked, the
   * locked block and the prevote quorum that justifies it (it holds the body again and, as a
   * proposer, re-proposes that block with its proof-of-lock, which unlocked validators accept).
   */
  #restoreFromGuard(): void {
    const s = this.#s;
    const guard = this.#options.guard;
    for (const value of guard.signedAt(s.height)?.messages ?? []) {
      const message = this.#host.restoreMessage?.(value);
      if (message === undefined || message.type === 'newround') continue;
      const signer = senderOf(message);
      if (signer !== this.#options.signer?.address) continue;
      // Into `own` first, so that accepting it does not count as observing a forgotten message.
      s.own.push(message);
      if (!this.#accept(message, false)) s.own.pop();
    }
    const lock = guard.lockAt(s.height);
    if (lock === undefined) return;
    const restored = this.#host.restoreLock?.(lock);
    if (restored === undefined || this.#host.hashOf(restored.block) !== lock.hash) return;
    s.bodies.set(lock.hash, restored.block);
    for (const vote of restored.polVotes) {
      if (vote.kind === VoteKind.prevote && vote.round === lock.round) this.#storeVote(vote);
    }
    if (countFor(s.prevotes, lock.round, lock.hash) >= s.set.quorum) {
      s.validRound = lock.round;
      s.validHash = lock.hash;
    }
  }

  #startRound(round: number): void {
    const s = this.#s;
    const resumeAt = this.#options.guard.lastRoundAt(s.height) ?? 0;
    s.round = Math.max(round, resumeAt);
    s.step = Step.propose;
    s.started = true;
    this.#schedule(() => this.#onTimeoutPropose(s.height, s.round), s.round);
    this.#scheduleHeartbeat(s.height, s.round);
    this.#resendOwn(); // what an earlier process signed in this round (see #restoreFromGuard)
    this.#announceRound();
    this.#tryPropose();
  }

  /** V1's NewRound (leaderExcluded): every member but the round's proposer says it is here. */
  #announceRound(): void {
    const s = this.#s;
    const signer = this.#options.signer;
    if (this.#options.leaderExcluded !== true || signer === undefined) return;
    if (!s.set.has(signer.address) || s.set.proposer(s.height, s.round) === signer.address) return;
    const unsigned = { height: s.height, round: s.round };
    const signature = bytesToHex(signer.sign(newRoundSignBytes(this.#options.chainTag, unsigned)));
    const message: NewRoundMessage = {
      type: 'newround',
      newRound: { ...unsigned, validator: signer.address, signature },
    };
    s.own.push(message);
    this.#acceptNewRound(message.newRound, false);
    this.#host.broadcast(message);
  }

  /** Proposes in the current round when this node leads it and may (once per round). */
  #tryPropose(): boolean {
    const s = this.#s;
    const signer = this.#options.signer;
    if (s.step !== Step.propose || s.proposals.has(s.round)) return false;
    if (signer === undefined || s.set.proposer(s.height, s.round) !== signer.address) return false;
    if (!this.#options.guard.allows(s.height, s.round, SignStep.proposal)) return false;
    // V1's leader first waits for NewRound from more than 2/3 of the set besides itself.
    if (
      this.#options.leaderExcluded === true &&
      (s.newRounds.get(s.round)?.size ?? 0) < s.set.quorum
    )
      return false;
    this.#learnEarlierPolka(); // before choosing what to propose
    let block: B;
    let hash: string;
    let polRound = -1;
    const valid = s.validHash === null ? undefined : s.bodies.get(s.validHash);
    if (valid !== undefined && s.validHash !== null) {
      block = valid;
      hash = s.validHash;
      polRound = s.validRound;
    } else {
      ({ block, hash } = this.#host.buildBlock(s.height));
      s.validity.set(hash, true);
    }
    const unsigned = { height: s.height, round: s.round, polRound, blockHash: hash };
    const signature = bytesToHex(signer.sign(proposalSignBytes(this.#options.chainTag, unsigned)));
    const polVotes =
      polRound >= 0
        ? [...(s.prevotes.get(polRound)?.values() ?? [])].filter((v) => v.blockHash === hash)
        : [];
    const message: ProposalMessage<B> = {
      type: 'proposal',
      proposal: { ...unsigned, proposer: signer.address, signature },
      block,
      polVotes,
    };
    // Durable before it leaves this process.
    this.#options.guard.record(s.height, s.round, SignStep.proposal, { signed: message });
    s.own.push(message);
    this.#accept(message);
    this.#host.broadcast(message);
    return true;
  }

  // --- accepting messages ---------------------------------------------------------------

  /**
   * Verifies and stores a message of the current height. Returns whether it was new. `join`:
   * a valid message starts an idle height (not when restoring our own from the guard).
   */
  #accept(message: ConsensusMessage<B>, join = true): boolean {
    const s = this.#s;
    if (message.type === 'vote') return this.#acceptVote(message.vote, join);
    if (message.type === 'newround') return this.#acceptNewRound(message.newRound, join);
    const { proposal, block } = message;
    if (s.proposals.has(proposal.round)) return false;
    const proposer = s.set.proposer(proposal.height, proposal.round);
    if (proposer === undefined || proposal.proposer !== proposer) return false;
    const member = s.set.get(proposer);
    if (member === undefined) return false;
    const bytes = proposalSignBytes(this.#options.chainTag, proposal);
    if (!verifyHex(this.#options.verify, proposal.signature, bytes, member.publicKey)) return false;
    if (this.#host.hashOf(block) !== proposal.blockHash) return false;
    for (const vote of message.polVotes) this.#acceptVote(vote, join);
    s.proposals.set(proposal.round, { proposal, block, polVotes: message.polVotes });
    s.bodies.set(proposal.blockHash, block);
    this.#observeOwn(proposal.proposer, proposal.round, SignStep.proposal);
    if (join) this.#joinIfIdle(proposal.round);
    return true;
  }

  #acceptVote(vote: Vote, join = true): boolean {
    if (!this.#storeVote(vote)) return false;
    const step = vote.kind === VoteKind.prevote ? SignStep.prevote : SignStep.precommit;
    this.#observeOwn(vote.validator, vote.round, step, vote);
    if (join) this.#joinIfIdle(vote.round);
    return true;
  }

  /**
   * A NewRound of our height (leaderExcluded only): stored once per sender and round; the
   * round's proposer's own never counts (V1 never delivers it).
   */
  #acceptNewRound(newRound: SignedNewRound, join: boolean): boolean {
    const s = this.#s;
    if (this.#options.leaderExcluded !== true) return false;
    const { height, round, validator, signature } = newRound;
    if (height !== s.height || !Number.isInteger(round) || round < 0) return false;
    if (s.set.proposer(height, round) === validator) return false;
    const member = s.set.get(validator);
    let announced = s.newRounds.get(round);
    if (member === undefined || announced?.has(validator) === true) return false;
    const bytes = newRoundSignBytes(this.#options.chainTag, newRound);
    if (!verifyHex(this.#options.verify, signature, bytes, member.publicKey)) return false;
    if (announced === undefined) {
      announced = new Map<string, SignedNewRound>();
      s.newRounds.set(round, announced);
    }
    announced.set(validator, newRound);
    if (join) this.#joinIfIdle(round);
    return true;
  }

  /** Verifies a vote of our height and stores it; returns whether it was new and valid. */
  #storeVote(vote: Vote): boolean {
    const s = this.#s;
    if (vote.height !== s.height || !Number.isInteger(vote.round) || vote.round < 0) return false;
    // V1's leader never counts its own vote (leaderExcluded): nobody counts one in its name.
    if (
      this.#options.leaderExcluded === true &&
      s.set.proposer(s.height, vote.round) === vote.validator
    )
      return false;
    const member = s.set.get(vote.validator);
    if (member === undefined) return false;
    const byRound = vote.kind === VoteKind.prevote ? s.prevotes : s.precommits;
    let votes = byRound.get(vote.round);
    if (votes?.has(vote.validator) === true) return false;
    const bytes = voteSignBytes(this.#options.chainTag, vote);
    if (!verifyHex(this.#options.verify, vote.signature, bytes, member.publicKey)) return false;
    if (votes === undefined) {
      votes = new Map();
      byRound.set(vote.round, votes);
    }
    votes.set(vote.validator, vote);
    return true;
  }

  /** A message signed with our key that we did not send in this process: a restart forgot it. */
  #observeOwn(address: string, round: number, step: SignStep, vote?: Vote): void {
    const signer = this.#options.signer;
    if (signer === undefined || address !== signer.address) return;
    if (this.#s.own.some((m) => isSameMessage(m, round, step))) return;
    const s = this.#s;
    const lock =
      vote?.kind === VoteKind.precommit && vote.blockHash !== null
        ? { round, hash: vote.blockHash }
        : undefined;
    this.#options.guard.observe(s.height, round, step, lock);
    if (lock !== undefined && lock.round > s.lockedRound) {
      s.lockedRound = lock.round;
      s.lockedHash = lock.hash;
    }
  }

  /** Any valid message of our height starts an idle height (the pacemaker reached someone). */
  #joinIfIdle(round: number): void {
    const s = this.#s;
    if (s.step !== Step.idle || s.decided) return;
    // V1's pacemaker drops a message of a round below its own (pacemaker/module.go:135-139):
    // a height whose idle rounds went past it waits for its trigger or a later round.
    if (this.#options.idleRounds !== undefined && !this.atGenesis && round < s.round) return;
    this.#startRound(round);
  }

  // --- the rules --------------------------------------------------------------------------

  #evaluate(): void {
    for (let guard = 0; guard < 1000 && !this.#stopped; guard++) {
      if (!this.#applyRules()) return;
    }
  }

  /**
   * Applies the first rule that fires; returns whether the state changed. The order is the
   * rules' priority; the two timeout rules only arm a timer and let the next rule run.
   */
  #applyRules(): boolean {
    const s = this.#s;
    if (s.decided) return false;
    if (this.#tryDecide()) return true;
    if (s.step === Step.idle) return false;
    if (this.#tryPropose()) return true;
    if (this.#tryPrevoteProposal()) return true;
    this.#armPrevoteTimeout();
    if (this.#tryPolka()) return true;
    if (this.#learnEarlierPolka()) return true;
    if (this.#tryPrecommitNil()) return true;
    this.#armPrecommitTimeout();
    return this.#trySkipToRound();
  }

  /**
   * In the propose step, prevote this round's proposal: a fresh one (no `polRound`) when we are
   * not locked on another block, a re-proposal with a prevote quorum in its `polRound` when we
   * are locked no later than that round or on the same block; nil when it is not acceptable.
   */
  #tryPrevoteProposal(): boolean {
    const s = this.#s;
    const r = s.round;
    const current = s.proposals.get(r);
    if (s.step !== Step.propose || current === undefined) return false;
    const { polRound, blockHash } = current.proposal;
    if (polRound === -1) {
      const acceptable = s.lockedRound === -1 || s.lockedHash === blockHash;
      this.#prevote(acceptable && this.#isValid(blockHash) ? blockHash : null);
      return true;
    }
    if (polRound < r && countFor(s.prevotes, polRound, blockHash) >= s.set.quorum) {
      const acceptable = s.lockedRound <= polRound || s.lockedHash === blockHash;
      this.#prevote(acceptable && this.#isValid(blockHash) ? blockHash : null);
      return true;
    }
    return false;
  }

  /** A prevote quorum (for anything) in our round arms the prevote timeout, once per round. */
  #armPrevoteTimeout(): void {
    const s = this.#s;
    const r = s.round;
    if (
      s.step === Step.prevote &&
      (s.prevotes.get(r)?.size ?? 0) >= s.set.quorum &&
      !s.prevoteTimeoutFor.has(r)
    ) {
      s.prevoteTimeoutFor.add(r);
      this.#schedule(() => this.#onTimeoutPrevote(s.height, r), r);
    }
  }

  /**
   * A prevote quorum for this round's proposal, seen once per round after the propose step:
   * in the prevote step we lock on it and precommit it; in any case it becomes our valid block.
   */
  #tryPolka(): boolean {
    const s = this.#s;
    const r = s.round;
    const current = s.proposals.get(r);
    if (current === undefined || s.step === Step.propose || s.polkaSeenFor.has(r)) return false;
    const hash = current.proposal.blockHash;
    if (countFor(s.prevotes, r, hash) < s.set.quorum || !this.#isValid(hash)) return false;
    s.polkaSeenFor.add(r);
    if (s.step === Step.prevote) {
      s.lockedRound = r;
      s.lockedHash = hash;
      this.#precommit(hash);
    }
    s.validRound = r;
    s.validHash = hash;
    return true;
  }

  /** A prevote quorum for nil in our round, in the prevote step: precommit nil. */
  #tryPrecommitNil(): boolean {
    const s = this.#s;
    if (s.step !== Step.prevote || countFor(s.prevotes, s.round, null) < s.set.quorum) return false;
    this.#precommit(null);
    return true;
  }

  /** A precommit quorum (for anything) in our round arms the precommit timeout, once per round. */
  #armPrecommitTimeout(): void {
    const s = this.#s;
    const r = s.round;
    if ((s.precommits.get(r)?.size ?? 0) >= s.set.quorum && !s.precommitTimeoutFor.has(r)) {
      s.precommitTimeoutFor.add(r);
      this.#schedule(() => this.#onTimeoutPrecommit(s.height, r), r);
    }
  }

  /** A later round that enough of the set has reached: go there and ask for its state. */
  #trySkipToRound(): boolean {
    const ahead = this.#roundWithSkipQuorum();
    if (ahead === undefined) return false;
    this.#startRound(ahead);
    this.#host.requestRoundState();
    return true;
  }

  /**
   * A prevote quorum for a proposed block in a round before ours, newer than the one we know,
   * becomes our valid block: as a proposer we re-propose it with that proof (`polRound`), which
   * validators locked on it accept. Tendermint learns this only in the round itself; a node that
   * left the round early (a TriggerView, a catch-up) never learnt it, proposed fresh blocks, and
   * a validator locked on the old one prevoted nil on each — with every live voter needed in a
   * round (a silent member), no block could get a quorum again. V1's leader does the same: it
   * re-proposes the block of the highest prepare QC it is shown (`consensus/hotstuff_leader.go:59-83`).
   * Safe: what a proposer proposes never breaks agreement; the lock rules on prevotes do not change.
   */
  #learnEarlierPolka(): boolean {
    const s = this.#s;
    let learnt = false;
    for (const [round, stored] of s.proposals) {
      if (round <= s.validRound || round >= s.round) continue;
      const hash = stored.proposal.blockHash;
      if (countFor(s.prevotes, round, hash) < s.set.quorum || !this.#isValid(hash)) continue;
      s.validRound = round;
      s.validHash = hash;
      learnt = true;
    }
    return learnt;
  }

  /** Decides when some round has a precommit quorum for a block we hold and find valid. */
  #tryDecide(): boolean {
    const s = this.#s;
    for (const [round, votes] of s.precommits) {
      if (votes.size < s.set.quorum) continue;
      const hash = majorityHash(votes, s.set.quorum);
      if (hash === undefined) continue;
      const block = s.bodies.get(hash);
      if (block === undefined) {
        if (!s.missingBodyFor.has(hash)) {
          s.missingBodyFor.add(hash);
          this.#host.requestRoundState();
          this.#host.requestSync();
        }
        continue;
      }
      if (!this.#isValid(hash)) {
        if (!s.missingBodyFor.has(`invalid:${hash}`)) {
          s.missingBodyFor.add(`invalid:${hash}`);
          this.#options.log.warn(
            { height: s.height, round, hash },
            'a quorum precommitted a block this node finds invalid',
          );
        }
        continue;
      }
      s.decided = true;
      this.#clearTimers();
      const precommits = [...votes.values()].filter((v) => v.blockHash === hash);
      this.#host.commit({ height: s.height, round, block, hash, precommits });
      this.#enterHeight(s.height + 1);
      return true;
    }
    return false;
  }

  /**
   * The highest round above ours where f + 1 members have spoken (with catchUpOnAnyMessage: any
   * member).
   */
  #roundWithSkipQuorum(): number | undefined {
    const s = this.#s;
    const threshold = this.#options.catchUpOnAnyMessage === true ? 1 : s.set.skipThreshold;
    const senders = new Map<number, Set<string>>();
    const add = (round: number, address: string): void => {
      if (round <= s.round) return;
      let set = senders.get(round);
      if (set === undefined) senders.set(round, (set = new Set()));
      set.add(address);
    };
    for (const byRound of [s.prevotes, s.precommits]) {
      for (const [round, votes] of byRound) for (const address of votes.keys()) add(round, address);
    }
    for (const [round, stored] of s.proposals) add(round, stored.proposal.proposer);
    for (const [round, announced] of s.newRounds)
      for (const address of announced.keys()) add(round, address);
    let best: number | undefined;
    for (const [round, set] of senders) {
      if (set.size >= threshold && (best === undefined || round > best)) best = round;
    }
    return best;
  }

  #isValid(hash: string): boolean {
    const s = this.#s;
    const known = s.validity.get(hash);
    if (known !== undefined) return known;
    const block = s.bodies.get(hash);
    if (block === undefined) return false;
    const valid = this.#host.isValid(s.height, block, hash);
    s.validity.set(hash, valid);
    return valid;
  }

  // --- signing ----------------------------------------------------------------------------

  #prevote(hash: string | null): void {
    this.#s.step = Step.prevote;
    this.#signVote(VoteKind.prevote, hash);
  }

  #precommit(hash: string | null): void {
    this.#s.step = Step.precommit;
    this.#signVote(VoteKind.precommit, hash);
  }

  #signVote(kind: VoteKind, hash: string | null): void {
    const s = this.#s;
    const signer = this.#options.signer;
    if (signer === undefined || !s.set.has(signer.address)) return;
    // V1's leader's votes go to itself and are dropped: it signs none in a round it leads.
    if (
      this.#options.leaderExcluded === true &&
      s.set.proposer(s.height, s.round) === signer.address
    )
      return;
    const step = kind === VoteKind.prevote ? SignStep.prevote : SignStep.precommit;
    const guard = this.#options.guard;
    if (!guard.allows(s.height, s.round, step)) return;
    const lock = kind === VoteKind.precommit && hash !== null ? this.#lockOn(hash) : undefined;
    const vote = signVote(this.#options.chainTag, signer, {
      kind,
      height: s.height,
      round: s.round,
      blockHash: hash,
    });
    const message: VoteMessage = { type: 'vote', vote };
    // Durable before it leaves this process.
    guard.record(s.height, s.round, step, { lock, signed: message });
    s.own.push(message);
    this.#acceptVote(vote);
    this.#host.broadcast(message);
  }

  /** The lock a precommit for `hash` takes: the block and its prevote quorum of this round. */
  #lockOn(hash: string): Lock {
    const s = this.#s;
    const block = s.bodies.get(hash);
    const polVotes = [...(s.prevotes.get(s.round)?.values() ?? [])].filter(
      (v) => v.blockHash === hash,
    );
    return block === undefined
      ? { round: s.round, hash }
      : { round: s.round, hash, block, polVotes };
  }

  // --- timeouts ---------------------------------------------------------------------------

  #onTimeoutPropose(height: number, round: number): void {
    const s = this.#s;
    if (s.height !== height || s.round !== round || s.step !== Step.propose || s.decided) return;
    this.#prevote(null);
    this.#evaluate();
  }

  #onTimeoutPrevote(height: number, round: number): void {
    const s = this.#s;
    if (s.height !== height || s.round !== round || s.step !== Step.prevote || s.decided) return;
    this.#resendOwn();
    this.#precommit(null);
    this.#evaluate();
  }

  #onTimeoutPrecommit(height: number, round: number): void {
    const s = this.#s;
    if (s.height !== height || s.round !== round || s.decided) return;
    this.#options.log.debug({ height, round }, 'round ended without a decision');
    this.#resendOwn();
    this.#host.requestRoundState();
    this.#startRound(round + 1);
    this.#evaluate();
  }

  /**
   * While a round makes no decision, periodically re-send our messages of the round and pull
   * everyone's: the delivery guarantee Tendermint's gossip layer gives (messages get lost when a
   * peer restarts or a request times out).
   */
  #scheduleHeartbeat(height: number, round: number): void {
    const beat = (): void => {
      const s = this.#s;
      if (s.height !== height || s.round !== round || s.decided || this.#stopped) return;
      this.#resendOwn();
      this.#host.requestRoundState();
      this.#host.requestSync();
      this.#schedule(beat, round, 2);
    };
    this.#schedule(beat, round, 2);
  }

  /** Re-sends what we signed in the current round, for peers that missed or forgot it. */
  #resendOwn(): void {
    const s = this.#s;
    for (const message of s.own) if (roundOf(message) === s.round) this.#host.broadcast(message);
  }

  #schedule(callback: () => void, round: number, factor = 1): void {
    if (this.#stopped) return;
    const handle = this.#options.timers.setTimeout(
      () => {
        this.#timers.delete(handle);
        callback();
      },
      factor * this.#options.timeoutMs(round),
    );
    this.#timers.add(handle);
  }

  #clearTimers(): void {
    for (const handle of this.#timers) this.#options.timers.clearTimeout(handle);
    this.#timers.clear();
  }
}

function countFor(byRound: VotesByRound, round: number, hash: string | null): number {
  let count = 0;
  for (const vote of byRound.get(round)?.values() ?? []) if (vote.blockHash === hash) count++;
  return count;
}

/** The non-nil hash with at least `quorum` votes among `votes`, if any. */
function majorityHash(votes: Map<string, Vote>, quorum: number): string | undefined {
  const counts = new Map<string, number>();
  for (const vote of votes.values()) {
    if (vote.blockHash === null) continue;
    const count = (counts.get(vote.blockHash) ?? 0) + 1;
    if (count >= quorum) return vote.blockHash;
    counts.set(vote.blockHash, count);
  }
  return undefined;
}

function isSameMessage<B>(message: ConsensusMessage<B>, round: number, step: SignStep): boolean {
  if (message.type === 'proposal')
    return step === SignStep.proposal && message.proposal.round === round;
  if (message.type === 'newround') return false;
  const kind = step === SignStep.prevote ? VoteKind.prevote : VoteKind.precommit;
  return message.vote.round === round && message.vote.kind === kind;
}

/** The height, round and signer of any consensus message. */
function heightOf<B>(message: ConsensusMessage<B>): number {
  if (message.type === 'vote') return message.vote.height;
  return message.type === 'newround' ? message.newRound.height : message.proposal.height;
}

function roundOf<B>(message: ConsensusMessage<B>): number {
  if (message.type === 'vote') return message.vote.round;
  return message.type === 'newround' ? message.newRound.round : message.proposal.round;
}

function senderOf<B>(message: ConsensusMessage<B>): string {
  if (message.type === 'vote') return message.vote.validator;
  return message.type === 'newround' ? message.newRound.validator : message.proposal.proposer;
}
