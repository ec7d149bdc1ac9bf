// A second, minimal chain behind the manager's chain port (src/manager/chain/port.ts): in memory,
// no Pocket anywhere — ids "val-1" … "val-64", keys written `toy key <name>`, addresses
// `toy1` + 38 hex digits, amounts in `utoy`, its own transaction ids, a fee of 1 and its own error
// code for "cannot stake twice". It proves the core (planner, reconciler, chain view, journal)
// names no Pocket fact: test/manager/chain-port-toy.unit.test.ts drives them through a
// stake/unstake cycle; behind HTTP (toy-chain-http.ts) `cluster-manager run` drives it end to end
// (test/manager/chain-toy-run.test.ts).
import { createHash } from 'node:crypto';
import type {
  ChainAdapter,
  PreparedTx,
  SendOutcome,
  TxRequest,
} from '../../src/manager/chain/adapter.ts';
import type {
  ChainBlock,
  ChainPort,
  ChainReads,
  ChainRules,
  CommittedTx,
  KeyCodec,
  MempoolTx,
} from '../../src/manager/chain/port.ts';
import { declareErrors, ManagerError } from '../../src/manager/errors.ts';
import { idFormatOf } from '../../src/manager/id-format.ts';
import {
  ActionKind,
  ChainStatus,
  type ActionRecord,
  type ChainCapabilities,
  type ChainKey,
  type ChainValidator,
  type IdFormatSpec,
  type StakeParams,
} from '../../src/manager/model.ts';

/** The toy's ids: "val-5", not padded. */
export const TOY_ID_SPEC: IdFormatSpec = { prefix: 'val-', width: 0, min: 1, max: 64 };
export const toyIds = idFormatOf(TOY_ID_SPEC);

/** The toy's unit: amounts are whole numbers of it. */
export const UTOY = 'utoy';

/** The error code only the toy raises. */
export const ToyErrors = declareErrors({
  TOY_ALREADY_STAKED: {
    status: 409,
    retryable: false,
    meaning: 'the toy chain refuses a stake of a row that is already staked (its result code 7)',
  },
});

/** Result code of a stake of a row that is already staked. */
export const ALREADY_STAKED = 7;

const hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** The toy chain's key: a name; its address and public key are derived from it. */
export function toyKey(name: string): ChainKey {
  return {
    address: `toy1${hex(`address ${name}`).slice(0, 38)}`,
    publicKeyHex: hex(`public ${name}`),
  };
}

/** What the keys source holds for the key named `name`. */
export function toyKeyText(name: string): string {
  return `toy key ${name}`;
}

/** The toy's keys are their names (`toy key alice`); anything else is refused with a code. */
export const toyKeys: KeyCodec = {
  parse: (text) => {
    const name = /^toy key ([\w-]{1,40})$/.exec(text)?.[1];
    if (name === undefined)
      throw Object.assign(new Error('not a toy key (toy key <name>)'), { code: 'KEY_INVALID' });
    return toyKey(name);
  },
};

export const TOY_CAPABILITIES: ChainCapabilities = {
  profile: 'toy',
  lateJoinersVote: true,
  unstakeLeavesQuorum: true,
  leaderVoteCounts: true,
};

/** A stake of `amount` utoy (the toy's stakes carry no other field). */
export function toyStake(amount: string): StakeParams {
  return {
    amount,
    denomination: UTOY,
    fields: {},
    inputs: `${amount} ${UTOY}`,
    shown: `${amount} ${UTOY}`,
  };
}

export const toyRules: ChainRules = {
  requiredBalance: (kind, stake) => 1n + (kind === ActionKind.stake ? BigInt(stake.amount) : 0n),
  committedFailure: (kind, code) => ({
    error:
      code === ALREADY_STAKED
        ? new ManagerError(ToyErrors.TOY_ALREADY_STAKED, `toy ${kind} failed with ${code}`)
        : new ManagerError('TX_REJECTED', `toy ${kind} failed with ${code}`),
    terminal: true,
  }),
};

/** A transaction as the toy's mempool holds it (and as its bytes, JSON, carry it). */
export interface ToyTx extends MempoolTx {
  readonly kind: ActionKind;
  readonly serviceUrl: string;
  readonly amount: string;
}

