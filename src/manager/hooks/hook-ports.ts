// The two ways a hook reaches the outside — a command (execa: absolute path, args array, no shell,
// explicit env, timeout, kill-after, bounded output, cancellable) and an HTTP POST with a JSON
// body — behind ports with typed outcomes, so the runner's tests fake them.

/** How a command hook ended. */
export type CommandOutcome =
  | { readonly kind: 'exited'; readonly exitCode: number; readonly output: string }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'output-too-large' }
  /** It could not start, or a signal killed it. */
  | { readonly kind: 'not-run'; readonly reason: string };

export interface CommandRequest {
  readonly file: string;
  readonly args: readonly string[];
  /** The whole environment of the child: nothing of the manager's own is inherited. */
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export interface CommandPort {
  run(request: CommandRequest): Promise<CommandOutcome>;
}

/** How an HTTP hook ended. */
export type HttpOutcome =
  | { readonly kind: 'answered'; readonly status: number; readonly body: string }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'unreachable'; readonly reason: string };

export interface HttpRequest {
  readonly url: string;
  readonly body: unknown;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export interface HttpPort {
  post(request: HttpRequest): Promise<HttpOutcome>;
}

/** Output kept from a hook (stdout and stderr together), and the part shown in a reason. */
export const MAX_HOOK_OUTPUT_BYTES = 64 * 1024;
export const SHOWN_OUTPUT_CHARS = 300;
const KILL_AFTER_MS = 2_000;

export const execaCommandPort: CommandPort = {
  async run(request) {
    // Loaded on the first hook command, not at start: execa is 111 modules most managers never run.
    const { execa } = await import('execa');
    const result = await execa(request.file, [...request.args], {
      shell: false,
      extendEnv: false,
      env: request.env,
      stdin: 'ignore',
      all: true,
      timeout: request.timeoutMs,
      forceKillAfterDelay: KILL_AFTER_MS,
      maxBuffer: MAX_HOOK_OUTPUT_BYTES,
      cancelSignal: request.signal,
      reject: false,
      stripFinalNewline: true,
    });
    if (result.isCanceled) return { kind: 'cancelled' };
    if (result.timedOut) return { kind: 'timeout' };
    if (result.isMaxBuffer) return { kind: 'output-too-large' };
    if (result.exitCode === undefined)
      return { kind: 'not-run', reason: result.code ?? result.signal ?? 'no exit code' };
    return { kind: 'exited', exitCode: result.exitCode, output: result.all };
  },
};

export const fetchHttpPort: HttpPort = {
  async post(request) {
    const timeout = AbortSignal.timeout(request.timeoutMs);
    try {
      const answer = await fetch(request.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request.body),
        redirect: 'error',
        signal: AbortSignal.any([request.signal, timeout]),
      });
      return { kind: 'answered', status: answer.status, body: await readBounded(answer) };
    } catch (error: unknown) {
      if (request.signal.aborted) return { kind: 'cancelled' };
      if (timeout.aborted) return { kind: 'timeout' };
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { kind: 'unreachable', reason: cause?.code ?? cause?.message ?? String(error) };
    }
  },
};

/** Reads at most SHOWN_OUTPUT_CHARS of an answer's body, then drops the rest. */
async function readBounded(answer: Response): Promise<string> {
  if (answer.body === null) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = answer.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < SHOWN_OUTPUT_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text.slice(0, SHOWN_OUTPUT_CHARS);
}
