// Error catalogue of the manager: a stable code, an HTTP status for the control RPC, whether a
// retry can help, and a cause. Tests assert on codes; messages never carry key material. The
// catalogue is the core's; a chain declares the codes only it raises (its definition's `errors`,
// chain/registry.ts) with the same status and retry class, as data.

export interface ManagerErrorSpec {
  readonly status: number;
  /** Retrying later, with the same inputs, may succeed. */
  readonly retryable: boolean;
}

/** Every error code the manager's core raises, with its HTTP status and retry class. */
export const ErrorCatalogue = {
  CONFIG_INVALID: { status: 500, retryable: false },
  KEY_MISSING: { status: 409, retryable: false },
  KEY_INVALID: { status: 409, retryable: false },
  KEY_DUPLICATE: { status: 409, retryable: false },
  ORPHANED: { status: 409, retryable: false },
  BELOW_MINIMUM_SET: { status: 409, retryable: false },
  INSUFFICIENT_FUNDS: { status: 409, retryable: false },
  TX_REJECTED: { status: 502, retryable: false },
  TX_DROPPED: { status: 502, retryable: true },
  CHAIN_UNAVAILABLE: { status: 503, retryable: true },
  KUBE_UNAVAILABLE: { status: 503, retryable: true },
  KUBE_FORBIDDEN: { status: 500, retryable: false },
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

/** A code a chain declares beside the core's (chain/registry.ts), with its status and retry class. */
export interface DeclaredError extends ManagerErrorSpec {
  readonly code: string;
  /** What it means and what to do, for the operations reference. */
  readonly meaning: string;
}

/**
 * A chain's error codes, declared as data: each name becomes a `DeclaredError` that
 * `new ManagerError(errors.NAME, …)` takes. Names are SCREAMING_SNAKE and none is a core code.
 */
export function declareErrors<const K extends string>(
  specs: Readonly<Record<K, ManagerErrorSpec & { readonly meaning: string }>>,
): Readonly<Record<K, DeclaredError>> {
  const out = {} as Record<K, DeclaredError>;
  for (const [code, spec] of Object.entries(specs) as [K, DeclaredError][]) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(code) || Object.hasOwn(ErrorCatalogue, code))
      throw new RangeError(`a chain's error code is SCREAMING_SNAKE and not a core code: ${code}`);
    out[code] = { code, status: spec.status, retryable: spec.retryable, meaning: spec.meaning };
  }
  return out;
}

/** An error of the manager. `terminal` errors park a validator until its inputs change. */
export class ManagerError extends Error {
  /** A core code (`ErrorCode`) or one a chain declared. */
  readonly code: string;
  readonly status: number;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: ErrorCode | DeclaredError,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    const spec = typeof code === 'string' ? { code, ...ErrorCatalogue[code] } : code;
    this.name = 'ManagerError';
    this.code = spec.code;
    this.status = spec.status;
    this.retryable = spec.retryable;
    this.details = options?.details;
  }

  /** Terminal = retrying with the same inputs cannot help (controller-runtime's TerminalError). */
  get terminal(): boolean {
    return !this.retryable;
  }
}

export function isManagerError(
  error: unknown,
  code?: ErrorCode | (string & {}),
): error is ManagerError {
  return error instanceof ManagerError && (code === undefined || error.code === code);
}

/**
 * The catalogue code of any thrown value (a metric label, a log field): a ManagerError's own code
 * (the core's, or one the selected chain declared), INTERNAL for anything else (a raw `code` such
 * as SQLite's `ERR_SQLITE_ERROR` or `ECONNRESET` is not a catalogue code).
 */
export function catalogueCode(error: unknown): ErrorCode | (string & {}) {
  return error instanceof ManagerError ? error.code : 'INTERNAL';
}

/** A short, safe description of any thrown value for logs and status (no stack, no input). */
export function describeError(error: unknown): string {
  if (error instanceof ManagerError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
