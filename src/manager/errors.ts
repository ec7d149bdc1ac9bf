// Error catalogue of the manager: a stable code, an HTTP status for the control RPC, whether a
// retry can help, and a cause. Tests assert on codes; messages never carry key material.

export interface ManagerErrorSpec {
  readonly status: number;
  /** Retrying later, with the same inputs, may succeed. */
  readonly retryable: boolean;
}

/** Every error code the manager raises, with its HTTP status and retry class. */
export const ErrorCatalogue = {
  CONFIG_INVALID: { status: 500, retryable: false },
  KEY_MISSING: { status: 409, retryable: false },
  KEY_INVALID: { status: 409, retryable: false },
  KEY_DUPLICATE: { status: 409, retryable: false },
  ORPHANED: { status: 409, retryable: false },
  BELOW_MINIMUM_SET: { status: 409, retryable: false },
  INSUFFICIENT_FUNDS: { status: 409, retryable: false },
  STAKE_BELOW_MINIMUM: { status: 409, retryable: false },
  ACTOR_EXISTS: { status: 409, retryable: false },
  TX_REJECTED: { status: 502, retryable: false },
  TX_DROPPED: { status: 502, retryable: true },
  CHAIN_UNAVAILABLE: { status: 503, retryable: true },
  KUBE_UNAVAILABLE: { status: 503, retryable: true },
  CLI_FAILED: { status: 502, retryable: true },
  CLI_TIMEOUT: { status: 504, retryable: true },
  CANCELLED: { status: 503, retryable: true },
  NOT_LEADER: { status: 503, retryable: true },
  NOT_READY: { status: 503, retryable: true },
  PAUSED: { status: 409, retryable: false },
  SCALE_IN_PROGRESS: { status: 409, retryable: false },
  SCALE_CONFLICT: { status: 409, retryable: false },
  CHAIN_UNTRUSTED: { status: 503, retryable: true },
  TOO_MANY_STREAMS: { status: 503, retryable: true },
  JOURNAL_CORRUPT: { status: 500, retryable: false },
  JOURNAL_FULL: { status: 507, retryable: true },
  JOURNAL_UNAVAILABLE: { status: 503, retryable: true },
  SCALE_UNSUPPORTED: { status: 501, retryable: false },
  SCALE_TIMEOUT: { status: 504, retryable: false },
  SCALE_BLOCKED: { status: 409, retryable: false },
  CHAIN_WOULD_HALT: { status: 409, retryable: false },
  BAD_REQUEST: { status: 400, retryable: false },
  BODY_TOO_LARGE: { status: 413, retryable: false },
  HEADERS_TOO_LARGE: { status: 431, retryable: false },
  UNAUTHORIZED: { status: 401, retryable: false },
  CROSS_ORIGIN: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  INTERNAL: { status: 500, retryable: true },
} as const satisfies Record<string, ManagerErrorSpec>;

export type ErrorCode = keyof typeof ErrorCatalogue;

/** An error of the manager. `terminal` errors park a validator until its inputs change. */
export class ManagerError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ManagerError';
    this.code = code;
    this.status = ErrorCatalogue[code].status;
    this.retryable = ErrorCatalogue[code].retryable;
    this.details = options?.details;
  }

  /** Terminal = retrying with the same inputs cannot help (controller-runtime's TerminalError). */
  get terminal(): boolean {
    return !this.retryable;
  }
}

export function isManagerError(error: unknown, code?: ErrorCode): error is ManagerError {
  return error instanceof ManagerError && (code === undefined || error.code === code);
}

/**
 * The catalogue code of any thrown value (a metric label, a log field): a ManagerError's own code,
 * INTERNAL for anything else (a raw `code` such as SQLite's `ERR_SQLITE_ERROR` or `ECONNRESET`
 * is not a catalogue code).
 */
export function catalogueCode(error: unknown): ErrorCode {
  return error instanceof ManagerError ? error.code : 'INTERNAL';
}

/** A short, safe description of any thrown value for logs and status (no stack, no input). */
export function describeError(error: unknown): string {
  if (error instanceof ManagerError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
