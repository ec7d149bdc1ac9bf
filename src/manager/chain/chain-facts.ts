// What the journal's chain binding (journal/chain-binding.ts) asks of the chain, read through the
// chain port: its height, its identity, and where a transaction was committed.
import type { ChainIdentity } from '../journal/journal.ts';
import type { ChainReads } from './port.ts';

export interface ChainFacts {
  height(): Promise<number>;
  /** The chain's identity; undefined before its first block. */
  identity(): Promise<ChainIdentity | undefined>;
  /** The height a transaction was committed at; undefined when the chain does not know it. */
  committedAt(txHash: string): Promise<number | undefined>;
}

export function chainFactsOf(reads: ChainReads): ChainFacts {
  const options = { timeoutMs: 10_000 };
  return {
    height: () => reads.height(options),
    identity: () => reads.identity(),
    committedAt: async (hash) => (await reads.transaction(hash, options))?.height,
  };
}
