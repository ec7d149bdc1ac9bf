// A small router on node:http that behaves like V1's Echo server where clients can tell:
// JSON 404/405 bodies, text/plain errors, JSON bodies ending in a newline, HEAD served by GET
// routes, and Echo's body binding rules.
import { echoBodyKind } from './echo-bind.ts';
import type {
  IncomingHttpHeaders,
  IncomingMessage,
  RequestListener,
  ServerResponse,
} from 'node:http';

export interface HttpRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface HttpResponse {
  status: number;
  body?: string;
  contentType?: string;
  /** Further headers (lowercase names). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Drop the connection without an answer: what Go's net/http does when a handler panics
   * (a V1 handler that dereferences a nil pointer). `status` is ignored.
   */
  dropConnection?: boolean;
}

export type Handler = (request: HttpRequest) => HttpResponse | Promise<HttpResponse>;

export interface Route {
  method: 'GET' | 'POST';
  path: string;
  handler: Handler;
  /**
   * The route changes the node's state with nothing a browser could not send (no signature, no
   * token): requests from a web page (`Origin`, or `Sec-Fetch-Site` other than `none`) are
   * refused with 403, and a body other than `application/json` with 415, before the handler
   * runs (`refuseBrowserRequest`).
   */
  stateChanging?: boolean;
}

const TEXT = 'text/plain; charset=UTF-8';
const JSON_TYPE = 'application/json; charset=UTF-8';

/** A text/plain answer, as Echo's `ctx.String`. */
export function text(status: number, body: string): HttpResponse {
  return { status, body, contentType: TEXT };
}

/** A JSON answer, as Echo's `ctx.JSON` (json.Encoder appends a newline). */
export function json(status: number, value: unknown): HttpResponse {
  return { status, body: `${JSON.stringify(value)}\n`, contentType: JSON_TYPE };
}

export function empty(status = 200): HttpResponse {
  return { status };
}

/** Echo's default error answer for an `echo.HTTPError`: `{"message": …}` as JSON. */
export function echoError(status: number, message: string): HttpResponse {
  return json(status, { message });
}

/** No answer at all: the connection is closed (a Go handler that panicked). */
export function dropConnection(): HttpResponse {
  return { status: 0, dropConnection: true };
}

export interface RouterOptions {
  /** Bytes of request body read at most (413 past it); `Infinity`: no limit (V1's Echo has none). */
  bodyLimit: number;
  /**
   * A GET route also answers HEAD (the default: busybox `wget --spider` probes). False: HEAD is
   * 405, as Echo v4.9.1's router matches methods exactly (V1's RPC).
   */
  headAsGet?: boolean;
  onError: (error: unknown, request: HttpRequest) => void;
}

export function createRouter(routes: readonly Route[], options: RouterOptions): RequestListener {
  const byPath = new Map<string, Map<string, Handler>>();
  const stateChanging = new Set<string>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? new Map<string, Handler>();
    methods.set(route.method, route.handler);
    byPath.set(route.path, methods);
    if (route.stateChanging === true) stateChanging.add(`${route.method} ${route.path}`);
  }
  return (req, res) => {
    void serve(req, res, { byPath, stateChanging, options });
  };
}

interface RouterContext {
  byPath: Map<string, Map<string, Handler>>;
  /** `METHOD /path` of the routes whose requests `refuseBrowserRequest` checks. */
  stateChanging: Set<string>;
  options: RouterOptions;
}

/**
 * Why a request to a state-changing route is refused, or undefined. A web page can make a
 * browser send a POST to any address, the loopback included (a node's RPC or p2p port published
 * on localhost): without a preflight when its body is `text/plain`, a form, or absent. Such a
 * request carries `Origin` (every cross-origin POST of a current browser) or `Sec-Fetch-Site`;
 * our clients (the manager, localnet-cli, the peers) send neither, and send JSON. A cross-origin
 * `text/plain` POST to `/v1/debug/reset_to_genesis` reset every validator of a localnet.
 */
export function refuseBrowserRequest(request: HttpRequest): HttpResponse | undefined {
  const site = request.headers['sec-fetch-site'];
  if (request.headers.origin !== undefined || (site !== undefined && site !== 'none')) {
    return echoError(403, 'cross-origin requests are refused');
  }
  const type = request.headers['content-type'];
  if (
    (type !== undefined || request.body.length > 0) &&
    mediaType(request) !== 'application/json'
  ) {
    // Echo's answer to a body it cannot bind (`echo.ErrUnsupportedMediaType`).
    return echoError(415, 'Unsupported Media Type');
  }
  return undefined;
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  context: RouterContext,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const method = req.method ?? 'GET';
  const methods = context.byPath.get(url.pathname);
  const headAsGet = context.options.headAsGet !== false;
  const handler = methods?.get(method === 'HEAD' && headAsGet ? 'GET' : method);
  const body = await readBody(req, context.options.bodyLimit);
  if (body === 'too large') {
    tooLarge(req, res, method, context.options.bodyLimit);
    return;
  }
  if (body === 'aborted') return;
  const request: HttpRequest = {
    method,
    path: url.pathname,
    query: url.searchParams,
    headers: req.headers,
    body,
  };
  if (methods === undefined) {
    write(res, method, json(404, { message: 'Not Found' }));
    return;
  }
  if (handler === undefined) {
    // Echo's router (v4.9.1 router.go:84-131, 688-693; echo.go:310-318): `Allow` lists the
    // path's methods after OPTIONS; OPTIONS itself is 204 with it.
    const allow = ['OPTIONS', ...allowed(methods, headAsGet)].join(', ');
    const answer = method === 'OPTIONS' ? empty(204) : json(405, { message: 'Method Not Allowed' });
    write(res, method, { ...answer, headers: { allow } });
    return;
  }
  if (context.stateChanging.has(`${method} ${url.pathname}`)) {
    const refused = refuseBrowserRequest(request);
    if (refused !== undefined) {
      write(res, method, refused);
      return;
    }
  }
  try {
    write(res, method, await handler(request));
  } catch (error: unknown) {
    context.options.onError(error, request);
    write(res, method, text(500, 'internal error'));
  }
}

