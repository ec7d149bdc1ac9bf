// Blocks on the wire between nodes: header, transactions, result codes, dropped hashes; the
// block hash (SHA-256 over the header in a fixed field order) and the quorum certificate.
import { createHash } from 'node:crypto';

export interface BlockHeader {
  chainId: string;
  height: number;
  /** Proposer's clock, ms since the epoch. */
  time: number;
  /** Address of the validator that built the block. */
  proposer: string;
  prevBlockHash: string;
  prevStateHash: string;
  /** State after the block (see `nextStateHash`). */
  stateHash: string;
  /** Hash of the validator set that signs this block. */
  valSetHash: string;
  /** Hash of the set that signs the next block (after this block's changes). */
  nextValSetHash: string;
  txsHash: string;
  resultsHash: string;
  droppedHash: string;
}

/** A proposed block. `results[i]` is the V1 result code of `txs[i]`. */
export interface Block {
  header: BlockHeader;
  /** Raw transactions, hex, in execution order. */
  txs: string[];
  results: number[];
  /** Hashes of mempool transactions the proposer dropped at stage B (nodes evict them). */
  dropped: string[];
}

/** One validator's precommit signature in a certificate. */
export interface CertSignature {
  address: string;
  signature: string;
}

/** Precommits from more than 2/3 of the block's validator set, for one block hash and round. */
export interface QuorumCert {
  height: number;
  round: number;
  blockHash: string;
  signatures: CertSignature[];
}

export interface CommittedBlock {
  block: Block;
  hash: string;
  qc: QuorumCert;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Hash of a list of strings (tx hashes, result codes, dropped hashes). */
export function listHash(items: readonly (string | number)[]): string {
  return sha256(items.join(','));
}

/** The block's identity: SHA-256 of its header fields in a fixed order. */
export function blockHash(header: BlockHeader): string {
  return sha256(
    JSON.stringify([
      header.chainId,
      header.height,
      header.time,
      header.proposer,
      header.prevBlockHash,
      header.prevStateHash,
      header.stateHash,
      header.valSetHash,
      header.nextValSetHash,
      header.txsHash,
      header.resultsHash,
      header.droppedHash,
    ]),
  );
}
