// Signed consensus messages: votes (prevote, precommit) and proposals, and the exact bytes each
// signature covers (bound to the chain by the genesis hash, so nothing replays across chains).
import { bytesToHex, hexToBytes, type Ed25519Verify } from '../pocket/index.ts';

export const VoteKind = { prevote: 'prevote', precommit: 'precommit' } as const;
export type VoteKind = (typeof VoteKind)[keyof typeof VoteKind];

export interface Vote {
  kind: VoteKind;
  height: number;
  round: number;
  /** The block voted for; `null` is a nil vote. */
  blockHash: string | null;
  validator: string;
  /** Ed25519 signature over `voteSignBytes`, hex. */
  signature: string;
}

export interface SignedProposal {
  height: number;
  round: number;
  /** Round of the prevote quorum that justifies re-proposing a locked block; −1 for none. */
  polRound: number;
  blockHash: string;
  proposer: string;
  signature: string;
}

/**
 * A validator's announcement that it is in round `round` of `height` (V1's NewRound). Only the
 * `v1` profile sends and counts them: its leader proposes once more than 2/3 of the set besides
 * itself announced the round (consensus/hotstuff_leader.go:40, helpers.go:119-134).
 */
export interface SignedNewRound {
  height: number;
  round: number;
  validator: string;
  signature: string;
}

/** Something that signs consensus messages: a validator's key. */
export interface Signer {
  address: string;
  sign(bytes: Uint8Array): Uint8Array;
}

const encoder = new TextEncoder();

export function voteSignBytes(
  chainTag: string,
  vote: Pick<Vote, 'kind' | 'height' | 'round' | 'blockHash'>,
): Uint8Array {
  return encoder.encode(
    `localnet-consensus/v1\n${chainTag}\n${vote.kind}\n${vote.height}\n${vote.round}\n${vote.blockHash ?? 'nil'}`,
  );
}

export function proposalSignBytes(
  chainTag: string,
  proposal: Pick<SignedProposal, 'height' | 'round' | 'polRound' | 'blockHash'>,
): Uint8Array {
  return encoder.encode(
    `localnet-consensus/v1\n${chainTag}\nproposal\n${proposal.height}\n${proposal.round}\n${proposal.polRound}\n${proposal.blockHash}`,
  );
}

export function newRoundSignBytes(
  chainTag: string,
  newRound: Pick<SignedNewRound, 'height' | 'round'>,
): Uint8Array {
  return encoder.encode(
    `localnet-consensus/v1\n${chainTag}\nnewround\n${newRound.height}\n${newRound.round}`,
  );
}

export function signVote(
  chainTag: string,
  signer: Signer,
  vote: Pick<Vote, 'kind' | 'height' | 'round' | 'blockHash'>,
): Vote {
  const signature = bytesToHex(signer.sign(voteSignBytes(chainTag, vote)));
  return { ...vote, validator: signer.address, signature };
}

/** True when `signature` (hex) is `publicKey`'s signature over `bytes`. */
export function verifyHex(
  verify: Ed25519Verify,
  signature: string,
  bytes: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  if (!/^[0-9a-f]{128}$/.test(signature)) return false;
  return verify(hexToBytes(signature), bytes, publicKey);
}
