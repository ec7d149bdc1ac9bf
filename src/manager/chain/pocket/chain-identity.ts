// Which chain the manager talks to, as the journal's binding needs it: block 1's `network_id`
// and `prev_state_hash`, and where a transaction was committed. On V1 that hash is the genesis
// state's: the genesis is committed as block 0 (persistence/genesis.go:135-137, commit 58c9b650),
// a block's hash is its StateHash (persistence/block.go:125), and block 1 takes its
// PrevStateHash from block 0's hash (persistence/block.go:65). The stand-in does the same.
import type { PocketRpcClient } from '../../../pocket/index.ts';
import type { ChainIdentity } from '../../journal/journal.ts';

/** Block 1's `network_id` and `prev_state_hash`; undefined before block 1. */
export async function chainIdentityOf(
  rpc: Pick<PocketRpcClient, 'height' | 'block'>,
): Promise<ChainIdentity | undefined> {
  const options = { timeoutMs: 10_000 };
  if ((await rpc.height(options)) < 1) return undefined;
  const header = (await rpc.block(1, options)).block_header;
  return { chainId: header.network_id, genesisHash: header.prev_state_hash };
}
