// Failures of RPC calls: transport (timeout, abort, unreachable) or an HTTP error answer whose
// body may carry a V1 `CODE: n, ERROR: msg`.
import { PocketError, PocketErrorCode } from '../errors.ts';
import { parseV1ErrorText } from '../v1-errors.ts';

const BODY_LIMIT = 512;

/** An RPC call that failed. `status` is set for HTTP answers; `v1Code` when the body is V1's. */
export class RpcError extends PocketError {
  readonly url: string;
  readonly status: number | undefined;
  readonly body: string | undefined;
  readonly v1Code: number | undefined;
  readonly v1Message: string | undefined;

  constructor(
    code: PocketErrorCode,
    message: string,
    details: { url: string; status?: number; body?: string; cause?: unknown },
  ) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'RpcError';
    this.url = details.url;
    this.status = details.status;
    this.body = details.body === undefined ? undefined : details.body.slice(0, BODY_LIMIT);
    const v1 = details.body === undefined ? undefined : parseV1ErrorText(details.body);
    this.v1Code = v1?.code;
    this.v1Message = v1?.detail;
  }

  /** True for failures where the node was not reached or did not answer in time. */
  get isTransport(): boolean {
    return this.status === undefined;
  }
}

/** Builds the error for a non-2xx answer. */
export function httpError(url: string, status: number, body: string): RpcError {
  const v1 = parseV1ErrorText(body);
  const summary = v1 === undefined ? oneLine(body) : `V1 error ${v1.code}: ${v1.detail}`;
  return new RpcError(PocketErrorCode.rpcHttp, `${url} answered HTTP ${status}: ${summary}`, {
    url,
    status,
    body,
  });
}

/** True when `error` is an `RpcError` carrying the given V1 code. */
export function hasV1Code(error: unknown, code: number): error is RpcError {
  return error instanceof RpcError && error.v1Code === code;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line || '(empty body)';
}
