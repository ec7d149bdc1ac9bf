// HTTP client of the control RPC for the debug CLI: JSON calls with the bearer token, and the
// server-sent event stream.
import { CliError, ExitCode } from '../../cli/program.ts';
import { readEventStream } from './event-stream.ts';

export interface ControlClientOptions {
  server: string;
  token: string | undefined;
  timeoutMs: number;
}

export interface ApiError {
  error: { code: string; message: string };
}

/** An answer of the control RPC: status and parsed JSON body. */
export interface Answer<T> {
  status: number;
  body: T;
}

export class ControlClient {
  readonly #options: ControlClientOptions;

  constructor(options: ControlClientOptions) {
    let url: URL;
    try {
      url = new URL(options.server);
    } catch {
      throw new CliError(
        `--server is not a URL: ${JSON.stringify(options.server)}`,
        ExitCode.usage,
      );
    }
    this.#options = { ...options, server: url.href.replace(/\/+$/, '') };
  }

  get server(): string {
    return this.#options.server;
  }

  async get<T>(path: string): Promise<Answer<T>> {
    return this.#call<T>('GET', path, undefined, this.#options.timeoutMs);
  }

  async post<T>(
    path: string,
    body: unknown,
    timeoutMs = this.#options.timeoutMs,
  ): Promise<Answer<T>> {
    return this.#call<T>('POST', path, body, timeoutMs);
  }

  async #call<T>(
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number,
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#options.token !== undefined) headers.authorization = `Bearer ${this.#options.token}`;
    let response: Response;
    try {
      response = await fetch(this.#options.server + path, {
        method,
        headers,
        signal: AbortSignal.timeout(timeoutMs),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error: unknown) {
      if (error instanceof Error && error.name === 'TimeoutError') {
        throw new CliError(
          `${method} ${path}: no answer from ${this.#options.server} within ${Math.round(timeoutMs / 1000)} s`,
          ExitCode.timedOut,
        );
      }
      const reason =
        error instanceof Error && error.cause instanceof Error
          ? error.cause.message
          : String(error);
      throw new CliError(
        `cannot reach the manager at ${this.#options.server} (${reason})`,
        ExitCode.failed,
      );
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      parsed = { text };
    }
    return { status: response.status, body: parsed as T };
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
      throw new CliError(
        `cannot follow events at ${this.#options.server} (${String(error)})`,
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
  ).replace(/\s*\n\s*/g, '; ');
  const code =
    answer.status === 504
      ? ExitCode.timedOut
      : answer.status === 400
        ? ExitCode.usage
        : ExitCode.failed;
  throw new CliError(message, code);
}