function write(res: ServerResponse, method: string, response: HttpResponse): void {
  if (res.headersSent || res.destroyed) return;
  if (response.dropConnection === true) {
    res.socket?.destroy();
    return;
  }
  const headers: Record<string, string | number> = {
    ...response.headers,
    'content-length': Buffer.byteLength(response.body ?? ''),
  };
  if (response.contentType !== undefined) headers['content-type'] = response.contentType;
  res.writeHead(response.status, headers);
  res.end(method === 'HEAD' ? undefined : response.body);
}

/** A path's methods in Echo's `Allow` order (GET, HEAD, POST). */
function allowed(methods: Map<string, Handler>, headAsGet: boolean): string[] {
  const out: string[] = [];
  if (methods.has('GET')) out.push('GET');
  if (methods.has('GET') && headAsGet) out.push('HEAD');
  if (methods.has('POST')) out.push('POST');
  return out;
}

/**
 * Reads a request body up to `limit` bytes. Past the limit (or a larger declared length) it
 * stops collecting and resolves `too large` at once; the rest is left to `tooLarge`.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too large' | 'aborted'> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve('too large');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        chunks.length = 0;
        resolve('too large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve('aborted'));
  });
}

/** How much of an oversized body is read and discarded before the connection is cut. */
const DRAIN_FACTOR = 4;

/**
 * Answers an oversized body with 413 in Echo's shape (its BodyLimit middleware) and closes the
 * connection once the client has finished sending, so the client reads the answer instead of a
 * reset. A client that keeps sending past `DRAIN_FACTOR` × the limit is cut off.
 */
function tooLarge(req: IncomingMessage, res: ServerResponse, method: string, limit: number): void {
  res.shouldKeepAlive = false;
  const body = `${JSON.stringify({ message: 'Request Entity Too Large' })}\n`;
  res.writeHead(413, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(method === 'HEAD' ? undefined : body);
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_FACTOR * limit) req.socket.destroy();
  });
  req.resume();
}

/** The request's media type, lowercase, without parameters ('' when absent). */
function mediaType(request: HttpRequest): string {
  return (request.headers['content-type'] ?? '').split(';', 1).join('').trim().toLowerCase();
}

export type FieldType = 'int' | 'string';
type FieldValue<T extends FieldType> = T extends 'int' ? number : string;
export type Bound<S extends Record<string, FieldType>> = { [K in keyof S]: FieldValue<S[K]> };

/**
 * Echo's `ctx.Bind` for a JSON body into a Go struct: an empty body binds zero values; a body
 * with another content type, malformed JSON or a mistyped field fails (`undefined`, which V1
 * answers with 400 `bad request`). Field names match case-insensitively, unknown ones are
 * ignored, `null` is the zero value. `echo`: Echo v4.9.1's binder exactly (echo-bind.ts: a form
 * binds zero values, the JSON check is a case-sensitive prefix); else only JSON binds.
 */
export function bindJson<S extends Record<string, FieldType>>(
  request: HttpRequest,
  schema: S,
  echo = false,
): Bound<S> | undefined {
  const zero = Object.fromEntries(
    Object.entries(schema).map(([name, type]) => [name, type === 'int' ? 0 : '']),
  ) as Bound<S>;
  if (request.body.length === 0) return zero;
  if (echo) {
    const kind = echoBodyKind(request);
    if (kind !== 'json') return kind === 'zero' ? zero : undefined;
  } else if (mediaType(request) !== 'application/json') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(request.body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (parsed === null) return zero;
  if (typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const input = parsed as Record<string, unknown>;
  const out: Record<string, unknown> = { ...zero };
  for (const [name, type] of Object.entries(schema)) {
    const key =
      name in input ? name : Object.keys(input).find((k) => k.toLowerCase() === name.toLowerCase());
    if (key === undefined) continue;
    const value = input[key];
    if (value === null) continue;
    if (type === 'int' ? !Number.isSafeInteger(value) : typeof value !== 'string') return undefined;
    out[name] = value;
  }
  return out as Bound<S>;
}
