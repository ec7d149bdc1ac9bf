// Starting a node: the node itself plus its RPC and p2p servers, listening; and stopping it all.
import type { Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import { LocalnetNode, type LocalnetNodeOptions } from './node.ts';
import { createP2pListener } from './p2p-server.ts';
import { createRpcListener } from './rpc-server.ts';

// node:http(s) through process.getBuiltinModule, not an ESM import: eslint.config.js says why.
const { createServer } = process.getBuiltinModule('node:http');

/**
 * Where a server listens: a port (0: one the OS picks), an inherited socket that is already
 * listening (`{fd}`: how `localnet-node net` hands each node the ports it holds), or a listening
 * `net.Server` of this process, whose socket the node takes over (Node's `server.listen(handle)`)
 * and closes when it stops. The last two let a caller own a port from before the genesis names it
 * until the node serves on it: a port picked, released and listened on later can be taken
 * meanwhile (an outgoing connection's local port, another program's `listen(0)`).
 */
export type ListenTarget = number | { fd: number } | NetServer;

export interface StartNodeOptions extends Omit<LocalnetNodeOptions, 'logger'> {
  /** Interface to listen on (both servers); unused for a socket that is already listening. */
  host: string;
  rpcPort: ListenTarget;
  p2pPort: ListenTarget;
  logger: Logger;
}

export interface RunningNode {
  node: LocalnetNode;
  /** `http://host:port` of the RPC. */
  rpcUrl: string;
  /** `host:port` of the p2p server (what a validator stakes as its service URL). */
  p2pAddress: string;
  stop(): Promise<void>;
}

/** Starts a node and both of its servers; resolves once both listen. */
export async function startNode(options: StartNodeOptions): Promise<RunningNode> {
  const node = new LocalnetNode(options);
  // Idle keep-alive connections stay open well past a client's own idle timeout (Node's global
  // agent drops a free socket after 5 s): with both at 5 s, a client reusing a socket the server
  // was closing got ECONNRESET ("socket hang up") on a height query, seen in CI under load. Go's
  // net/http keeps an idle connection until its IdleTimeout, which V1's RPC never sets (echo's
  // `e.Start`, rpc/server.go:66 at 58c9b650).
  const keepAlive = { keepAliveTimeout: 65_000, headersTimeout: 66_000 };
  const rpc = createServer(keepAlive, createRpcListener(node, options.logger));
  const p2p = createServer(keepAlive, createP2pListener(node, options.logger));
  try {
    await listen(rpc, options.host, options.rpcPort);
    await listen(p2p, options.host, options.p2pPort);
  } catch (error: unknown) {
    await Promise.all([close(rpc), close(p2p)]);
    node.stop();
    throw error;
  }
  node.start();
  const display = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const rpcPort = (rpc.address() as AddressInfo).port;
  const p2pPort = (p2p.address() as AddressInfo).port;
  options.logger.info(
    {
      address: node.address ?? null,
      role: node.address === undefined ? 'full node' : 'validator',
      rpcPort,
      p2pPort,
      pacemaker: node.pacemakerMode,
      chainId: node.genesis.chain_id,
    },
    'localnet node started',
  );
  let stopping: Promise<void> | undefined;
  return {
    node,
    rpcUrl: `http://${display}:${rpcPort}`,
    p2pAddress: `${display}:${p2pPort}`,
    stop: () => {
      stopping ??= (async () => {
        node.stop();
        await Promise.all([close(rpc), close(p2p)]);
      })();
      return stopping;
    },
  };
}

function listen(server: Server, host: string, target: ListenTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const listening = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (typeof target === 'number') server.listen(target, host, listening);
    else server.listen(target, listening);
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
