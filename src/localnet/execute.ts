// Executing a block against the last committed state: building one from mempool candidates (the
// proposer) and re-executing a proposed or synced one to check every header field (the rest).
import type { AdmittedTransaction } from '../pocket/index.ts';
import { blockHash, listHash, type Block, type BlockHeader } from './block.ts';
import type { FidelityProfile } from './fidelity.ts';
import { applyTransaction, endBlock } from './stage-b.ts';
import { nextStateHash, WorkingState, type StateDelta, type StateReader } from './state.ts';
import { ValidatorSet } from './validator-set.ts';

/** A transaction as it went into a block. */
export interface ExecutedTx {
  tx: AdmittedTransaction;
  /** Raw bytes, hex. */
  raw: string;
  code: number;
}

/** The outcome of executing a block: what to store and apply if it commits. */
export interface Execution {
  block: Block;
  hash: string;
  txs: ExecutedTx[];
  delta: StateDelta;
  /** The active set of the next height. */
  nextSet: ValidatorSet;
}

/** The committed chain a block builds on. */
export interface ExecutionBase {
  chainId: string;
  /** Height of the block to execute (last committed + 1). */
  height: number;
  /** State after the last committed block. */
  state: StateReader;
  prevBlockHash: string;
  prevStateHash: string;
  /** The set that signs this height. */
  validators: ValidatorSet;
  /** The chain's fidelity rules (validator set, re-stake). */
  profile: FidelityProfile;
}

export interface Candidate {
  raw: string;
  tx: AdmittedTransaction;
}

export interface BuildOptions {
  candidates: Iterable<Candidate>;
  proposer: string;
  time: number;
  /** Budget for the raw transactions' total size (V1's `max_block_bytes`). */
  maxBytes: number;
}

/**
 * Builds the next block from candidates in order: each is applied (stage B); a dropped one is
 * listed in `dropped` for nodes to evict, an included one keeps its result code, and one that
 * would overflow `maxBytes` is skipped (it stays in the mempool).
 */
export function buildBlock(base: ExecutionBase, options: BuildOptions): Execution {
  const working = new WorkingState(base.state);
  const txs: ExecutedTx[] = [];
  const dropped: string[] = [];
  let bytes = 0;
  for (const candidate of options.candidates) {
    const size = candidate.raw.length / 2;
    // A transaction that does not fit waits in the mempool for a later block; smaller ones
    // behind it still go in (V1 moves it to the back and stops: uow_leader.go:94-101).
    if (bytes + size > options.maxBytes) continue;
    const outcome = applyTransaction(working, candidate.tx, base.height, base.profile);
    if (!outcome.included) {
      dropped.push(candidate.tx.hash);
      continue;
    }
    bytes += size;
    txs.push({ tx: candidate.tx, raw: candidate.raw, code: outcome.code });
  }
  return finish(base, { working, txs, dropped, proposer: options.proposer, time: options.time });
}

/** Resolves a block's raw transaction to an admitted one, or says why it cannot be in a block. */
export type ResolveTx = (raw: string) => AdmittedTransaction | string;

/**
 * Re-executes a proposed or synced block. Returns its execution when every transaction is
 * admissible, included with the stated result code, and every header field matches; otherwise
 * the reason it is invalid.
 */
export function executeBlock(
  base: ExecutionBase,
  block: Block,
  resolve: ResolveTx,
): Execution | string {
  const { header } = block;
  if (header.height !== base.height) return `height ${header.height}, expected ${base.height}`;
  if (header.chainId !== base.chainId) return `chain ${header.chainId}, expected ${base.chainId}`;
  if (header.prevBlockHash !== base.prevBlockHash) return 'previous block hash mismatch';
  if (header.prevStateHash !== base.prevStateHash) return 'previous state hash mismatch';
  if (!base.validators.has(header.proposer)) return 'proposer is not in the validator set';
  if (block.txs.length !== block.results.length) return 'results do not match transactions';
  const working = new WorkingState(base.state);
  const txs: ExecutedTx[] = [];
  const seen = new Set<string>();
  for (const [i, raw] of block.txs.entries()) {
    const tx = resolve(raw);
    if (typeof tx === 'string') return `transaction ${i}: ${tx}`;
    if (seen.has(tx.hash)) return `transaction ${i} is a duplicate`;
    seen.add(tx.hash);
    const outcome = applyTransaction(working, tx, base.height, base.profile);
    if (!outcome.included) return `transaction ${i} would be dropped: ${outcome.error.message}`;
    if (outcome.code !== block.results[i]) {
      return `transaction ${i} has result ${outcome.code}, block says ${block.results[i]}`;
    }
    txs.push({ tx, raw, code: outcome.code });
  }
  const execution = finish(base, {
    working,
    txs,
    dropped: block.dropped,
    proposer: header.proposer,
    time: header.time,
  });
  const expected = execution.block.header;
  for (const field of [
    'stateHash',
    'valSetHash',
    'nextValSetHash',
    'txsHash',
    'resultsHash',
    'droppedHash',
  ] as const) {
    if (expected[field] !== header[field]) return `${field} mismatch`;
  }
  return execution;
}

function finish(
  base: ExecutionBase,
  parts: {
    working: WorkingState;
    txs: ExecutedTx[];
    dropped: string[];
    proposer: string;
    time: number;
  },
): Execution {
  const { working, txs, dropped } = parts;
  endBlock(working, base.height);
  const delta = working.delta();
  const nextSet = ValidatorSet.fromState(working, base.profile);
  const header: BlockHeader = {
    chainId: base.chainId,
    height: base.height,
    time: parts.time,
    proposer: parts.proposer,
    prevBlockHash: base.prevBlockHash,
    prevStateHash: base.prevStateHash,
    stateHash: nextStateHash(base.prevStateHash, delta),
    valSetHash: base.validators.hash,
    nextValSetHash: nextSet.hash,
    txsHash: listHash(txs.map((t) => t.tx.hash)),
    resultsHash: listHash(txs.map((t) => t.code)),
    droppedHash: listHash(dropped),
  };
  const block: Block = {
    header,
    txs: txs.map((t) => t.raw),
    results: txs.map((t) => t.code),
    dropped: [...dropped],
  };
  return { block, hash: blockHash(header), txs, delta, nextSet };
}
