// Port-forward to a process-kubelet pod: a pod's container port is the loopback host port the
// kubelet mapped it to (the `kube-emulator.dev/host-ports` annotation). Two wire protocols, as
// the kubelet serves them (pkg/kubelet/cri/streaming/portforward): SPDY streams paired by
// `requestid` (a `data` and an `error` stream per connection, httpstream.go), and WebSocket
// channels (`v4.channel.k8s.io`: data 2i and error 2i+1 per requested port, each opened by the
// port number as 2 little-endian bytes, websocket.go).
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { isObject, objects } from '../json.ts';
import { HOST_PORTS_ANNOTATION, LOOPBACK } from '../kubelets/kubelet-process.ts';
import type { SpdySession, SpdyStream } from './spdy-session.ts';
import type { KubeObject } from '../types.ts';

/** How long the client has to open both streams of one forwarded connection (kubelet: 30 s). */
const STREAM_PAIR_TIMEOUT_MS = 30_000;

/** Finds the loopback port behind a container port of a pod; a string says why there is none. */
export type PortResolver = (port: number) => number | string;

/** The resolver for one pod, from its spec and the host ports its kubelet published. */
export function podPorts(pod: KubeObject): PortResolver {
  const name = pod.metadata.name ?? '';
  const published = pod.metadata.annotations?.[HOST_PORTS_ANNOTATION];
  return (port) => {
    if (published === undefined) {
      return `pod ${name} runs no process (the emulator's simulated kubelet): nothing listens on port ${port}`;
    }
    const spec = isObject(pod.spec) ? pod.spec : {};
    const declared = objects(spec.containers)
      .flatMap((container) => objects(container.ports))
      .find((p) => p.containerPort === port);
    const hostPorts = JSON.parse(published) as Record<string, number>;
    const key =
      declared === undefined
        ? undefined
        : typeof declared.name === 'string'
          ? declared.name
          : String(port);
    const hostPort = key === undefined ? undefined : hostPorts[key];
    if (hostPort === undefined) {
      return `port ${port} is not a container port of pod ${name}: the emulator maps only declared container ports to loopback ports`;
    }
    return hostPort;
  };
}

function forwardError(pod: KubeObject, port: number, why: string): string {
  return `error forwarding port ${port} to pod ${pod.metadata.name ?? ''}, uid ${pod.metadata.uid ?? ''}: ${why}`;
}

/**
 * Copies between a client stream and a loopback connection to the pod's port until either side
 * is done; `fail` reports a connection error. Resolves once the connection is closed.
 */
function pipeToPort(options: {
  hostPort: number;
  stream: Duplex;
  fail: (message: string) => void;
}): Promise<void> {
  const { hostPort, stream, fail } = options;
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: LOOPBACK, port: hostPort });
    let connected = false;
    socket.once('connect', () => {
      connected = true;
      socket.pipe(stream);
      stream.pipe(socket);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected)
        fail(
          `failed to connect to localhost:${hostPort} (the pod's port on the host): ${error.code ?? error.message}`,
        );
    });
    stream.once('close', () => socket.destroy());
    stream.on('error', () => socket.destroy());
    socket.once('close', () => resolve());
  });
}

interface Pair {
  data?: SpdyStream;
  error?: SpdyStream;
  timer: NodeJS.Timeout;
}

/** Serves kubectl's SPDY port-forward protocol on a session (ends when the session does). */
export function forwardSpdy(session: SpdySession, pod: KubeObject, resolve: PortResolver): void {
  const pairs = new Map<string, Pair>();
  session.on('stream', (stream) => {
    const portText = stream.header('port') ?? '';
    const type = stream.header('streamtype') ?? '';
    const port = Number(portText);
    if (
      !/^\d+$/.test(portText) ||
      port < 1 ||
      port > 65535 ||
      (type !== 'data' && type !== 'error')
    ) {
      stream.reset();
      return;
    }
    stream.reply();
    // Clients before request ids paired stream n (error) with n+2 (data).
    const requestId =
      stream.header('requestid') ?? String(type === 'error' ? stream.id : stream.id - 2);
    let pair = pairs.get(requestId);
    if (pair === undefined) {
      const created: Pair = {
        timer: setTimeout(() => {
          pairs.delete(requestId);
          created.error?.end(`(request=${requestId}) timed out waiting for streams`);
          created.data?.end();
        }, STREAM_PAIR_TIMEOUT_MS),
      };
      pair = created;
      pairs.set(requestId, pair);
    }
    if (pair[type] !== undefined) {
      stream.end(
        `error processing stream for request ${requestId}: ${type} stream already assigned`,
      );
      return;
    }
    pair[type] = stream;
    const { data, error } = pair;
    if (data === undefined || error === undefined) return;
    clearTimeout(pair.timer);
    pairs.delete(requestId);
    void forwardPair(pod, port, resolve, { data, error });
  });
  session.once('close', () => {
    for (const pair of pairs.values()) clearTimeout(pair.timer);
    pairs.clear();
  });
}

async function forwardPair(
  pod: KubeObject,
  port: number,
  resolve: PortResolver,
  streams: { data: SpdyStream; error: SpdyStream },
): Promise<void> {
  const { data, error } = streams;
  error.resume(); // the client sends nothing on it
  const hostPort = resolve(port);
  if (typeof hostPort === 'string') {
    error.end(forwardError(pod, port, hostPort));
    data.end();
    return;
  }
  await pipeToPort({
    hostPort,
    stream: data,
    fail: (message) => error.write(forwardError(pod, port, message)),
  });
  if (!data.writableEnded && !data.destroyed) data.end();
  if (!error.destroyed) error.end();
}

/**
 * Serves the WebSocket channel protocol for the ports of `?ports=` (already validated): the
 * connection closes once every forwarded connection has.
 */
export function forwardWebSocket(
  ws: WebSocket,
  pod: KubeObject,
  ports: readonly number[],
  resolve: PortResolver,
): void {
  const sockets = new Map<number, Socket>();
  const send = (channel: number, data: Buffer): void => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([channel]), data]));
  };
  const portBytes = (port: number): Buffer => {
    const bytes = Buffer.alloc(2);
    bytes.writeUInt16LE(port);
    return bytes;
  };
  const done = ports.map((port, index) => {
    send(index * 2, portBytes(port));
    send(index * 2 + 1, portBytes(port));
    const hostPort = resolve(port);
    if (typeof hostPort === 'string') {
      send(index * 2 + 1, Buffer.from(forwardError(pod, port, hostPort)));
      return Promise.resolve();
    }
    return new Promise<void>((finished) => {
      const socket = connect({ host: LOOPBACK, port: hostPort });
      sockets.set(index, socket);
      socket.on('data', (chunk: Buffer) => send(index * 2, chunk));
      socket.on('error', (error: NodeJS.ErrnoException) =>
        send(
          index * 2 + 1,
          Buffer.from(
            forwardError(
              pod,
              port,
              `failed to connect to localhost:${hostPort}: ${error.code ?? error.message}`,
            ),
          ),
        ),
      );
      socket.once('close', () => finished());
    });
  });
  ws.on('message', (message: Buffer) => {
    const channel = message[0];
    if (channel === undefined || channel % 2 !== 0) return;
    sockets.get(channel / 2)?.write(message.subarray(1));
  });
  ws.once('close', () => {
    for (const socket of sockets.values()) socket.destroy();
  });
  void Promise.all(done).then(() => ws.close(1000));
}
