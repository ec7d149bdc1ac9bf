// Pocket V1's numbered errors (shared/core/types/error.go): codes and texts are wire contract,
// rendered as `CODE: <n>, ERROR: <message>` in RPC bodies and matched by clients.

/** The V1 error codes this project produces or interprets. */
export const V1Code = {
  invalidSigner: 3,
  decodeMessage: 4,
  unknownMessage: 6,
  newPublicKeyFromBytes: 8,
  signatureVerificationFailed: 10,
  hexDecodeFromString: 11,
  protoUnmarshal: 26,
  stringToBigInt: 40,
  emptyNonce: 30,
  emptyPublicKey: 31,
  emptySignature: 32,
  duplicateTransaction: 35,
  insufficientAmount: 41,
  minimumStake: 45,
  invalidStatus: 54,
  alreadyExists: 60,
  notPaused: 67,
  notReadyToUnpause: 68,
  notExists: 71,
  transactionAlreadyCommitted: 95,
  payloadTooBig: 125,
  stakeLess: 128,
  transactionNotCommitted: 135,
  emptySignatureStructure: 136,
} as const;
export type V1Code = (typeof V1Code)[keyof typeof V1Code];

/** A V1 protocol error: a numeric code and V1's message text. */
export class V1Error extends Error {
  readonly code: number;
  readonly detail: string;
  constructor(code: number, detail: string) {
    super(`CODE: ${code}, ERROR: ${detail}`);
    this.name = 'V1Error';
    this.code = code;
    this.detail = detail;
  }

  /** The exact text V1 writes into an RPC error body. */
  get text(): string {
    return this.message;
  }
}

/** V1 staking status numbers, as shown in error 54. */
export const StakeStatus = { unknown: 0, unstaking: 1, staked: 2, unstaked: 3 } as const;
export type StakeStatus = (typeof StakeStatus)[keyof typeof StakeStatus];

/** Constructors for each V1 error, with V1's exact wording. */
export const v1Errors = {
  invalidSigner: (address: string) =>
    new V1Error(
      V1Code.invalidSigner,
      `the signer of the message is not a proper candidate: ${address}`,
    ),
  decodeMessage: (cause: string) =>
    new V1Error(V1Code.decodeMessage, `unable to decode the message: ${cause}`),
  unknownMessage: (typeName: string) =>
    new V1Error(V1Code.unknownMessage, `the message type is unrecognized: ${typeName}`),
  newPublicKeyFromBytes: (cause: string) =>
    new V1Error(
      V1Code.newPublicKeyFromBytes,
      `unable to convert the raw bytes to a valid public key: ${cause}`,
    ),
  signatureVerificationFailed: () =>
    new V1Error(
      V1Code.signatureVerificationFailed,
      'the public key / signature combination is not valid for the msg',
    ),
  protoUnmarshal: (cause: string) =>
    new V1Error(
      V1Code.protoUnmarshal,
      `an error occurred unmarshalling the structure in protobuf: ${cause}`,
    ),
  stringToBigInt: (cause: string) =>
    new V1Error(V1Code.stringToBigInt, `error converting string to big int: ${cause}`),
  emptyNonce: () => new V1Error(V1Code.emptyNonce, 'the nonce in the transaction is empty'),
  emptyPublicKey: () => new V1Error(V1Code.emptyPublicKey, 'the public key field is empty'),
  emptySignature: () => new V1Error(V1Code.emptySignature, 'the signature field is empty'),
  emptySignatureStructure: () =>
    new V1Error(V1Code.emptySignatureStructure, 'the signature structure is empty'),
  duplicateTransaction: () =>
    new V1Error(V1Code.duplicateTransaction, 'the transaction is already found in the mempool'),
  insufficientAmount: (address: string) =>
    new V1Error(
      V1Code.insufficientAmount,
      `the account has insufficient funds to complete the operation: with address ${address}`,
    ),
  minimumStake: () =>
    new V1Error(
      V1Code.minimumStake,
      'an error occurred because the amount specified is less than the minimum stake',
    ),
  invalidStatus: (got: StakeStatus, expected: StakeStatus) =>
    new V1Error(
      V1Code.invalidStatus,
      `the staking status is not valid: ${got} expected ${expected}`,
    ),
  alreadyExists: () => new V1Error(V1Code.alreadyExists, 'the actor already exists in the state'),
  notPaused: () => new V1Error(V1Code.notPaused, 'the actor is not paused'),
  notReadyToUnpause: () =>
    new V1Error(
      V1Code.notReadyToUnpause,
      "the actor isn't ready to unpause as the minimum number of blocks hasn't passed since pausing",
    ),
  notExists: () => new V1Error(V1Code.notExists, 'the actor does not exist in the state'),
  transactionAlreadyCommitted: () =>
    new V1Error(V1Code.transactionAlreadyCommitted, 'the transaction is already committed'),
  stakeLess: () =>
    new V1Error(V1Code.stakeLess, 'the stake amount cannot be less than current amount'),
  /** V1's `ErrPayloadTooBig` (error.go:733-734), here for a transaction no block can hold. */
  payloadTooBig: (length: number, accepted: number) =>
    new V1Error(
      V1Code.payloadTooBig,
      `socket error: payload size is too big. : payload length: ${length}, accepted length: ${accepted}`,
    ),
  transactionNotCommitted: () =>
    new V1Error(V1Code.transactionNotCommitted, 'the transaction is not committed'),
} as const;

const V1_TEXT_RE = /^CODE: (\d+), ERROR: ([\s\S]*)$/;

/** Parses V1's `CODE: n, ERROR: msg` text (as found in RPC error bodies); undefined otherwise. */
export function parseV1ErrorText(text: string): V1Error | undefined {
  const match = V1_TEXT_RE.exec(text.trim());
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  return new V1Error(Number(match[1]), match[2]);
}
