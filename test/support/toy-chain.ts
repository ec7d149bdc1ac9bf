// A second, minimal chain behind the manager's chain port (src/manager/chain/port.ts): in memory,
// no Pocket anywhere — its own key type, its own transaction ids, a fee of 1, result code 7 for
// "cannot stake twice". It proves the core (planner, reconciler, chain view, journal) names no
// Pocket fact: test/manager/chain-port-toy.unit.test.ts drives them through a stake/unstake cycle.
import { ManagerError } from '../../src/manager/errors.ts';
import type {
  ChainAdapter,
  PreparedTx,
  SendOutcome,
  TxRequest,
} from '../../src/manager/chain/adapter.ts';
import type {
  ChainBlock,
  ChainPort,
  CommittedTx,
  MempoolTx,
} from '../../src/manager/chain/port.ts';
import {
  ActionKind,
  ChainStatus,
  type ActionRecord,
  type ChainKey,
  type ChainValidator,
} from '../../src/manager/model.ts';

/** The toy chain's key: a name; its address and public key are derived from it. */
export function toyKey(name: string): ChainKey {
  return { address: `toy:${name}`, publicKeyHex: Buffer.from(name).toString('hex') };
}

interface ToyTx extends MempoolTx {
  readonly kind: ActionKind;
  readonly serviceUrl: string;
  readonly amount: string;
}

/** Result code of a stake of a row that is already staked. */
const ALREADY_STAKED = 7;

export class ToyChain {
  readonly blocks: ChainBlock[] = [];
  readonly rows = new Map<string, ChainValidator>();
  readonly balances = new Map<string, bigint>();
  readonly mempool = new Map<string, ToyTx>();
  readonly #committed = new Map<string, CommittedTx>();
  #txCount = 0;

  constructor(genesis: readonly ChainKey[]) {
    for (const key of genesis) {
      this.rows.set(key.address, {
        address: key.address,
        status: ChainStatus.staked,
        stakedAmount: '100',
        unstakingHeight: -1,
        serviceUrl: `${key.address}:1`,
      });
    }
    this.commit();
  }

  get height(): number {
    return this.blocks.length;
  }

  /** Makes a block of everything in the mempool, signed by every staked row. */
  commit(): ChainBlock {
    const height = this.blocks.length + 1;
    const txs: CommittedTx[] = [];
    for (const tx of this.mempool.values()) {
      const row = this.rows.get(tx.signer);
      let resultCode = 0;
      if (tx.kind === ActionKind.stake) {
        if (row?.status === ChainStatus.staked) resultCode = ALREADY_STAKED;
        else
          this.rows.set(tx.signer, {
            address: tx.signer,
            status: ChainStatus.staked,
            stakedAmount: tx.amount,
            unstakingHeight: -1,
            serviceUrl: tx.serviceUrl,
          });
      } else if (row !== undefined) {
        this.rows.set(tx.signer, {
          ...row,
          status: ChainStatus.unstaking,
          unstakingHeight: height + 10,
        });
      }
      const committed = { hash: tx.hash, height, resultCode, signer: tx.signer, kind: tx.kind };
      txs.push(committed);
      this.#committed.set(tx.hash, committed);
    }
    this.mempool.clear();
    const block: ChainBlock = {
      height,
      hash: `block-${height}`,
      parentHash: height === 1 ? 'genesis' : `block-${height - 1}`,
      time: height * 1000,
      signers: [...this.rows.values()]
        .filter((r) => r.status === ChainStatus.staked)
        .map((r) => r.address),
      txs,
    };
    this.blocks.push(block);
    return block;
  }

  port(): ChainPort {
    return toyPort(this);
  }

  /** A new transaction id. */
  nextTxId(): string {
    this.#txCount++;
    return `toy-tx-${this.#txCount}`;
  }

  transaction(hash: string): CommittedTx | undefined {
    return this.#committed.get(hash);
  }

