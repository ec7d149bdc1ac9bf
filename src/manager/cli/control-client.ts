// HTTP client of the control RPC for the debug CLI: JSON calls with the bearer token (on
// node:http, cli/http-call.ts says why), and the server-sent event stream (on fetch).
import { httpCall, type HttpReply } from '../../cli/http-call.ts';
import { CliError, ExitCode } from '../../cli/program.ts';
import { readEventStream } from './event-stream.ts';

export interface ControlClientOptions {
  server: string;
  token: string | undefined;
  timeoutMs: number;
  /** Added to the error when the server cannot be reached (what to check). */
  unreachableHint?: string;
  /** Added to an UNAUTHORIZED (401) answer's error: where the token came from, what to do. */
  unauthorizedHint?: string;
  /** Where the server's URL came from, for a URL that is not one (default `--server`). */
  source?: string;
}

export interface ApiError {
  error: { code: string; message: string };
}

/** An answer of the control RPC: status and parsed JSON body. */
export interface Answer<T> {
  status: number;
  body: T;
  /** What to do about this answer, when the client knows more than the server (a 401). */
  hint?: string;
}

export class ControlClient {
  readonly #options: ControlClientOptions;

  constructor(options: ControlClientOptions) {
    let url: URL | undefined;
    try {
      url = new URL(options.server);
    } catch {
      url = undefined;
    }
    // `localhost:8080` parses as a URL of the scheme `localhost:`: only http(s) is a manager's.
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new CliError(
        `${options.source ?? '--server'} is not an http(s) URL: ${JSON.stringify(options.server)}; give the manager's control RPC as http://host:port (e.g. http://127.0.0.1:8080)`,
        ExitCode.usage,
      );
    this.#options = { ...options, server: url.href.replace(/\/+$/, '') };
  }

  get server(): string {
    return this.#options.server;
  }

  async get<T>(path: string, options: { timeoutMs?: number } = {}): Promise<Answer<T>> {
    return this.#call<T>('GET', path, undefined, {
      timeoutMs: options.timeoutMs ?? this.#options.timeoutMs,
    });
  }

  /** POSTs JSON; `signal` aborts the call (the error is then the signal's reason). */
  async post<T>(
    path: string,
    body: unknown,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<Answer<T>> {
    return this.#call<T>('POST', path, body, {
      timeoutMs: options.timeoutMs ?? this.#options.timeoutMs,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }

  async #call<T>(
    method: string,
    path: string,
    body: unknown,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<Answer<T>> {
    const { timeoutMs } = options;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#options.token !== undefined) headers.authorization = `Bearer ${this.#options.token}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    let reply: HttpReply;
    try {
      reply = await httpCall({
        url: this.#options.server + path,
        method,
        headers,
        signal: options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error: unknown) {
      if (options.signal?.aborted === true) throw options.signal.reason;
      if (timeout.aborted) {
        throw new CliError(
          `${method} ${path}: no answer from ${this.#options.server} within ${Math.round(timeoutMs / 1000)} s`,
          ExitCode.timedOut,
        );
      }
      const reason = error instanceof Error ? error.message : String(error);
      const hint = this.#options.unreachableHint;
      throw new CliError(
        `cannot reach the manager at ${this.#options.server} (${reason})${hint === undefined ? '' : `; ${hint}`}`,
        ExitCode.failed,
      );
    }
    const { text } = reply;
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      parsed = { text };
    }
    const hint = reply.status === 401 ? this.#options.unauthorizedHint : undefined;
    return { status: reply.status, body: parsed as T, ...(hint === undefined ? {} : { hint }) };
  }

  /** Follows GET /v1/events, calling `onEvent` per event until `signal` aborts or the stream ends. */
  async stream(
    onEvent: (event: string, data: unknown) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.#options.token !== undefined) headers.authorization = `Bearer ${this.#options.token}`;
    let response: Response;
    try {
      response = await fetch(`${this.#options.server}/v1/events`, { headers, signal });
    } catch (error: unknown) {
      if (signal.aborted) return;
      const reason =
        error instanceof Error && error.cause instanceof Error
          ? error.cause.message
          : String(error);
      const hint = this.#options.unreachableHint;
      throw new CliError(
        `cannot follow events at ${this.#options.server} (${reason})${hint === undefined ? '' : `; ${hint}`}`,
        ExitCode.failed,
      );
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      throw new CliError(
        `cannot follow events at ${this.#options.server}: HTTP ${response.status}`,
        ExitCode.failed,
      );
    }
    try {
      for await (const { event, data } of readEventStream(
        response.body as AsyncIterable<Uint8Array>,
      ))
        onEvent(event, data);
    } catch (error: unknown) {
      if (!signal.aborted) throw error;
    }
  }
}

/** Turns a non-2xx answer into the CLI's one-line error and exit code. */
export function failOn(answer: Answer<unknown>, what: string): never {
  const error: unknown = (answer.body as { error?: unknown } | null)?.error;
  const known =
    typeof error === 'object' &&
    error !== null &&
    typeof (error as ApiError['error']).code === 'string' &&
    typeof (error as ApiError['error']).message === 'string';
  const message = (
    known
      ? `${(error as ApiError['error']).code}: ${(error as ApiError['error']).message}`
      : `${what} failed with HTTP ${answer.status}`
  )
    .replace(/\s*\n\s*/g, '; ')
    // The API's advice is for API callers; on the command line the same thing is `--force`.
    .replace(/\b([Ss])end force: true\b/g, (_, s: string) =>
      s === 'S' ? 'Pass --force' : 'pass --force',
    )
    .concat(answer.hint === undefined ? '' : `; ${answer.hint}`);
  const code =
    answer.status === 504
      ? ExitCode.timedOut
      : answer.status === 400
        ? ExitCode.usage
        : ExitCode.failed;
  throw new CliError(message, code);
}
