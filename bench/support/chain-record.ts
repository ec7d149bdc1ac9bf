// What the chain itself recorded of a scale-up, read back from its blocks as the manager reads them
// (src/manager/chain/pocket/pocket-reads.ts): when each block was proposed, and how long the chain
// took to hear each newcomer (blocks from the block that committed its stake to the first block
// whose quorum certificate carries its signature).
//
// The proposal time is the header's time as the localnet stand-in writes it: the moment its
// proposer built the block from its mempool (src/localnet/node.ts, #buildBlock), so a transaction
// that reaches it later waits for the next block. V1 reaps the mempool the same way, when the
// leader prepares its proposal (consensus/hotstuff_leader.go:401, CreateProposalBlock), but stamps
// the header when each node prepares the block (persistence/block.go:85, marked TECHDEBT there):
// this reads the stand-in's record, and the bench runs only against the stand-in.
import { parseChainTime } from '../../src/manager/chain/pocket/chain-time.ts';
import type { PocketRpcClient } from '../../src/pocket/index.ts';

export interface ChainRecord {
  /** Proposal time of each height read (epoch ms). */
  readonly proposedAt: ReadonlyMap<number, number>;
  /** Per address asked for (same order): the first-vote lag in blocks, or undefined when the
   * blocks read do not show both its stake and a signature after it. */
  readonly firstVoteLags: readonly (number | undefined)[];
}

/** Reads blocks `fromHeight` … `toHeight`. */
export async function readChainRecord(
  chain: PocketRpcClient,
  fromHeight: number,
  toHeight: number,
  addresses: readonly string[],
): Promise<ChainRecord> {
  const proposedAt = new Map<number, number>();
  const staked = new Map<string, number>();
  const signed = new Map<string, number>();
  for (let height = fromHeight; height <= toHeight; height++) {
    const block = await chain.block(height);
    const time = parseChainTime(block.block_header.timestamp);
    if (time !== undefined) proposedAt.set(height, time);
    for (const tx of block.transactions ?? [])
      if (tx.message_type === 'MessageStake' && tx.result_code === 0 && !staked.has(tx.signer_addr))
        staked.set(tx.signer_addr, height);
    for (const { address } of block.block_header.quorum_cert.threshold_sig.signatures ?? []) {
      const stakeHeight = staked.get(address);
      if (stakeHeight !== undefined && height > stakeHeight && !signed.has(address))
        signed.set(address, height);
    }
  }
  const firstVoteLags = addresses.map((address) => {
    const at = signed.get(address);
    const stake = staked.get(address);
    return at === undefined || stake === undefined ? undefined : at - stake;
  });
  return { proposedAt, firstVoteLags };
}
