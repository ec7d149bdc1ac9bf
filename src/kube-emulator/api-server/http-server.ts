// The HTTP(S) front: loopback only, health, version, discovery, OpenAPI, the control routes
// under /_emulator/, then resource requests, answered in the media type they negotiated
// (errors too, as the apiserver's ErrorNegotiated does; JSON when negotiation itself failed).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { userOf, type Identity } from '../auth/auth.ts';
import { authorizeNonResource } from '../auth/rbac.ts';
import { healthReply, RequestMetrics } from './health-metrics.ts';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  serverVersion,
} from './discovery.ts';
import { impersonationOf, type ExtraHandler } from './extra-routes.ts';
import type { FaultState } from '../faults.ts';
import {
  OPENAPI_V2_PROTOBUF,
  OPENAPI_V2_PROTOBUF_RETURNED,
  openApiDocument,
  openApiV2Protobuf,
} from '../openapi/openapi.ts';
import { defaultMedia, type OutputMedia } from './content-negotiation.ts';
import { readBody } from './request-body.ts';
import { guardControl } from './control-guard.ts';
import {
  handleResource,
  type Exchange,
  type Reply,
  type ResourceContext,
} from './resource-handler.ts';
import { encodeBody } from './response-body.ts';
import { parseResourcePath, type ResourceRoute } from './routes.ts';
import { ApiError, internalError, routeNotFound } from '../status-errors.ts';

// node:http(s) through process.getBuiltinModule, not an ESM import: eslint.config.js says why.
const { createServer: createHttpServer } = process.getBuiltinModule('node:http');
const { createServer: createHttpsServer } = process.getBuiltinModule('node:https');

/** One request as the request log keeps it (for tests that count re-watches). */
export interface LoggedRequest {
  at: number;
  method: string;
  path: string;
  query: string;
  userAgent: string;
  authorization: string | undefined;
  /** The request's Content-Type and Accept headers ('' when absent). */
  contentType: string;
  accept: string;
}

/** A control action: gets the parsed JSON body, returns what to answer (JSON). */
export type ControlAction = (body: Record<string, unknown>) => unknown;

export interface ApiServerOptions extends ResourceContext {
  faults: FaultState;
  port: number;
  tls: { cert: string; key: string } | undefined;
  /** Control actions by path below `/_emulator/` (`faults/fail-next`). */
  control: Readonly<Record<string, ControlAction>>;
  requestLogSize: number;
  now: () => number;
  /** Routes beyond CRUD (pod logs, reviews, tokens: extra-routes.ts), asked before the rest. */
  extraRoute?: (route: ResourceRoute) => ExtraHandler | undefined;
  /** Connection upgrades (exec, port-forward: stream-upgrades.ts); refused without it. */
  upgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

const CONTROL_PREFIX = '/_emulator/';

export class ApiServer {
  readonly #options: ApiServerOptions;
  readonly #server: Server;
  readonly requestLog: LoggedRequest[] = [];
  /** apiserver_request_total and apiserver_storage_objects, served at /metrics. */
  readonly metrics = new RequestMetrics();
  #url = '';