export class ToyChain {
  readonly blocks: ChainBlock[] = [];
  /** The rows after each height (index 0: the genesis). */
  readonly #history: ReadonlyMap<string, ChainValidator>[] = [];
  readonly rows = new Map<string, ChainValidator>();
  readonly balances = new Map<string, bigint>();
  readonly mempool = new Map<string, ToyTx>();
  readonly genesisCount: number;
  readonly #genesis: readonly string[];
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
    this.genesisCount = genesis.length;
    this.#genesis = genesis.map((key) => key.address);
    this.#history.push(new Map(this.rows));
    this.commit();
  }

  get height(): number {
    return this.blocks.length;
  }

  /** The rows as they were after block `height` (the latest for a height not reached yet). */
  rowsAt(height: number): ChainValidator[] {
    const rows = this.#history[Math.max(0, Math.min(height, this.#history.length - 1))];
    return [...(rows ?? this.rows).values()];
  }

  /** Makes a block of everything in the mempool, signed by every staked row. */
  commit(): ChainBlock {
    const height = this.blocks.length + 1;
    const txs: CommittedTx[] = [];
    for (const tx of this.mempool.values()) {
      const resultCode = this.#apply(tx, height);
      const committed = { hash: tx.hash, height, resultCode, signer: tx.signer, kind: tx.kind };
      txs.push(committed);
      this.#committed.set(tx.hash, committed);
    }
    this.mempool.clear();
    const signers = [...this.rows.values()]
      .filter((r) => r.status === ChainStatus.staked)
      .map((r) => r.address);
    const block: ChainBlock = {
      height,
      hash: `block-${height}`,
      parentHash: height === 1 ? 'genesis' : `block-${height - 1}`,
      time: height * 1000,
      signers,
      txs,
    };
    this.blocks.push(block);
    this.#history.push(new Map(this.rows));
    return block;
  }

  /** Applies one transaction: its result code (0: applied, its fee paid). */
  #apply(tx: ToyTx, height: number): number {
    const row = this.rows.get(tx.signer);
    if (tx.kind === ActionKind.stake) {
      if (row?.status === ChainStatus.staked) return ALREADY_STAKED;
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
    const cost = toyRules.requiredBalance(tx.kind, toyStake(tx.amount));
    const balance = this.balances.get(tx.signer) ?? 0n;
    this.balances.set(tx.signer, balance > cost ? balance - cost : 0n);
    return 0;
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

  /** The chain's reads, as its port (and its HTTP server) answer them. */
  reads(): ChainReads {
    return {
      height: () => Promise.resolve(this.height),
      validators: (height) => Promise.resolve(this.rowsAt(height)),
      block: (height) => {
        const block = this.blocks[height - 1];
        return block === undefined
          ? Promise.reject(new Error(`no block ${height}`))
          : Promise.resolve(block);
      },
      mempool: () => Promise.resolve({ readable: true, txs: [...this.mempool.values()] }),
      mempoolEntry: (hash) => {
        const tx = this.mempool.get(hash);
        return Promise.resolve({ inMempool: tx !== undefined, kind: tx?.kind });
      },
      transaction: (hash) => Promise.resolve(this.transaction(hash)),
      balance: (address) => Promise.resolve(this.balances.get(address) ?? 0n),
      genesisValidators: () => Promise.resolve([...this.#genesis]),
      identity: () =>
        Promise.resolve(this.height < 1 ? undefined : { chainId: 'toy', genesisHash: 'genesis' }),
    };
  }
}

/** The toy's transaction for a request: JSON, so the same bytes are the same transaction. */
export function toyTx(request: TxRequest, hash: string): ToyTx {
  return {
    hash,
    signer: request.key.address,
    kind: request.kind,
    serviceUrl: request.serviceUrl,
    amount: request.stake.amount,
  };
}

function toyPort(chain: ToyChain): ChainPort {
  const sender: ChainAdapter = {
    transport: {
      name: 'toy-json',
      resendsSameBytes: true,
      maybeSentCodes: [],
      retryableMaySend: true,
      viewTrigger: 'commits the mempool at once',
    },
    prepare(request: TxRequest): PreparedTx {
      const hash = chain.nextTxId();
      return { txHash: hash, txHex: JSON.stringify(toyTx(request, hash)) };
    },
    send(_request, prepared): Promise<SendOutcome> {
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
    ids: toyIds,
    keys: toyKeys,
    capabilities: TOY_CAPABILITIES,
    stake: toyStake('50'),
    sender,
    rules: toyRules,
    reads: chain.reads(),
    nodeHeight: (url) =>
      url.startsWith('toy://val-')
        ? Promise.resolve(chain.height)
        : Promise.reject(new Error(`no toy node at ${url}`)),
    nodeReady: (url) =>
      url.startsWith('toy://val-')
        ? Promise.resolve()
        : Promise.reject(new Error(`no toy node at ${url}`)),
  };
}
