// One HTTP exchange for the command-line tools (the debug CLI's control client, the localnet's p1),
// on node:http(s). Each call is a process of its own: `fetch` made that process load undici, its
// web streams and their modules — about 0.14 CPU s of a 0.28 s call (measured: a one-request
// script with fetch 0.27–0.29 CPU s, with node:http 0.13–0.15 s). A test run makes some 200 such
// calls (a pod's preStop hook is one).
import type { IncomingMessage } from 'node:http';

// node:http(s) through process.getBuiltinModule, not an ESM import: eslint.config.js says why.
const { request: httpRequest } = process.getBuiltinModule('node:http');
const { request: httpsRequest } = process.getBuiltinModule('node:https');

export interface HttpCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** Sent as is (the caller sets its content-type). */
  body?: string | undefined;
  /** Aborts the exchange, the body's reading included: the call rejects with the signal's reason. */
  signal: AbortSignal;
}

export interface HttpReply {
  status: number;
  /** The body as UTF-8. */
  text: string;
}

/**
 * Sends `call` and reads the whole answer. Rejects with the socket's error (its `code`, e.g.
 * ECONNREFUSED, and message as node:net gives them), or with `signal.reason` once it aborted.
 */
export function httpCall(call: HttpCall): Promise<HttpReply> {
  const request = call.url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    if (call.signal.aborted) {
      reject(call.signal.reason as Error);
      return;
    }
    const fail = (error: unknown): void => {
      reject(call.signal.aborted ? (call.signal.reason as Error) : (error as Error));
    };
    const onResponse = (response: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', fail);
      response.on('end', () => {
        resolve({
          status: response.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    };
    // Header values as fetch sends them: leading and trailing whitespace stripped (Fetch,
    // "normalize"). A token read from a file ends with a newline (the kustomize Secret of
    // k8s/base does), and node:http refuses a header value holding one. (One with a newline
    // inside still throws here, which rejects the call: fetch throws a TypeError.)
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(call.headers))
      headers[name] = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
    if (call.body !== undefined) headers['content-length'] = String(Buffer.byteLength(call.body));
    const req = request(
      call.url,
      { method: call.method, headers, signal: call.signal },
      onResponse,
    );
    req.on('error', fail);
    req.end(call.body);
  });
}