  admit(tx: ToyTx): SendOutcome {
    if (this.#committed.has(tx.hash)) return 'committed';
    if (this.mempool.has(tx.hash)) return 'in-mempool';
    this.mempool.set(tx.hash, tx);
    return 'admitted';
  }
}

function toyPort(chain: ToyChain): ChainPort {
  const sender: ChainAdapter = {
    mode: 'rpc',
    prepare(request: TxRequest): PreparedTx {
      const hash = chain.nextTxId();
      return { txHash: hash, txHex: JSON.stringify(toyTx(request, hash)) };
    },
    send(request, prepared): Promise<SendOutcome> {
      if (prepared.txHash === undefined || prepared.txHex === undefined)
        throw new ManagerError('INTERNAL', 'toy send without a prepared transaction');
      return Promise.resolve(chain.admit(JSON.parse(prepared.txHex) as ToyTx));
    },
    resend(record: ActionRecord) {
      if (record.txHex === undefined) return undefined;
      return Promise.resolve(chain.admit(JSON.parse(record.txHex) as ToyTx));
    },
    triggerView() {
      chain.commit();
      return Promise.resolve();
    },
  };
  return {
    transport: 'toy',
    // The toy's own id format ("v1", "v2", …): nothing in the core assumes Pocket's three digits.
    ids: {
      fromNumber: (n) => (Number.isInteger(n) && n >= 1 && n <= 99 ? `v${n}` : undefined),
      fromText: (text) => (/^v[1-9]\d?$/.test(text) ? text : undefined),
      isId: (name) => /^v[1-9]\d?$/.test(name),
      range: { min: 1, max: 99 },
      example: 'v5',
    },
    // The toy's keys are their names ("toy key alice"); anything else is refused with a code.
    keys: {
      parse: (text) => {
        const name = /^toy key (\w+)$/.exec(text)?.[1];
        if (name === undefined)
          throw Object.assign(new Error('not a toy key'), { code: 'KEY_INVALID' });
        return toyKey(name);
      },
    },
    capabilities: {
      profile: 'toy',
      lateJoinersVote: true,
      unstakeLeavesQuorum: true,
      leaderVoteCounts: true,
      viewTrigger: 'rpc-debug-route',
    },
    sender,
    rules: {
      requiredBalance: (kind, amount) => 1n + (kind === ActionKind.stake ? BigInt(amount) : 0n),
      committedFailure: (kind, code) => ({
        error: new ManagerError(
          code === ALREADY_STAKED ? 'ACTOR_EXISTS' : 'TX_REJECTED',
          `toy ${kind} failed with ${code}`,
        ),
        terminal: true,
      }),
    },
    reads: {
      height: () => Promise.resolve(chain.height),
      validators: () => Promise.resolve([...chain.rows.values()]),
      block: (height) => {
        const block = chain.blocks[height - 1];
        return block === undefined
          ? Promise.reject(new Error(`no block ${height}`))
          : Promise.resolve(block);
      },
      mempool: () => Promise.resolve({ readable: true, txs: [...chain.mempool.values()] }),
      mempoolEntry: (hash) => {
        const tx = chain.mempool.get(hash);
        return Promise.resolve({ inMempool: tx !== undefined, kind: tx?.kind });
      },
      transaction: (hash) => Promise.resolve(chain.transaction(hash)),
      balance: (address) => Promise.resolve(chain.balances.get(address) ?? 0n),
      genesisValidators: () => Promise.resolve([...(chain.blocks[0]?.signers ?? [])]),
      identity: () =>
        Promise.resolve(chain.height < 1 ? undefined : { chainId: 'toy', genesisHash: 'genesis' }),
    },
    nodeHeight: () => Promise.resolve(chain.height),
  };
}

function toyTx(request: TxRequest, hash: string): ToyTx {
  return {
    hash,
    signer: request.key.address,
    kind: request.kind,
    serviceUrl: request.serviceUrl,
    amount: request.amount,
  };
}
