// Connection upgrades for the pod subresources that stream: `exec` and `portforward` (and
// `attach`, refused). Checks first, answering an ordinary HTTP error as the apiserver does (401,
// 403, 404, 400); then the upgrade kubectl asked for:
// - `Upgrade: SPDY/3.1` with `X-Stream-Protocol-Version` negotiated (apimachinery
//   httpstream.Handshake): `portforward.k8s.io`, `v4.channel.k8s.io` (every kubectl; the only
//   one before 1.30 for exec and before 1.31 for port-forward);
// - `Upgrade: websocket` (the `ws` package) with subprotocols `v5.channel.k8s.io` /
//   `v4.channel.k8s.io` for exec (kubectl 1.30+), `SPDY/3.1+portforward.k8s.io` (SPDY tunnelled
//   in binary messages, kubectl 1.31+) and `v4.channel.k8s.io` for port-forward (client-node).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { PassThrough, Writable } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Authenticator } from '../auth/auth.ts';
import { impersonationOf } from './extra-routes.ts';
import { isObject, type JsonObject } from '../json.ts';
import { type KubeletBase } from '../kubelets/kubelet.ts';
import { execOptions, runExec, type ExecChannels, type ExecOptions } from '../streams/pod-exec.ts';
import { chooseContainer } from '../streams/pod-log.ts';
import { forwardSpdy, forwardWebSocket, podPorts } from '../streams/pod-port-forward.ts';
import { targetOf, type ResourceApi } from '../resource-api.ts';
import { parseResourcePath } from './routes.ts';
import { SpdySession, type ByteTransport, type SpdyStream } from '../streams/spdy-session.ts';
import { ApiError, badRequest, internalError, notFound, routeNotFound } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import { podInfo } from '../kinds.ts';

const EXEC_SPDY = ['v4.channel.k8s.io'];
const PORTFORWARD_SPDY = ['portforward.k8s.io'];
const EXEC_WEBSOCKET = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];
const TUNNEL = 'SPDY/3.1+portforward.k8s.io';
const PORTFORWARD_WEBSOCKET = [TUNNEL, 'v4.channel.k8s.io'];
/** How long a WebSocket exec waits before it writes anything (see `#websocket`). */
const WEBSOCKET_SETTLE_MS = 100;
/** How long an exec client has to open its streams (the kubelet's stream creation timeout). */
const STREAMS_TIMEOUT_MS = 30_000;

export interface StreamUpgradeContext {
  api: ResourceApi;
  auth: Authenticator;
  kubelet: () => KubeletBase | undefined;
}

type Purpose =
  | { kind: 'exec'; pod: KubeObject; container: string; options: ExecOptions }
  | { kind: 'portforward'; pod: KubeObject; ports: number[] };

