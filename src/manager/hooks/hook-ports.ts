// The two ways a hook reaches the outside — a command (its own process group: absolute path, args
// array, no shell, explicit env, timeout, kill-after, bounded output, cancellable; process-group.ts)
// and an HTTP POST with a JSON body — behind ports with typed outcomes, so the runner's tests fake
// them.
import { processGroupCommandPort } from './process-group.ts';

/** How a hook's process group was stopped (it outlived its leader, or the run was ended). */
export interface GroupEnd {
  readonly pgid: number;
  /** Its live processes when the kill began. */
  readonly processes: number;
  /** Still alive when the manager stopped waiting (after SIGKILL): the hook is not run again meanwhile. */
  readonly survivors: number;
  /** SIGTERM was not enough. */
  readonly sigkill: boolean;
}

/** How a command hook ended; `group` when processes of its group had to be stopped. */
export type CommandOutcome =
  | {
      readonly kind: 'exited';
      readonly exitCode: number;
      readonly output: string;
      readonly group?: GroupEnd | undefined;
    }
  | { readonly kind: 'timeout'; readonly group?: GroupEnd | undefined }
  | { readonly kind: 'cancelled'; readonly group?: GroupEnd | undefined }
  | { readonly kind: 'output-too-large'; readonly group?: GroupEnd | undefined }
  /** Not started: processes of its previous run are still alive. */
  | { readonly kind: 'still-running'; readonly pgid: number; readonly processes: number }
  /** It could not start, or a signal killed it. */
  | { readonly kind: 'not-run'; readonly reason: string };

export interface CommandRequest {
  readonly file: string;
  readonly args: readonly string[];
  /** The whole environment of the child: nothing of the manager's own is inherited. */
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** The hook's identity (validator and hook): a run is refused while the last one's group lives. */
  readonly key?: string | undefined;
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
/** After SIGKILL, how long a group may take to be gone before the run ends anyway. */
const SETTLE_MS = 1_000;

/** Commands in their own process group, killed whole (process-group.ts). */
export const commandPort: CommandPort = processGroupCommandPort({
  maxOutputBytes: MAX_HOOK_OUTPUT_BYTES,
  killAfterMs: KILL_AFTER_MS,
  settleMs: SETTLE_MS,
});

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
