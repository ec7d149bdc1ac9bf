// What p1 prints and how it fails: `HTTP status code: N` + body for transactions, raw bodies or
// ❌ lines for queries, `Error: …` with exit 1 for anything cobra or the command rejects; and
// HTTP calls whose transport errors read like Go's net/http.
import { httpCall } from '../../cli/http-call.ts';

/** A failure p1 reports as `Error: <message>` and exit 1. Messages never carry key material. */
export class P1Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'P1Error';
  }
}

export interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

export interface HttpAnswer {
  status: number;
  body: string;
}

const TIMEOUT_MS = 30_000;

/**
 * An HTTP call as p1's generated client makes it. Transport failures throw `P1Error` worded like
 * Go's: `Post "<url>": dial tcp <host:port>: connect: connection refused`.
 */
export async function request(
  method: 'GET' | 'POST',
  url: string,
  options?: { body?: unknown; headers?: Record<string, string> },
): Promise<HttpAnswer> {
  const verb = method === 'GET' ? 'Get' : 'Post';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1] ?? '';
    throw new P1Error(`${verb} "${url}": unsupported protocol scheme "${scheme}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new P1Error(
      `${verb} "${url}": unsupported protocol scheme "${parsed.protocol.slice(0, -1)}"`,
    );
  }
  try {
    const reply = await httpCall({
      url,
      method,
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: {
        ...(options?.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options?.headers,
      },
      body: options?.body === undefined ? undefined : JSON.stringify(options.body),
    });
    return { status: reply.status, body: reply.text };
  } catch (error: unknown) {
    throw new P1Error(`${verb} "${url}": ${transportReason(error, parsed)}`);
  }
}

function transportReason(error: unknown, url: URL): string {
  const code = error instanceof Error ? ((error as { code?: string }).code ?? '') : '';
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  const address = `${url.hostname}:${port}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `dial tcp ${address}: connect: connection refused`;
    case 'ENOTFOUND':
      return `dial tcp: lookup ${url.hostname}: no such host`;
    case 'ETIMEDOUT':
      return `dial tcp ${address}: i/o timeout`;
    default:
      if (error instanceof Error && error.name === 'TimeoutError') {
        return 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
      }
      return error instanceof Error ? error.message : 'request failed';
  }
}

/** p1's answer to a transaction broadcast: status line, then the body on its own line. */
export function printBroadcast(output: Output, answer: HttpAnswer): void {
  output.out(`HTTP status code: ${answer.status}\n${answer.body}\n`);
}

const bold = (text: string) => `\u001b[1m${text}\u001b[0m`;

/** p1's query output: the raw body on 200, a ❌ report otherwise (exit 0 either way). */
export function printQuery(output: Output, answer: HttpAnswer, remote: string): void {
  if (answer.status === 200) output.out(`${answer.body}\n`);
  else {
    output.out(
      `❌ RPC reporting unhealthy status HTTP ${answer.status} @ ${bold(remote)}\n\n${answer.body}`,
    );
  }
}

/** p1's query output when the RPC cannot be reached (still exit 0, as p1 does). */
export function printUnreachable(output: Output, remote: string, error: P1Error): void {
  output.out(`❌ Unable to connect to the RPC @ ${bold(remote)}\n\nError: ${error.message}`);
}