function writeHttpError(socket: Duplex, error: unknown, extraHeaders: string[] = []): void {
  const apiError =
    error instanceof ApiError
      ? error
      : internalError(error instanceof Error ? error.message : String(error));
  const body = JSON.stringify(apiError.toStatus());
  socket.end(
    [
      `HTTP/1.1 ${apiError.code} ${apiError.reason}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      ...extraHeaders,
      '',
      body,
    ].join('\r\n'),
  );
}

/** The values of a header that may come as several lines or one comma-separated line. */
function headerList(request: IncomingMessage, name: string): string[] {
  return (request.headersDistinct[name] ?? [])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

export class StreamUpgrades {
  readonly #context: StreamUpgradeContext;
  readonly #protocols = new WeakMap<IncomingMessage, string>();
  readonly #websockets: WebSocketServer;
  readonly #sockets = new Set<Duplex>();

  constructor(context: StreamUpgradeContext) {
    this.#context = context;
    this.#websockets = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      handleProtocols: (_offered, request) => this.#protocols.get(request) ?? false,
    });
  }

  /** Ends every upgraded connection (the emulator stops). */
  closeAll(): void {
    for (const ws of this.#websockets.clients) ws.terminate();
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    this.#websockets.close();
  }

  /** The `upgrade` event of the HTTP server. */
  handle(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    let purpose: Purpose;
    try {
      purpose = this.#check(request);
    } catch (error: unknown) {
      writeHttpError(socket, error);
      return;
    }
    const upgrade = (request.headers.upgrade ?? '').toLowerCase();
    if (upgrade === 'websocket') this.#websocket(request, socket, head, purpose);
    else if (upgrade.includes('spdy/3.1')) this.#spdy(request, socket, head, purpose);
    else
      writeHttpError(socket, badRequest('unable to upgrade: missing upgrade headers in request'));
  }

  /** Authentication, RBAC (`create` on the subresource), the pod and the options. */
  #check(request: IncomingMessage): Purpose {
    const { api, auth } = this.#context;
    const url = new URL(request.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '');
    const route = parseResourcePath(path);
    const subresource = route?.subresource;
    if (
      route?.info !== podInfo ||
      route.name === undefined ||
      (subresource !== 'exec' && subresource !== 'portforward' && subresource !== 'attach')
    ) {
      throw routeNotFound(path);
    }
    const identity = auth.identify(request.headers.authorization, impersonationOf(request));
    const namespace = route.namespace ?? '';
    auth.authorize(identity, {
      verb: 'create',
      info: podInfo,
      subresource,
      namespace,
      name: route.name,
    });
    const pod = api.peek(podInfo, namespace, route.name);
    if (pod === undefined) throw notFound(targetOf(podInfo, route.name));
    const query = url.searchParams;
    const phase = isObject(pod.status) ? pod.status.phase : undefined;
    if (subresource === 'portforward') {
      const spec = isObject(pod.spec) ? pod.spec : {};
      if (typeof spec.nodeName !== 'string' || spec.nodeName === '')
        throw badRequest(`pod ${route.name} does not have a host assigned`);
      return { kind: 'portforward', pod, ports: portList(query) };
    }
    if (phase === 'Succeeded' || phase === 'Failed') {
      throw badRequest(
        `cannot ${subresource} into a container in a completed pod; current phase is ${phase}`,
      );
    }
    if (subresource === 'attach') {
      throw badRequest(
        `attach is not supported by the kube-emulator: its container processes have no stdin or terminal to attach to (use kubectl logs -f, or kubectl exec)`,
      );
    }
    const options = execOptions(query);
    return { kind: 'exec', pod, container: chooseContainer(pod, options.container), options };
  }

  #spdy(request: IncomingMessage, socket: Duplex, head: Buffer, purpose: Purpose): void {
    const offered = headerList(request, 'x-stream-protocol-version');
    const accepted = purpose.kind === 'exec' ? EXEC_SPDY : PORTFORWARD_SPDY;
    if (offered.length === 0) {
      writeHttpError(
        socket,
        badRequest('unable to upgrade: X-Stream-Protocol-Version is required'),
      );
      return;
    }
    const protocol = offered.find((p) => accepted.includes(p));
    if (protocol === undefined) {
      const message = `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${accepted.join(' ')}]`;
      writeHttpError(
        socket,
        new ApiError({ code: 403, reason: 'Forbidden', message }),
        accepted.map((p) => `X-Accepted-Stream-Protocol-Versions: ${p}`),
      );
      return;
    }
    socket.write(
      [
        'HTTP/1.1 101 Switching Protocols',
        'Connection: Upgrade',
        'Upgrade: SPDY/3.1',
        `X-Stream-Protocol-Version: ${protocol}`,
        `Date: ${new Date().toUTCString()}`,
        '',
        '',
      ].join('\r\n'),
    );
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    // The HTTP server's sockets allow half-open connections: a client that is gone (its end
    // sent, or killed) is the end of the session.
    socket.once('end', () => socket.destroy());
    const transport: ByteTransport = {
      write: (chunk) => socket.write(chunk),
      close: () => socket.end(),
      onData: (listener) => socket.on('data', listener),
      onClose: (listener) => socket.once('close', listener),
    };
    const session = new SpdySession(transport);
    this.#serveSpdy(session, purpose);
    if (head.length > 0) socket.emit('data', head);
  }

  #websocket(request: IncomingMessage, socket: Duplex, head: Buffer, purpose: Purpose): void {
    const offered = headerList(request, 'sec-websocket-protocol');
    const accepted = purpose.kind === 'exec' ? EXEC_WEBSOCKET : PORTFORWARD_WEBSOCKET;
    const protocol = offered.find((p) => accepted.includes(p));
    if (protocol === undefined && (offered.length > 0 || purpose.kind === 'exec')) {
      writeHttpError(
        socket,
        badRequest(
          `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${accepted.join(' ')}]`,
        ),
      );
      return;
    }
    if (protocol !== undefined) this.#protocols.set(request, protocol);
    // `ws` accepts only RFC 7230 tokens as subprotocols, and `/` is not one; the client-go
    // tunnel's `SPDY/3.1+portforward.k8s.io` is offered as such by kubectl and gorilla/websocket
    // takes it. The offer has been read above, so `ws` is shown a plain token; the answer names
    // the protocol as offered.
    request.headers['sec-websocket-protocol'] = protocol === undefined ? undefined : 'negotiated';
    if (purpose.kind === 'portforward' && protocol !== TUNNEL && purpose.ports.length === 0) {
      writeHttpError(socket, badRequest('query parameter "port" is required'));
      return;
    }
    this.#websockets.handleUpgrade(request, socket, head, (ws) => {
      ws.on('error', () => ws.terminate());
      if (purpose.kind === 'exec') {
        // kubectl up to 1.33 starts reading the connection while it still registers its streams
        // (client-go v0.33 tools/remotecommand/websocket.go runs readDemuxLoop beside
        // stream(); later versions wait on readyChan) and drops a message for a stream not
        // registered yet ("Unknown stream id"). Behind a real apiserver the kubelet's round
        // trip hides that race; this wait stands for it.
        const channels = websocketChannels(ws, purpose.options, protocol === EXEC_WEBSOCKET[0]);
        setTimeout(() => {
          if (ws.readyState === ws.OPEN) this.#exec(purpose, channels);
        }, WEBSOCKET_SETTLE_MS);
      } else if (protocol === TUNNEL) {
        const transport: ByteTransport = {
          write: (chunk) => {
            if (ws.readyState === ws.OPEN) ws.send(chunk, { binary: true });
          },
          close: () => ws.close(1000),
          onData: (listener) => ws.on('message', (data: Buffer) => listener(data)),
          onClose: (listener) => ws.once('close', listener),
        };
        this.#serveSpdy(new SpdySession(transport), purpose);
      } else {
        forwardWebSocket(ws, purpose.pod, purpose.ports, podPorts(purpose.pod));
      }
    });
  }

  #serveSpdy(session: SpdySession, purpose: Purpose): void {
    if (purpose.kind === 'portforward') forwardSpdy(session, purpose.pod, podPorts(purpose.pod));
    else spdyChannels(session, purpose.options, (channels) => this.#exec(purpose, channels));
  }

  #exec(purpose: Extract<Purpose, { kind: 'exec' }>, channels: ExecChannels): void {
    const { pod, container, options } = purpose;
    const kubelet = this.#context.kubelet();
    const target =
      kubelet?.execTarget === undefined
        ? `the emulator's kubelet runs no process for pod ${pod.metadata.name ?? ''} (simulated mode): there is nothing to exec into`
        : kubelet.execTarget(pod.metadata.namespace ?? '', pod.metadata.name ?? '', container);
    if (typeof target === 'string') {
      const message = `error executing command in container: ${target}`;
      channels.finish({
        metadata: {},
        status: 'Failure',
        message: `Internal error occurred: ${message}`,
        reason: 'InternalError',
        details: { causes: [{ message }] },
        code: 500,
      });
      return;
    }
    runExec(target, options, channels);
  }
}