  constructor(options: ApiServerOptions) {
    this.#options = options;
    const handler = (request: IncomingMessage, response: ServerResponse): void => {
      const exchange: Exchange = { media: undefined };
      response.once('finish', () =>
        this.metrics.record(
          request.method ?? 'GET',
          new URL(request.url ?? '/', 'http://localhost'),
          response.statusCode,
        ),
      );
      this.#handle(request, response, exchange).catch((error: unknown) =>
        this.#fail(request, response, error, exchange.media),
      );
    };
    this.#server =
      options.tls === undefined
        ? createHttpServer(handler)
        : createHttpsServer(options.tls, handler);
    this.#server.keepAliveTimeout = 30_000;
    this.#server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (options.upgrade === undefined) socket.destroy();
      else options.upgrade(request, socket, head);
    });
  }

  get url(): string {
    return this.#url;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#options.port, '127.0.0.1', () => resolve());
    });
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `${this.#options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`;
    return this.#url;
  }

  /** Closes every connection, idle or busy (watch streams must already have ended). */
  dropConnections(): void {
    this.#server.closeAllConnections();
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  #log(request: IncomingMessage, url: URL): void {
    const log = this.requestLog;
    log.push({
      at: this.#options.now(),
      method: request.method ?? 'GET',
      path: url.pathname,
      query: url.search,
      userAgent: request.headers['user-agent'] ?? '',
      authorization: request.headers.authorization,
      contentType: request.headers['content-type'] ?? '',
      accept: request.headers.accept ?? '',
    });
    if (log.length > this.#options.requestLogSize)
      log.splice(0, log.length - this.#options.requestLogSize);
  }

  async #handle(
    request: IncomingMessage,
    response: ServerResponse,
    exchange: Exchange,
  ): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    this.#log(request, url);
    const open = this.#openRoute(path, url.searchParams);
    if (open !== undefined) return this.#send(response, open);
    const identity = this.#options.auth.identify(
      request.headers.authorization,
      impersonationOf(request),
    );
    if (path.startsWith(CONTROL_PREFIX)) return this.#control(request, response, path, identity);
    if (path === '/metrics') return this.#send(response, this.#metrics(identity));
    const { faults } = this.#options;
    if (faults.latencyMs > 0) await sleep(faults.latencyMs);
    const failure = faults.takeFailure();
    if (failure !== undefined) throw failure;
    const document = this.#documentRoute(path, request.headers.accept ?? '');
    if (document !== undefined) return this.#send(response, document);
    const route = parseResourcePath(path);
    if (route === undefined) throw routeNotFound(path);
    const extra = this.#options.extraRoute?.(route);
    if (extra !== undefined) {
      const answer = await extra({ route, request, response, identity });
      if (answer !== undefined) this.#send(response, answer);
      return;
    }
    const reply = await handleResource({
      context: this.#options,
      route,
      request,
      response,
      identity,
      exchange,
    });
    if (reply !== undefined) this.#send(response, reply, exchange.media);
  }

  /** Routes anyone may call: health and version. */
  #openRoute(path: string, query: URLSearchParams): Reply | undefined {
    const health = healthReply(path, query);
    if (health !== undefined) return health;
    if (path === '/version') return { status: 200, body: serverVersion };
    return undefined;
  }

  /** `/metrics` for whom RBAC lets get it (the admin; system:monitoring is not bound here). */
  #metrics(identity: Identity): Reply {
    const { auth } = this.#options;
    if (identity.type !== 'admin' && auth.rbac && !authorizeNonResource('get', '/metrics'))
      throw new ApiError({
        code: 403,
        reason: 'Forbidden',
        message: `forbidden: User "${userOf(identity).name}" cannot get path "/metrics"`,
        details: {},
      });
    return {
      status: 200,
      body: Buffer.from(this.metrics.exposition(this.#options.api.store)),
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
    };
  }

  #documentRoute(path: string, accept: string): Reply | undefined {
    if (path === '/api') return { status: 200, body: apiVersions(new URL(this.#url).host) };
    if (path === '/apis') return { status: 200, body: apiGroupList() };
    const core = /^\/api\/([^/]+)$/.exec(path);
    if (core?.[1] !== undefined) return this.#found(apiResourceList('', core[1]), path);
    const group = /^\/apis\/([^/]+)$/.exec(path);
    if (group?.[1] !== undefined) return this.#found(apiGroup(group[1]), path);
    const groupVersion = /^\/apis\/([^/]+)\/([^/]+)$/.exec(path);
    if (groupVersion?.[1] !== undefined && groupVersion[2] !== undefined) {
      return this.#found(apiResourceList(groupVersion[1], groupVersion[2]), path);
    }
    if (path === '/openapi/v2' && accept.includes(OPENAPI_V2_PROTOBUF)) {
      return { status: 200, body: openApiV2Protobuf(), contentType: OPENAPI_V2_PROTOBUF_RETURNED };
    }
    if (path.startsWith('/openapi/')) return this.#found(openApiDocument(path), path);
    return undefined;
  }

  #found(body: unknown, path: string): Reply {
    if (body === undefined) throw routeNotFound(path);
    return { status: 200, body };
  }

  async #control(
    request: IncomingMessage,
    response: ServerResponse,
    path: string,
    identity: Identity,
  ): Promise<void> {
    if (identity.type !== 'admin') throw routeNotFound(path);
    const route = path.slice(CONTROL_PREFIX.length);
    const action = this.#options.control[route];
    if (action === undefined) throw routeNotFound(path);
    guardControl(route, request.method ?? 'GET', request.headers);
    const text = request.method === 'GET' ? '' : (await readBody(request)).toString('utf8');
    const body: unknown = text.trim() === '' ? {} : JSON.parse(text);
    const result = action(
      typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {},
    );
    this.#send(response, { status: 200, body: result ?? { ok: true } });
  }

  #send(response: ServerResponse, reply: Reply, media: OutputMedia = defaultMedia): void {
    if (response.headersSent) return;
    const { contentType, body } =
      reply.body instanceof Uint8Array
        ? { contentType: reply.contentType ?? 'application/octet-stream', body: reply.body }
        : encodeBody(reply.body, media);
    response.writeHead(reply.status, {
      'Content-Type': contentType,
      'Content-Length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
      'Cache-Control': 'no-cache, private',
      ...(reply.warnings !== undefined && reply.warnings.length > 0
        ? { Warning: reply.warnings }
        : {}),
    });
    response.end(body);
  }

  #fail(
    request: IncomingMessage,
    response: ServerResponse,
    error: unknown,
    media: OutputMedia = defaultMedia,
  ): void {
    const apiError =
      error instanceof ApiError
        ? error
        : internalError(error instanceof Error ? error.message : String(error));
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const { contentType, body } = encodeBody(apiError.toStatus(), media);
    // A body the handler did not read (too large, refused early) is not drained: the
    // connection closes after the answer.
    const unread = !request.complete;
    response.writeHead(apiError.code, {
      ...apiError.headers,
      'Content-Type': contentType,
      'Content-Length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
      ...(unread ? { Connection: 'close' } : {}),
    });
    response.end(body);
    if (unread) response.on('finish', () => request.destroy());
  }
}
