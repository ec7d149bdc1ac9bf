// A V1 node's queries for unit tests of the chain view (through the Pocket side of the chain
// port, `pocketReads`): blocks with linked state hashes, validator rows, and the faults a real
// node shows — answering from an old snapshot (its height goes back) or from a fork (other blocks
// at heights already seen). No sockets.
import type { PocketQueries } from '../../src/manager/chain/pocket/pocket-reads.ts';
import type {
  Account,
  Block,
  IndexedTransaction,
  MempoolEntry,
  MempoolView,
  ProtocolActor,
} from '../../src/pocket/index.ts';

interface FakeBlock {
  stateHash: string;
  prevStateHash: string;
  signers: string[];
  txs: IndexedTransaction[];
}

export class FakeChain implements PocketQueries {
  /** blocks[h - 1] is block h. */
  blocks: FakeBlock[] = [];
  /** Rows by address, the same at every height (enough for the view's checks). */
  rows: ProtocolActor[] = [];
  /** While set, the node answers as if it were at this height (an old snapshot). */
  servedHeight: number | undefined;
  calls = 0;
  /** Heights of the blocks read, in order. */
  readonly blockReads: number[] = [];
  /** While set, every query fails with it (the node is unreachable). */
  down: Error | undefined;

  readonly signers: string[];
  readonly #branch: string;

  constructor(signers: string[], branch = 'main') {
    this.signers = signers;
    this.#branch = branch;
  }

  /** Commits `n` blocks signed by `signers`. */
  grow(n: number, txs: (height: number) => IndexedTransaction[] = () => []): this {
    for (let i = 0; i < n; i++) {
      const height = this.blocks.length + 1;
      const prevStateHash = this.blocks.at(-1)?.stateHash ?? 'genesis';
      this.blocks.push({
        stateHash: `${this.#branch}-${height}`,
        prevStateHash,
        signers: [...this.signers],
        txs: txs(height),
      });
    }
    return this;
  }

  /** Replaces the blocks from `height` on with another branch (a fork), `length` blocks long. */
  fork(height: number, length: number, branch = 'fork'): this {
    this.blocks = this.blocks.slice(0, height - 1);
    const other = new FakeChain(this.signers, branch);
    other.blocks = this.blocks;
    other.grow(length - height + 1);
    this.blocks = other.blocks;
    return this;
  }

  get top(): number {
    return this.servedHeight ?? this.blocks.length;
  }

  height(): Promise<number> {
    this.calls++;
    if (this.down !== undefined) return Promise.reject(this.down);
    return Promise.resolve(this.top);
  }

  validators(): Promise<ProtocolActor[]> {
    this.calls++;
    return Promise.resolve(this.rows);
  }

  block(height = 0): Promise<Block> {
    this.calls++;
    const h = height === 0 ? this.top : height;
    this.blockReads.push(h);
    const block = h <= this.top ? this.blocks[h - 1] : undefined;
    if (block === undefined) return Promise.reject(new Error(`no block ${h}`));
    return Promise.resolve({
      block_header: {
        height: h,
        network_id: 'localnet',
        state_hash: block.stateHash,
        prev_state_hash: block.prevStateHash,
        proposer_addr: '',
        quorum_cert: {
          height: h,
          round: 0,
          step: '',
          block: block.stateHash,
          threshold_sig: {
            signatures: block.signers.map((address) => ({ address, signature: '' })),
          },
          transactions: null,
        },
        timestamp: '',
        state_tree_hashes: {},
        val_set_hash: '',
        next_val_set_hash: '',
      },
      transactions: block.txs,
    });
  }

  /** Transactions waiting in the mempool. */
  pending: IndexedTransaction[] = [];
  /** While true, the mempool answers as V1 does while anything is pending (CODE 135). */
  mempoolUnreadable = false;

  mempool(): Promise<MempoolView> {
    this.calls++;
    if (this.mempoolUnreadable && this.pending.length > 0)
      return Promise.resolve({ readable: false, reason: 'CODE: 135' });
    return Promise.resolve({ readable: true, transactions: this.pending });
  }

  /** As V1: while the mempool is not empty, every hash reads as in it (135). */
  mempoolEntry(hash: string): Promise<MempoolEntry> {
    this.calls++;
    if (this.mempoolUnreadable && this.pending.length > 0)
      return Promise.resolve({ inMempool: true, transaction: undefined });
    const tx = this.pending.find((t) => t.tx.hash === hash);
    return Promise.resolve(
      tx === undefined ? { inMempool: false } : { inMempool: true, transaction: tx },
    );
  }

  /** A committed transaction by hash (undefined when no block holds it). */
  transaction(hash: string): Promise<IndexedTransaction | undefined> {
    this.calls++;
    for (const block of this.blocks.slice(0, this.top))
      for (const tx of block.txs) if (tx.tx.hash === hash) return Promise.resolve(tx);
    return Promise.resolve(undefined);
  }

  /** Balances by address (0 when not set). */
  balances = new Map<string, string>();

  account(address: string): Promise<Account> {
    this.calls++;
    return Promise.resolve({
      address,
      coins: [{ denom: 'upokt', amount: this.balances.get(address) ?? '0' }],
    });
  }
}

export function actor(address: string): ProtocolActor {
  return {
    address,
    actor_type: 'validator',
    public_key: '',
    chains: ['0001'],
    service_url: `${address}:42069`,
    staked_amount: '1',
    paused_height: -1,
    unstaking_height: -1,
    output_addr: address,
  };
}
