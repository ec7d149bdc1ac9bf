// Shape checks for JSON that arrives from peers: nothing untyped reaches consensus or the chain.
import type { Block, BlockHeader, CommittedBlock, QuorumCert } from './block.ts';
import type { ConsensusMessage } from './consensus.ts';
import { VoteKind, type SignedNewRound, type SignedProposal, type Vote } from './votes.ts';

type Json = Record<string, unknown>;

const HEX_RE = /^[0-9a-f]*$/;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isInt = (value: unknown): value is number => Number.isSafeInteger(value);
const isHex = (value: unknown): value is string =>
  typeof value === 'string' && value.length % 2 === 0 && HEX_RE.test(value);
const isHexArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every(isHex);

const HEADER_STRINGS = [
  'chainId',
  'proposer',
  'prevBlockHash',
  'prevStateHash',
  'stateHash',
  'valSetHash',
  'nextValSetHash',
  'txsHash',
  'resultsHash',
  'droppedHash',
] as const;

export function parseBlock(value: unknown): Block | undefined {
  if (!isObject(value) || !isObject(value.header)) return undefined;
  const h = value.header;
  if (!isInt(h.height) || !isInt(h.time)) return undefined;
  if (!HEADER_STRINGS.every((name) => typeof h[name] === 'string')) return undefined;
  if (!isHexArray(value.txs) || !isHexArray(value.dropped)) return undefined;
  if (!Array.isArray(value.results) || !value.results.every(isInt)) return undefined;
  const header = Object.fromEntries(
    ['height', 'time', ...HEADER_STRINGS].map((name) => [name, h[name]]),
  ) as unknown as BlockHeader;
  return { header, txs: value.txs, results: value.results, dropped: value.dropped };
}

export function parseVote(value: unknown): Vote | undefined {
  if (!isObject(value)) return undefined;
  const { kind, height, round, blockHash, validator, signature } = value;
  if (kind !== VoteKind.prevote && kind !== VoteKind.precommit) return undefined;
  if (!isInt(height) || !isInt(round)) return undefined;
  if (blockHash !== null && !isHex(blockHash)) return undefined;
  if (!isHex(validator) || !isHex(signature)) return undefined;
  return { kind, height, round, blockHash, validator, signature };
}

function parseProposal(value: unknown): SignedProposal | undefined {
  if (!isObject(value)) return undefined;
  const { height, round, polRound, blockHash, proposer, signature } = value;
  if (!isInt(height) || !isInt(round) || !isInt(polRound)) return undefined;
  if (!isHex(blockHash) || !isHex(proposer) || !isHex(signature)) return undefined;
  return { height, round, polRound, blockHash, proposer, signature };
}

function parseNewRound(value: unknown): SignedNewRound | undefined {
  if (!isObject(value)) return undefined;
  const { height, round, validator, signature } = value;
  if (!isInt(height) || !isInt(round) || !isHex(validator) || !isHex(signature)) return undefined;
  return { height, round, validator, signature };
}

export function parseConsensusMessage(value: unknown): ConsensusMessage<Block> | undefined {
  if (!isObject(value)) return undefined;
  if (value.type === 'vote') {
    const vote = parseVote(value.vote);
    return vote === undefined ? undefined : { type: 'vote', vote };
  }
  if (value.type === 'newround') {
    const newRound = parseNewRound(value.newRound);
    return newRound === undefined ? undefined : { type: 'newround', newRound };
  }
  if (value.type !== 'proposal') return undefined;
  const proposal = parseProposal(value.proposal);
  const block = parseBlock(value.block);
  const polVotes = Array.isArray(value.polVotes) ? value.polVotes.map(parseVote) : [];
  if (proposal === undefined || block === undefined) return undefined;
  if (polVotes.some((v) => v === undefined)) return undefined;
  return { type: 'proposal', proposal, block, polVotes: polVotes as Vote[] };
}

function parseCert(value: unknown): QuorumCert | undefined {
  if (!isObject(value) || !isInt(value.height) || !isInt(value.round)) return undefined;
  if (!isHex(value.blockHash) || !Array.isArray(value.signatures)) return undefined;
  const signatures = value.signatures.map((s: unknown) =>
    isObject(s) && isHex(s.address) && isHex(s.signature)
      ? { address: s.address, signature: s.signature }
      : undefined,
  );
  if (signatures.some((s) => s === undefined)) return undefined;
  return {
    height: value.height,
    round: value.round,
    blockHash: value.blockHash,
    signatures: signatures as QuorumCert['signatures'],
  };
}

/** A committed block from a peer; its `hash` is recomputed by the caller, never trusted. */
export function parseCommittedBlock(value: unknown): Omit<CommittedBlock, 'hash'> | undefined {
  if (!isObject(value)) return undefined;
  const block = parseBlock(value.block);
  const qc = parseCert(value.qc);
  return block === undefined || qc === undefined ? undefined : { block, qc };
}

export function parseHexList(value: unknown): string[] | undefined {
  return isHexArray(value) ? value : undefined;
}
