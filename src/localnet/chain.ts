// The committed chain of one node: genesis, blocks with their quorum certificates, state by
// height, the transaction index; certificate checks against the set computed from own state.
import type { AdmittedTransaction, Ed25519Verify } from '../pocket/index.ts';
import type { CommittedBlock, QuorumCert } from './block.ts';
import type { ExecutedTx, Execution, ExecutionBase } from './execute.ts';
import { INTENDED_PROFILE, type FidelityProfile } from './fidelity.ts';
import { genesisHash, type Genesis } from './genesis.ts';
import { ChainState } from './state.ts';
import { ValidatorSet } from './validator-set.ts';
import { verifyHex, voteSignBytes, VoteKind, type Vote } from './votes.ts';

/** A committed transaction as the index holds it. */
export interface IndexedTx {
  tx: AdmittedTransaction;
  raw: string;
  height: number;
  index: number;
  code: number;
}

export class Chain {
  readonly genesis: Genesis;
  readonly genesisHash: string;
  readonly state: ChainState;
  readonly #blocks: CommittedBlock[] = [];
  readonly #index = new Map<string, IndexedTx>();
  readonly #byHeight: IndexedTx[][] = [];
  readonly #sets = new Map<number, ValidatorSet>();
  readonly #verify: Ed25519Verify;
  /** Which validator rows sign a height and how a known validator's stake is handled. */
  readonly profile: FidelityProfile;

  constructor(
    genesis: Genesis,
    verify: Ed25519Verify,
    profile: FidelityProfile = INTENDED_PROFILE,
  ) {
    this.genesis = genesis;
    this.genesisHash = genesisHash(genesis);
    this.state = ChainState.fromGenesis(genesis);
    this.#verify = verify;
    this.profile = profile;
  }

  get chainId(): string {
    return this.genesis.chain_id;
  }

  /** Last committed height; 0 before the first block. */
  get height(): number {
    return this.state.height;
  }

  block(height: number): CommittedBlock | undefined {
    return this.#blocks[height - 1];
  }

  transaction(hash: string): IndexedTx | undefined {
    return this.#index.get(hash);
  }

  /** The indexed transactions of block `height`, in block order. */
  transactionsOf(height: number): readonly IndexedTx[] {
    return this.#byHeight[height - 1] ?? [];
  }

  /** Hash of the last committed block (the genesis hash at height 0). */
  get lastBlockHash(): string {
    return this.block(this.height)?.hash ?? this.genesisHash;
  }

  get lastStateHash(): string {
    return this.block(this.height)?.block.header.stateHash ?? this.genesisHash;
  }

  /** The set that signs block `height` (from the state after `height − 1`, by the profile). */
  validatorSet(height: number): ValidatorSet {
    const cached = this.#sets.get(height);
    if (cached !== undefined) return cached;
    if (height < 1 || height > this.height + 1) {
      throw new RangeError(`no validator set for height ${height} (committed ${this.height})`);
    }
    const set = ValidatorSet.fromState(this.state.at(height - 1), this.profile);
    this.#sets.set(height, set);
    return set;
  }

  /** What the next block executes against. */
  executionBase(): ExecutionBase {
    const height = this.height + 1;
    return {
      chainId: this.chainId,
      height,
      state: this.state.at(),
      prevBlockHash: this.lastBlockHash,
      prevStateHash: this.lastStateHash,
      validators: this.validatorSet(height),
      profile: this.profile,
    };
  }

  /**
   * Checks a certificate for block `blockHash` at `height`: distinct members of that height's
   * set, valid precommit signatures, strictly more than 2/3 of the set. Returns the problem.
   */
  checkCertificate(qc: QuorumCert, blockHash: string): string | undefined {
    if (qc.blockHash !== blockHash) return 'certificate is for another block';
    const set = this.validatorSet(qc.height);
    const signers = new Set<string>();
    // V1's leader never signs its own round's certificate (fidelity.ts, rounds.leaderExcluded).
    const leader = this.profile.rounds.leaderExcluded ? set.proposer(qc.height, qc.round) : '';
    for (const { address, signature } of qc.signatures) {
      const member = set.get(address);
      if (member === undefined) return `signer ${address} is not in the validator set`;
      if (signers.has(address)) return `signer ${address} appears twice`;
      if (address === leader) return `signer ${address} led round ${qc.round}`;
      const bytes = voteSignBytes(this.genesisHash, {
        kind: VoteKind.precommit,
        height: qc.height,
        round: qc.round,
        blockHash,
      });
      if (!verifyHex(this.#verify, signature, bytes, member.publicKey)) {
        return `bad signature from ${address}`;
      }
      signers.add(address);
    }
    if (signers.size < set.quorum) {
      return `${signers.size} signatures, ${set.quorum} needed of ${set.size}`;
    }
    return undefined;
  }

  /** Stores an executed block with its certificate and applies its state changes. */
  commit(execution: Execution, qc: QuorumCert): CommittedBlock {
    const height = execution.block.header.height;
    if (height !== this.height + 1)
      throw new RangeError(`commit of ${height} after ${this.height}`);
    this.state.apply(execution.delta, height);
    this.#sets.set(height + 1, execution.nextSet);
    const committed: CommittedBlock = { block: execution.block, hash: execution.hash, qc };
    this.#blocks.push(committed);
    const records = execution.txs.map((executed: ExecutedTx, index): IndexedTx => ({
      ...executed,
      height,
      index,
    }));
    for (const record of records) this.#index.set(record.tx.hash, record);
    this.#byHeight.push(records);
    return committed;
  }

  /**
   * Adds a precommit that arrived after its block committed to that block's certificate, so a
   * certificate shows every validator that signed, not only the first quorum. Returns whether
   * it was added.
   */
  addLateSignature(vote: Vote): boolean {
    const committed = this.block(vote.height);
    if (committed === undefined || vote.kind !== VoteKind.precommit) return false;
    const { qc } = committed;
    if (vote.blockHash !== committed.hash || vote.round !== qc.round) return false;
    if (qc.signatures.some((s) => s.address === vote.validator)) return false;
    const set = this.validatorSet(vote.height);
    const member = set.get(vote.validator);
    if (member === undefined) return false;
    if (
      this.profile.rounds.leaderExcluded &&
      set.proposer(vote.height, qc.round) === vote.validator
    )
      return false;
    const bytes = voteSignBytes(this.genesisHash, vote);
    if (!verifyHex(this.#verify, vote.signature, bytes, member.publicKey)) return false;
    qc.signatures.push({ address: vote.validator, signature: vote.signature });
    qc.signatures.sort((a, b) => (a.address < b.address ? -1 : 1));
    return true;
  }
}
