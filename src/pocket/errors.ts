// Error catalogue of the protocol library: named codes, messages that never carry key material.

/** Codes of errors raised by `src/pocket/` itself (not by the chain). */
export const PocketErrorCode = {
  keyEmpty: 'KEY_EMPTY',
  keyWhitespace: 'KEY_WHITESPACE',
  keyNotHex: 'KEY_NOT_HEX',
  keyBadLength: 'KEY_BAD_LENGTH',
  keyPublicMismatch: 'KEY_PUBLIC_MISMATCH',
  keyNotString: 'KEY_NOT_STRING',
  invalidArgument: 'INVALID_ARGUMENT',
  rpcTimeout: 'RPC_TIMEOUT',
  rpcAborted: 'RPC_ABORTED',
  rpcUnreachable: 'RPC_UNREACHABLE',
  rpcHttp: 'RPC_HTTP',
  rpcBadResponse: 'RPC_BAD_RESPONSE',
  rpcResponseTooLarge: 'RPC_RESPONSE_TOO_LARGE',
  /** V1's mempool queries answer 500 `CODE: 135` while anything is pending. */
  rpcMempoolUnreadable: 'RPC_MEMPOOL_UNREADABLE',
} as const;
export type PocketErrorCode = (typeof PocketErrorCode)[keyof typeof PocketErrorCode];

/** An error of this library. `code` is stable; assert on it, not on the message. */
export class PocketError extends Error {
  readonly code: PocketErrorCode;
  constructor(code: PocketErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PocketError';
    this.code = code;
  }
}

/** A malformed validator private key. The message says what was expected, never the key. */
export class KeyError extends PocketError {
  constructor(code: PocketErrorCode, message: string) {
    super(code, message);
    this.name = 'KeyError';
  }
}

/** True when `error` is a `PocketError` with the given code. */
export function isPocketError(error: unknown, code?: PocketErrorCode): error is PocketError {
  return error instanceof PocketError && (code === undefined || error.code === code);
}
