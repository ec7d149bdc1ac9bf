// The chain's side of a stake/unstake for unit tests of the reconciler, with no socket: the
// sending port (`ChainAdapter`, RPC mode: bytes known before the send, resend = same bytes) and
// the queries (`transaction`, `account`: FakeChain answers them) over a FakeChain whose blocks,
// rows and mempool the ChainView reads. `commit()` includes the mempool in a block as a node would:
// a transaction's effect on its signer's row only when its result code is 0.
import type {
  ChainAdapter,
  PreparedTx,
  SendOutcome,
  TxRequest,
} from '../../src/manager/chain/adapter.ts';
import type { ActionRecord } from '../../src/manager/model.ts';
import type { IndexedTransaction } from '../../src/pocket/index.ts';
import { actor, FakeChain } from './fake-chain.ts';

const MESSAGE = { stake: 'MessageStake', unstake: 'MessageUnstake' } as const;

export class FakeLedger implements ChainAdapter {
  readonly transport = {
    name: 'rpc',
    resendsSameBytes: true,
    maybeSentCodes: [],
    retryableMaySend: true,
    viewTrigger: 'a block made by commit()',
  };
  readonly chain: FakeChain;
  /** Every send and resend that reached the node, by hash. */
  readonly sends: string[] = [];
  /** Thrown by the next send (a refusal, or a failure after which the bytes may have arrived). */
  refuseNext: Error | undefined;
  /** Result codes the next commit gives transactions (by hash; 0 when absent). */
  readonly resultCodes = new Map<string, number>();
  /** Blocks until a committed unstake's row reads unstaked. */
  unbondingBlocks = 10;
  #nonce = 0;
  readonly #txs = new Map<string, { kind: 'stake' | 'unstake'; address: string }>();

  constructor(chain: FakeChain) {
    this.chain = chain;
  }

  /** Sets an account's balance (uPOKT); an account not set has plenty. */
  setBalance(address: string, amount: bigint): void {
    this.chain.balances.set(address, String(amount));
  }

  prepare(request: TxRequest): PreparedTx {
    if (!this.chain.balances.has(request.key.address))
      this.setBalance(request.key.address, 10n ** 15n);
    const nonce = String(++this.#nonce);
    const txHash = `${request.kind}-${request.key.address.slice(0, 8)}-${nonce}`;
    this.#txs.set(txHash, { kind: request.kind, address: request.key.address });
    return { txHash, txHex: Buffer.from(txHash).toString('hex'), nonce };
  }

  send(_request: TxRequest, prepared: PreparedTx, signal: AbortSignal): Promise<SendOutcome> {
    signal.throwIfAborted();
    const refusal = this.refuseNext;
    this.refuseNext = undefined;
    if (refusal !== undefined) return Promise.reject(refusal);
    return Promise.resolve(this.#admit(prepared.txHash!));
  }

  resend(record: ActionRecord, signal: AbortSignal): Promise<SendOutcome> | undefined {
    signal.throwIfAborted();
    if (record.txHash === undefined) return undefined;
    return Promise.resolve(this.#admit(record.txHash));
  }

  triggerView(): Promise<void> {
    this.commit();
    return Promise.resolve();
  }

  #admit(hash: string): SendOutcome {
    this.sends.push(hash);
    if (this.committed(hash) !== undefined) return 'committed';
    if (this.chain.pending.some((t) => t.tx.hash === hash)) return 'in-mempool';
    const known = this.#txs.get(hash);
    if (known === undefined) throw new Error(`unknown transaction ${hash}`);
    this.chain.pending.push(indexed(hash, MESSAGE[known.kind], known.address, 0));
    return 'admitted';
  }

  /** The node loses its mempool (restart, eviction). */
  dropMempool(): void {
    this.chain.pending = [];
  }

  /** Commits one block holding the mempool; applies each applied transaction's effect. */
  commit(): number {
    const height = this.chain.blocks.length + 1;
    const txs = this.chain.pending.map((t, index) => ({
      ...t,
      height,
      index,
      result_code: this.resultCodes.get(t.tx.hash) ?? 0,
    }));
    this.chain.pending = [];
    this.chain.grow(1, () => txs);
    for (const t of txs) {
      if (t.result_code !== 0) continue;
      const rows = this.chain.rows.filter((r) => r.address !== t.signer_addr);
      const before = this.chain.rows.find((r) => r.address === t.signer_addr);
      if (t.message_type === MESSAGE.stake) rows.push(actor(t.signer_addr));
      else if (before !== undefined)
        rows.push({ ...before, unstaking_height: height + this.unbondingBlocks });
      this.chain.rows = rows;
    }
    return height;
  }

  /** Committed transactions of this signer and message type, in order. */
  committedBy(address: string, messageType: string): IndexedTransaction[] {
    return this.chain.blocks
      .flatMap((b) => b.txs)
      .filter((t) => t.signer_addr === address && t.message_type === messageType);
  }

  committed(hash: string): IndexedTransaction | undefined {
    return this.chain.blocks.flatMap((b) => b.txs).find((t) => t.tx.hash === hash);
  }
}

function indexed(
  hash: string,
  messageType: string,
  signer: string,
  resultCode: number,
): IndexedTransaction {
  return {
    height: 0,
    index: 0,
    result_code: resultCode,
    signer_addr: signer,
    recipient_addr: '',
    message_type: messageType,
    tx: { hash, height: 0, index: 0, txMsg: {} as never },
  };
}
