// The chain view reads the mempool the V1 way: V1 answers `unconfirmed_txs` with 500 `CODE: 135`
// while anything is pending (rpc/utils.go:364-373 → utility/transaction.go:55-58 at 58c9b650), so
// the poll does not fail on it; the manager's own open transactions are looked up by hash instead.
// First against a fake port, then against a real `--fidelity v1` node with a pending stake.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainView, type OwnTransaction } from '../../src/manager/chain/chain-view.ts';
import { ActionKind } from '../../src/manager/model.ts';
import { pocketReads, type PocketQueries } from '../../src/manager/chain/pocket/pocket-reads.ts';
import { startNet, type LocalNet } from '../../src/localnet/net.ts';
import { generateKeys, PocketRpcClient, type IndexedTransaction } from '../../src/pocket/index.ts';
import { stakeTx } from '../localnet/support/chain.ts';
import { actor, FakeChain } from '../support/fake-chain.ts';
import { ManualClock } from '../support/manual-clock.ts';

function viewOf(rpc: PocketQueries, own: OwnTransaction[]) {
  const health: boolean[] = [];
  const view = new ChainView({
    reads: pocketReads(rpc),
    clock: new ManualClock(),
    logger: pino({ level: 'silent' }),
    pollIntervalMs: 100,
    ownTransactions: () => own,
    listener: {
      onBlocks: () => undefined,
      onHeight: () => undefined,
      onHealth: (healthy) => health.push(healthy),
    },
  });
  return { view, health };
}

function pendingTx(hash: string, signer: string): IndexedTransaction {
  return {
    height: 0,
    index: 0,
    result_code: 0,
    signer_addr: signer,
    recipient_addr: '',
    message_type: 'MessageStake',
    tx: { hash, bytes: '' },
  } as unknown as IndexedTransaction;
}

describe('the chain view and a mempool V1 will not list', () => {
  it('stays healthy and holds its own pending transactions, found by hash', async () => {
    const chain = new FakeChain(['a1', 'a2', 'a3', 'a4']).grow(3);
    chain.rows = ['a1', 'a2', 'a3', 'a4'].map(actor);
    chain.mempoolUnreadable = true;
    chain.pending = [pendingTx('h-own', 'a5'), pendingTx('h-other', 'a6')];
    const { view } = viewOf(chain, [{ hash: 'h-own', signer: 'a5', kind: ActionKind.stake }]);
    await view.tick();
    expect(view.healthy).toBe(true);
    expect(view.lastError).toBeUndefined();
    // Only what the manager sent can be known; another signer's transaction stays invisible.
    expect([...view.mempool.keys()]).toEqual(['a5']);
    expect(view.mempool.get('a5')).toEqual({
      hash: 'h-own',
      signer: 'a5',
      kind: ActionKind.stake,
    });

    // Once the mempool is empty again it is listed as usual, and the entry is gone.
    chain.pending = [];
    await view.tick();
    expect(view.mempool.size).toBe(0);
  });
});

describe('against a --fidelity v1 node with a pending transaction', () => {
  const keys = generateKeys({ count: 2, seed: 'chain-view-v1' });
  let net: LocalNet;
  beforeAll(async () => {
    net = await startNet({ keys, validators: 1, staked: 1, fidelity: 'v1' });
  }, 90_000);
  afterAll(async () => {
    await net.stop();
  });

  it('the node answers 135 to the mempool query, and the view is healthy with the stake pending', async () => {
    const rpc = new PocketRpcClient({ baseUrl: net.nodes[0]!.rpcUrl, timeoutMs: 10_000 });
    const key = keys.get('002')!;
    const tx = stakeTx(key, '127.0.0.1:1');
    await rpc.broadcast(tx);
    // The manual pacemaker makes no block: the stake stays in the mempool, and V1 hides it.
    expect(await rpc.mempool()).toMatchObject({ readable: false });

    const { view, health } = viewOf(rpc, [
      { hash: tx.hash, signer: key.address, kind: ActionKind.stake },
    ]);
    await view.tick();
    expect(health).toEqual([true]);
    expect(view.healthy).toBe(true);
    expect(view.height).toBe(await rpc.height());
    expect(view.mempool.get(key.address)?.hash).toBe(tx.hash);
  });
});
