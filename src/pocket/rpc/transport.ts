// The HTTP exchange under the RPC client, as a port: the client owns timeouts, the size cap and
// shape checks; a transport only moves bytes. The default is node:http(s) with the global
// keep-alive agents: about a third of fetch's CPU per call (undici's WHATWG streams and headers),
// which a manager broadcasting a burst of transactions feels. Tests pass a fake.
import type { IncomingMessage } from 'node:http';

// node:http(s) through process.getBuiltinModule, not an ESM import: eslint.config.js says why.
const { request: httpRequest } = process.getBuiltinModule('node:http');
const { request: httpsRequest } = process.getBuiltinModule('node:https');

export type HttpMethod = 'GET' | 'POST' | 'HEAD';

export interface HttpRequest {
  url: string;
  method: HttpMethod;
  /** A JSON text, sent as `application/json`; none for GET. */
  body: string | undefined;
  /** Aborts the exchange, including a body still being read. */
  signal: AbortSignal;
}

export interface HttpResponse {
  status: number;
  /** The declared `content-length`, when the server sent one. */
  contentLength: number | undefined;
  /** The body, read as it arrives: the client stops reading (and aborts) past its cap. */
  body: AsyncIterable<Uint8Array>;
}

/** Resolves once the status line and headers are in; rejects on transport failure or abort. */
export type HttpTransport = (request: HttpRequest) => Promise<HttpResponse>;

export const nodeHttpTransport: HttpTransport = ({ url, method, body, signal }) => {
  const headers =
    body === undefined
      ? undefined
      : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const onResponse = (response: IncomingMessage): void => {
      const declared = Number(response.headers['content-length']);
      resolve({
        status: response.statusCode ?? 0,
        contentLength: Number.isFinite(declared) ? declared : undefined,
        body: response,
      });
    };
    const req = request(url, { method, signal, ...(headers ? { headers } : {}) }, onResponse);
    req.on('error', reject);
    req.end(body);
  });
};
