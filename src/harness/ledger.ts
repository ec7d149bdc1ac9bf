// The committed chain read back block by block (each block once, cached): which validator signed
// which certificate, which stake and unstake transactions committed where, and how long each
// height took. The facts every scenario asserts on.
import type { Block, PocketRpcClient } from '../pocket/index.ts';

export type TxType = 'MessageStake' | 'MessageUnstake';

/** One committed transaction of a validator key. */
export interface LedgerTx {
  height: number;
  type: TxType;
  /** The signer's id when the Secret has its key, else its address. */
  id: string;
  resultCode: number;
}

export class ChainLedger {
  readonly #chain: PocketRpcClient;
  readonly #idOf: (address: string) => string;
  readonly #blocks = new Map<number, Block>();

  constructor(chain: PocketRpcClient, idOf: (address: string) => string) {
    this.#chain = chain;
    this.#idOf = idOf;
  }

  /** A committed block (cached: committed blocks never change). */
  async block(height: number): Promise<Block> {
    const cached = this.#blocks.get(height);
    if (cached !== undefined) return cached;
    const block = await this.#chain.block(height);
    this.#blocks.set(height, block);
    return block;
  }

  /** Blocks `from`…`to` (inclusive), fetched a few at a time. */
  async blocks(from: number, to: number): Promise<Block[]> {
    const heights: number[] = [];
    for (let h = Math.max(1, from); h <= to; h++) heights.push(h);
    const out: Block[] = [];
    for (let i = 0; i < heights.length; i += 16)
      out.push(...(await Promise.all(heights.slice(i, i + 16).map((h) => this.block(h)))));
    return out;
  }

  /** Ids whose signatures are in the quorum certificate of block `height`. */
  async signers(height: number): Promise<string[]> {
    const block = await this.block(height);
    return (block.block_header.quorum_cert.threshold_sig.signatures ?? [])
      .map((s) => this.#idOf(s.address))
      .sort();
  }

  /** Every stake and unstake committed in blocks 1…`to` (default: the current height). */
  async transactions(to?: number): Promise<LedgerTx[]> {
    const height = to ?? (await this.#chain.height());
    const out: LedgerTx[] = [];
    for (const block of await this.blocks(1, height)) {
      for (const tx of block.transactions ?? []) {
        if (tx.message_type !== 'MessageStake' && tx.message_type !== 'MessageUnstake') continue;
        out.push({
          height: block.block_header.height,
          type: tx.message_type,
          id: this.#idOf(tx.signer_addr),
          resultCode: tx.result_code,
        });
      }
    }
    return out;
  }

  /** Per id, how many stakes and unstakes committed (any result code) up to `to`. */
  async counts(to?: number): Promise<Map<string, { stakes: number; unstakes: number }>> {
    const counts = new Map<string, { stakes: number; unstakes: number }>();
    for (const tx of await this.transactions(to)) {
      const entry = counts.get(tx.id) ?? { stakes: 0, unstakes: 0 };
      if (tx.type === 'MessageStake') entry.stakes++;
      else entry.unstakes++;
      counts.set(tx.id, entry);
    }
    return counts;
  }

  /**
   * The longest time between two consecutive blocks in `from`…`to`, by block timestamps, and
   * the height that took it.
   */
  async longestGap(from: number, to: number): Promise<{ ms: number; height: number }> {
    let worst = { ms: 0, height: from };
    const blocks = await this.blocks(Math.max(1, from - 1), to);
    for (let i = 1; i < blocks.length; i++) {
      const previous = Date.parse(blocks[i - 1]?.block_header.timestamp ?? '');
      const current = Date.parse(blocks[i]?.block_header.timestamp ?? '');
      const ms = current - previous;
      if (ms > worst.ms) worst = { ms, height: blocks[i]?.block_header.height ?? 0 };
    }
    return worst;
  }

  /**
   * The height in `from…to` whose certificate has the highest round: how many rounds failed
   * (a silent leader, a missing quorum) before a block committed.
   */
  async mostRounds(from: number, to: number): Promise<{ round: number; height: number }> {
    let worst = { round: 0, height: from };
    for (const block of await this.blocks(Math.max(1, from), to)) {
      const { round, height } = block.block_header.quorum_cert;
      if (round > worst.round) worst = { round, height };
    }
    return worst;
  }

  /**
   * Heights where more validators were joining than BFT can absorb: joining (staked, not yet
   * signed since) plus the stakes of the block, against fewer than half of the proven members.
   * `genesis` lists the validators staked at height 0.
   */
  async pacingViolations(genesis: readonly string[], to?: number): Promise<string[]> {
    const height = to ?? (await this.#chain.height());
    const staked = new Set(genesis);
    const proven = new Set(genesis);
    const violations: string[] = [];
    for (const block of await this.blocks(1, height)) {
      const h = block.block_header.height;
      // The stakes of block h were decided on what blocks up to h - 1 showed.
      const joiningBefore = [...staked].filter((id) => !proven.has(id)).length;
      const provenCount = proven.size;
      let stakes = 0;
      for (const tx of block.transactions ?? []) {
        if (tx.result_code !== 0) continue;
        const id = this.#idOf(tx.signer_addr);
        if (tx.message_type === 'MessageStake') {
          stakes++;
          staked.add(id);
          proven.delete(id);
        } else if (tx.message_type === 'MessageUnstake') {
          staked.delete(id);
          proven.delete(id);
        }
      }
      // The manager's rule (planner/pacing.ts): fewer than half the proven set; a set of one or
      // two proven members takes one newcomer when nobody else is joining.
      const small = provenCount >= 1 && provenCount <= 2 && joiningBefore === 0 ? 1 : 0;
      const allowed = Math.max(small, Math.floor((provenCount - 1) / 2));
      if (stakes > 0 && joiningBefore + stakes > allowed)
        violations.push(
          `height ${h}: ${stakes} stake(s) while ${joiningBefore} joining and ${provenCount} proven (at most ${allowed} may join)`,
        );
      for (const signature of block.block_header.quorum_cert.threshold_sig.signatures ?? []) {
        const id = this.#idOf(signature.address);
        if (staked.has(id)) proven.add(id);
      }
    }
    return violations;
  }
}
