// A journal is bound to the chain it was written for. At start, before the manager acts, its
// recorded chain is compared with the chain's: a journal of another chain (a new devnet, a chain
// reset to a new genesis) is set aside — renamed, never deleted — and a new one used, so stake
// heights, terminal failures, open actions and a pause of a dead chain do not carry over.
import type { ChainFacts } from '../chain/chain-facts.ts';
import type { ActionRecord } from '../model.ts';
import type { ChainIdentity, Journal } from './journal.ts';

export type BindingOutcome =
  /** The journal was written for this chain. */
  | { kind: 'same'; chain: ChainIdentity }
  /** The journal was new (or had no chain yet) and is now bound to this chain. */
  | { kind: 'bound'; chain: ChainIdentity }
  /** The chain has no block yet: an empty journal is used and bound once block 1 exists. */
  | { kind: 'pending' }
  /** The journal was of another chain: set aside (renamed to `setAsideTo`) and a new one used. */
  | { kind: 'set-aside'; reason: string; setAsideTo: string; chain: ChainIdentity | undefined };

function describe(chain: ChainIdentity): string {
  return `chain ${chain.chainId}, genesis ${chain.genesisHash.slice(0, 16)}…`;
}

/**
 * Checks `journal` against the chain and binds, keeps or sets it aside. A journal that recorded
 * no chain (schema 0, or written before block 1) but holds actions is judged by them: its newest
 * committed transaction must be on this chain at the height it recorded.
 */
export async function bindJournalToChain(
  journal: Journal,
  chain: ChainFacts,
): Promise<BindingOutcome> {
  const identity = await chain.identity();
  const recorded = journal.chain();
  if (recorded !== undefined) {
    if (
      identity !== undefined &&
      identity.chainId === recorded.chainId &&
      identity.genesisHash === recorded.genesisHash
    )
      return { kind: 'same', chain: identity };
    const reason =
      identity === undefined
        ? `it was written for ${describe(recorded)}, and this chain has no block yet`
        : `it was written for ${describe(recorded)}; this is ${describe(identity)}`;
    return setAside(journal, reason, identity);
  }
  const foreign = await foreignEvidence(journal, chain);
  if (foreign !== undefined) return setAside(journal, foreign, identity);
  if (identity === undefined) return { kind: 'pending' };
  journal.bindChain(identity);
  return { kind: 'bound', chain: identity };
}

function setAside(
  journal: Journal,
  reason: string,
  identity: ChainIdentity | undefined,
): BindingOutcome {
  const setAsideTo = journal.setAside('other-chain');
  if (identity !== undefined) journal.bindChain(identity);
  return { kind: 'set-aside', reason, setAsideTo, chain: identity };
}

/** Why a journal without a recorded chain cannot be this chain's; undefined when it can be. */
async function foreignEvidence(journal: Journal, chain: ChainFacts): Promise<string | undefined> {
  if (journal.count() === 0) return undefined;
  const height = await chain.height();
  const committed = newestCommitted(journal);
  if (committed?.committedHeight !== undefined && committed.txHash !== undefined) {
    if (committed.committedHeight > height)
      return `its action ${committed.seq} committed at height ${committed.committedHeight}, and this chain is at ${height}`;
    const at = await chain.committedAt(committed.txHash);
    return at === committed.committedHeight
      ? undefined
      : `its transaction ${committed.txHash.slice(0, 12)}… (action ${committed.seq}, height ${committed.committedHeight}) is not on this chain`;
  }
  const highest = Math.max(
    ...journal.page({ limit: 1000 }).map((a) => a.sentHeight ?? a.preparedHeight),
  );
  return highest > height
    ? `its actions were prepared at height ${highest}, and this chain is at ${height}`
    : undefined;
}

function newestCommitted(journal: Journal): ActionRecord | undefined {
  for (let before: number | undefined; ;) {
    const page = journal.page({ limit: 200, before });
    const found = page.find((a) => a.state === 'committed' && a.txHash !== undefined);
    if (found !== undefined) return found;
    if (page.length < 200) return undefined;
    before = page.at(-1)?.seq;
  }
}
