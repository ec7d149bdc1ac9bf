// Transactions: canonical signable bytes, signing, hashing, and V1's stage-A admission checks.
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import { bytesToHex } from './bytes.ts';
import { sha3Hex, verifyEd25519, type Ed25519Verify } from './crypto.ts';
import { SignatureSchema, TransactionSchema, type Transaction } from './gen/core/transaction_pb.js';
import { addressHexOf, type ValidatorKey } from './keys.ts';
import { packMessage, unpackMessage, UnpackError, type PocketMessage } from './messages.ts';
import { randomNonce } from './nonce.ts';
import { v1Errors, V1Error } from './v1-errors.ts';

export type { Transaction };

/** A signed transaction ready to broadcast. */
export interface SignedTransaction {
  /** The serialized `core.Transaction`. */
  bytes: Uint8Array;
  /** `bytes` as lowercase hex: the `raw_hex_bytes` of a broadcast. */
  hex: string;
  /** Hex SHA3-256 of `bytes`: how the chain indexes the transaction. */
  hash: string;
  nonce: string;
  /** Address of the signing key, hex. */
  signer: string;
  message: PocketMessage;
}

/**
 * The bytes V1 signs: the deterministic encoding of the transaction with `signature` unset,
 * i.e. fields 1 (`msg`) and 2 (`nonce`) in order. `Any.value` is kept verbatim.
 */
export function signableBytes(tx: { msg?: Any | undefined; nonce: string }): Uint8Array {
  return toBinary(
    TransactionSchema,
    create(TransactionSchema, { ...(tx.msg ? { msg: tx.msg } : {}), nonce: tx.nonce }),
  );
}

/**
 * The bytes a received transaction's signature must cover, as V1 computes them
 * (`shared/core/types/transaction.go:109-115`): a clone of the decoded transaction with its
 * signature unset, marshalled again. Go's protobuf keeps unknown fields through `Clone` and
 * writes them after the known ones, so a field appended to signed bytes (`…7801`) changes
 * what must have been signed, and the signature no longer verifies.
 */
export function receivedSignBytes(tx: Transaction): Uint8Array {
  return toBinary(TransactionSchema, { ...tx, signature: undefined });
}

/** Hex SHA3-256 of a serialized transaction (V1 `TxHash`). */
export function transactionHash(bytes: Uint8Array): string {
  return sha3Hex(bytes);
}

export interface SignOptions {
  message: PocketMessage;
  key: ValidatorKey;
  /** Decimal uint64; a CSPRNG nonce when omitted. */
  nonce?: string | undefined;
}

/** Builds, signs and serializes a transaction exactly as V1's client does. */
export function signTransaction(options: SignOptions): SignedTransaction {
  const nonce = options.nonce ?? randomNonce();
  const msg = packMessage(options.message);
  const signature = options.key.sign(signableBytes({ msg, nonce }));
  const tx = create(TransactionSchema, {
    msg,
    nonce,
    signature: create(SignatureSchema, { publicKey: options.key.publicKey, signature }),
  });
  const bytes = toBinary(TransactionSchema, tx);
  return {
    bytes,
    hex: bytesToHex(bytes),
    hash: transactionHash(bytes),
    nonce,
    signer: options.key.address,
    message: options.message,
  };
}

/** A transaction that passed stage A: decoded, well-formed, correctly signed. */
export interface AdmittedTransaction {
  tx: Transaction;
  message: PocketMessage;
  /** Hex SHA3-256 of the bytes as received (the mempool's key). */
  hash: string;
  nonce: string;
  signerPublicKey: Uint8Array;
  /** Address of `signerPublicKey`, hex. */
  signerAddress: string;
}

export interface AdmitOptions {
  /** The Ed25519 verifier (default: noble's `verifyEd25519`; nodes pass `verifyEd25519Native`). */
  verify?: Ed25519Verify;
  /**
   * Also require the bytes to be the canonical encoding of what they decode to: no unknown
   * fields anywhere, fields in order (26 otherwise). V1 does not check this, so a re-ordered
   * encoding, or an unknown field inside the unsigned `signature` struct, is a new transaction
   * hash with a valid signature there: a replay. Default false (V1's rule).
   */
  canonical?: boolean;
}

/**
 * V1's stateless admission (`HandleTransaction` after the duplicate checks): protobuf decode (26),
 * then `ValidateBasic` in V1's order: nonce (30), signature struct (136), signature (32), public
 * key present (31) and 32 bytes (8), message decodable (4), signature valid over the sign bytes
 * V1 computes, unknown fields included (10; see `receivedSignBytes`). With `canonical`, a
 * non-canonical encoding is then refused (26). Throws the matching `V1Error`; performs no
 * stateful check.
 */
export function admitTransaction(bytes: Uint8Array, options?: AdmitOptions): AdmittedTransaction {
  const verify = options?.verify ?? verifyEd25519;
  const tx = decodeTransaction(bytes);
  if (tx.nonce === '') throw v1Errors.emptyNonce();
  const sig = tx.signature;
  if (sig === undefined) throw v1Errors.emptySignatureStructure();
  if (sig.signature.length === 0) throw v1Errors.emptySignature();
  if (sig.publicKey.length === 0) throw v1Errors.emptyPublicKey();
  if (sig.publicKey.length !== 32) {
    throw v1Errors.newPublicKeyFromBytes(
      `the public key length is not valid: expected 32, got ${sig.publicKey.length}`,
    );
  }
  const message = decodeTransactionMessage(tx.msg);
  if (!verify(sig.signature, receivedSignBytes(tx), sig.publicKey)) {
    throw v1Errors.signatureVerificationFailed();
  }
  if (options?.canonical === true && !isCanonical(tx, bytes)) {
    throw v1Errors.protoUnmarshal(
      'the transaction is not in canonical form (unknown fields or fields out of order)',
    );
  }
  return {
    tx,
    message,
    hash: transactionHash(bytes),
    nonce: tx.nonce,
    signerPublicKey: sig.publicKey,
    signerAddress: addressHexOf(sig.publicKey),
  };
}

/** True when `bytes` are exactly the encoding of `tx`'s known fields in field order. */
function isCanonical(tx: Transaction, bytes: Uint8Array): boolean {
  const parts = [tx, tx.msg, tx.signature] as ({ $unknown?: unknown[] } | undefined)[];
  if (parts.some((part) => (part?.$unknown?.length ?? 0) > 0)) return false;
  const again = toBinary(TransactionSchema, tx);
  return again.length === bytes.length && again.every((byte, i) => byte === bytes[i]);
}

/** Decodes `core.Transaction` bytes; malformed wire data is V1 error 26. */
export function decodeTransaction(bytes: Uint8Array): Transaction {
  try {
    return fromBinary(TransactionSchema, bytes);
  } catch (error: unknown) {
    throw v1Errors.protoUnmarshal(error instanceof Error ? error.message : String(error));
  }
}

/** Unpacks a transaction's `Any`; unknown or undecodable messages are V1 error 4. */
export function decodeTransactionMessage(msg: Any | undefined): PocketMessage {
  if (msg === undefined) throw v1Errors.decodeMessage('proto: invalid empty type URL');
  try {
    return unpackMessage(msg);
  } catch (error: unknown) {
    if (error instanceof UnpackError) throw v1Errors.decodeMessage(error.message);
    throw error;
  }
}

/** True when `error` is a V1 admission error rather than a bug. */
export function isAdmissionError(error: unknown): error is V1Error {
  return error instanceof V1Error;
}