/** The ports of `?ports=` (each may hold a comma-separated list), as the kubelet reads them. */
function portList(query: URLSearchParams): number[] {
  const ports: number[] = [];
  for (const value of query.getAll('ports')) {
    if (value === '') throw badRequest('query parameter "port" cannot be empty');
    for (const text of value.split(',')) {
      const port = Number(text);
      if (!/^\d+$/.test(text) || port > 65535)
        throw badRequest(`unable to parse "${text}" as a port: invalid syntax`);
      if (port < 1) throw badRequest(`port "${text}" must be > 0`);
      ports.push(port);
    }
  }
  return ports;
}

/** Exec over SPDY (v4.channel.k8s.io): waits for the streams the options call for. */
function spdyChannels(
  session: SpdySession,
  options: ExecOptions,
  ready: (channels: ExecChannels) => void,
): void {
  const expected = new Set(['error']);
  if (options.stdin) expected.add('stdin');
  if (options.stdout) expected.add('stdout');
  if (options.stderr && !options.tty) expected.add('stderr');
  if (options.tty) expected.add('resize');
  const streams = new Map<string, SpdyStream>();
  let finished = false;
  const timer = setTimeout(() => session.close(), STREAMS_TIMEOUT_MS);
  session.once('close', () => clearTimeout(timer));
  session.on('stream', (stream) => {
    const type = stream.header('streamtype') ?? '';
    if (!expected.has(type) || streams.has(type)) {
      stream.reset();
      return;
    }
    stream.reply();
    streams.set(type, stream);
    if (type !== 'stdin') stream.resume(); // nothing to read there (resize is ignored)
    if (streams.size < expected.size) return;
    clearTimeout(timer);
    const error = streams.get('error');
    ready({
      stdin: streams.get('stdin'),
      stdout: streams.get('stdout'),
      stderr: streams.get('stderr'),
      finish: (status) => {
        finished = true;
        for (const stream of streams.values())
          if (stream !== error && !stream.writableEnded) stream.end();
        error?.end(JSON.stringify(status));
        session.close();
      },
      onGone: (listener) =>
        session.once('close', () => {
          if (!finished) listener();
        }),
    });
  });
}

/** Exec over WebSocket channels: stdin 0, stdout 1, stderr 2, error 3, resize 4; v5 closes with 255. */
function websocketChannels(ws: WebSocket, options: ExecOptions, v5: boolean): ExecChannels {
  const stdin = options.stdin ? new PassThrough() : undefined;
  let finished = false;
  const channel = (id: number): Writable =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (ws.readyState !== ws.OPEN) return done();
        ws.send(Buffer.concat([Buffer.from([id]), chunk]), { binary: true }, () => done());
      },
    });
  ws.on('message', (message: Buffer) => {
    const id = message[0];
    if (id === 0) stdin?.write(message.subarray(1));
    else if (v5 && id === 255 && message[1] === 0) stdin?.end();
  });
  ws.once('close', () => stdin?.end());
  return {
    stdin,
    stdout: options.stdout ? channel(1) : undefined,
    stderr: options.stderr && !options.tty ? channel(2) : undefined,
    finish: (status: JsonObject) => {
      finished = true;
      if (ws.readyState !== ws.OPEN) return;
      ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status))]), {
        binary: true,
      });
      ws.close(1000);
    },
    onGone: (listener) =>
      ws.once('close', () => {
        if (!finished) listener();
      }),
  };
}
