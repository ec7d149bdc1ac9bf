// Pocket V1's side of the chain port's reads: its RPC queries (pocket/rpc/client.ts), turned into
// the core's words. Message types become action kinds, V1's row heights become statuses, the
// block header's quorum certificate becomes the block's signers, and its Go-formatted timestamp a
// time. The core never sees a V1 shape.
import type { IndexedTransaction, PocketRpcClient, ProtocolActor } from '../../../pocket/index.ts';
import { ActionKind, ChainStatus, type ChainValidator } from '../../model.ts';
import type { ChainBlock, ChainReads, CommittedTx, ReadOptions } from '../port.ts';
import { parseChainTime } from './chain-time.ts';
import { chainIdentityOf } from './chain-identity.ts';
import { readGenesisValidators } from './genesis-set.ts';

/** V1's message type names (utility/types/proto/message.proto) of the manager's two actions. */
const MESSAGE_TYPES: Readonly<Record<ActionKind, string>> = {
  [ActionKind.stake]: 'MessageStake',
  [ActionKind.unstake]: 'MessageUnstake',
};

/** The action a V1 message type carries; undefined for every other message. */
export function kindOfMessage(messageType: string): ActionKind | undefined {
  if (messageType === MESSAGE_TYPES.stake) return ActionKind.stake;
  if (messageType === MESSAGE_TYPES.unstake) return ActionKind.unstake;
  return undefined;
}

/** V1's message type of an action. */
export function messageTypeOf(kind: ActionKind): string {
  return MESSAGE_TYPES[kind];
}

/** Row status at height `height` per V1's fields (−1 = not set). */
export function statusOf(actor: ProtocolActor, height: number): ChainStatus {
  if (actor.unstaking_height >= 0)
    return actor.unstaking_height > height ? ChainStatus.unstaking : ChainStatus.unstaked;
  if (actor.paused_height >= 0) return ChainStatus.paused;
  return ChainStatus.staked;
}

export function committedTxOf(tx: IndexedTransaction, height: number): CommittedTx {
  return {
    hash: tx.tx.hash,
    height: tx.height || height,
    resultCode: tx.result_code,
    signer: tx.signer_addr,
    kind: kindOfMessage(tx.message_type),
  };
}

/** The V1 queries the reads make (a `PocketRpcClient` is one; tests pass a fake node). */
export type PocketQueries = Pick<
  PocketRpcClient,
  'height' | 'validators' | 'block' | 'mempool' | 'mempoolEntry' | 'transaction' | 'account'
>;

/** The chain port's reads over one V1 node's RPC. */
export function pocketReads(rpc: PocketQueries): ChainReads {
  const bounded = (options: ReadOptions | undefined, timeoutMs: number) => ({
    timeoutMs: options?.timeoutMs ?? timeoutMs,
    signal: options?.signal,
  });
  return {
    height: (options) => rpc.height(bounded(options, 5_000)),
    validators: async (height, options): Promise<ChainValidator[]> => {
      const rows = await rpc.validators({ height, ...bounded(options, 10_000) });
      return rows.map((actor) => ({
        address: actor.address,
        status: statusOf(actor, height),
        stakedAmount: actor.staked_amount,
        unstakingHeight: actor.unstaking_height,
        serviceUrl: actor.service_url,
      }));
    },
    block: async (height, options): Promise<ChainBlock> => {
      const block = await rpc.block(height, bounded(options, 10_000));
      const header = block.block_header;
      return {
        height,
        hash: header.state_hash,
        parentHash: header.prev_state_hash,
        time: parseChainTime(header.timestamp),
        signers: (header.quorum_cert.threshold_sig.signatures ?? []).map((s) => s.address),
        txs: (block.transactions ?? []).map((tx) => committedTxOf(tx, height)),
        // V1 writes the header's proposer address bytes as hex (rpc/utils.go, blockToRPCBlock).
        proposer: header.proposer_addr === '' ? undefined : header.proposer_addr,
      };
    },
    mempool: async (options) => {
      const view = await rpc.mempool(bounded(options, 5_000));
      if (!view.readable) return { readable: false, txs: [] };
      return {
        readable: true,
        txs: view.transactions.map((tx) => ({
          hash: tx.tx.hash,
          signer: tx.signer_addr,
          kind: kindOfMessage(tx.message_type),
        })),
      };
    },
    mempoolEntry: async (hash, options) => {
      const entry = await rpc.mempoolEntry(hash, bounded(options, 5_000));
      if (!entry.inMempool) return { inMempool: false, kind: undefined };
      const type = entry.transaction?.message_type;
      return { inMempool: true, kind: type === undefined ? undefined : kindOfMessage(type) };
    },
    transaction: async (hash, options) => {
      const indexed = await rpc.transaction(hash, bounded(options, 10_000));
      return indexed === undefined ? undefined : committedTxOf(indexed, indexed.height);
    },
    balance: async (address, options) => {
      const account = await rpc.account(address, bounded(options, 10_000));
      return BigInt(account.coins[0]?.amount ?? '0');
    },
    genesisValidators: () => readGenesisValidators(rpc),
    identity: () => chainIdentityOf(rpc),
  };
}
