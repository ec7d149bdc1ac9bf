// Loopback ports a test owns from the moment it learns their number. A port found free, released
// and used later can be taken in between (an outgoing connection's local port, another test's
// `listen(0)`): `net` once failed with EADDRINUSE on a test's own `occupy(base + 3)`, a port next
// to one that was free. So a test either hands a node a socket that already listens (startNode
// takes a `net.Server`, `localnet-node run` an `fd:N`), lets the node pick its port and reads it
// back, or, for a port where nothing may listen, holds it bound without listening.
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A socket listening on a port the OS picked: give `server` to a node, or `close()` it. */
export interface OwnedPort {
  port: number;
  server: Server;
  close(): Promise<void>;
}

export async function ownedPort(host = '127.0.0.1'): Promise<OwnedPort> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    server,
    close: () =>
      new Promise((resolve) => {
        if (!server.listening) resolve();
        else server.close(() => resolve());
      }),
  };
}

/**
 * A socket listening on `port` at `host`: the same port number another host of 127.0.0.0/8
 * already owns (as pods of one StatefulSet share their container ports but not their IPs).
 */
export async function ownedPortAt(host: string, port: number): Promise<OwnedPort> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port,
    server,
    close: () =>
      new Promise((resolve) => {
        if (!server.listening) resolve();
        else server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on and nothing else can take until `release()`: connections are refused. */
export interface RefusedPort {
  port: number;
  release(): Promise<void>;
}

/**
 * The local port of a connection this process keeps open to itself: bound, so no other socket
 * can listen on it (EADDRINUSE), and not listening, so a connection to it is refused
 * (ECONNREFUSED), as a closed port would answer.
 */
export async function refusedPort(): Promise<RefusedPort> {
  const owned = await ownedPort();
  const accepted: Socket[] = [];
  owned.server.removeAllListeners('connection');
  owned.server.on('connection', (socket) => accepted.push(socket));
  const client = connect(owned.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    client.once('error', reject);
    client.once('connect', () => resolve());
  });
  return {
    port: client.localPort ?? 0,
    release: async () => {
      client.destroy();
      for (const socket of accepted) socket.destroy();
      await owned.close();
    },
  };
}
