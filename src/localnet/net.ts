// A local network of node processes on loopback: a genesis for the keys, one `localnet-node run`
// child per node (key through its stdin, output to a log file), health checks, kill/restart, and
// cleanup that never leaves a process behind.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkEntryPoints, entryPoints } from '../cli/entry-points.ts';
import type { ValidatorKey } from '../pocket/index.ts';
import type { Fidelity } from './fidelity.ts';
import { buildGenesis, type Genesis } from './genesis.ts';
import { PacemakerMode } from './pacemaker.ts';

export interface StartNetOptions {
  /** Keys by id; every key is funded, the first `validators` get a node process. */
  keys: ReadonlyMap<string, ValidatorKey>;
  /** How many node processes (ids in order). */
  validators: number;
  /** How many of them are staked at genesis (default all); the rest start as full nodes. */
  staked?: number;
  pacemaker?: PacemakerMode;
  blockIntervalMs?: number;
  /** Base timeout of a consensus step; default 3 block intervals. */
  roundTimeoutMs?: number;
  /** `validator_unstaking_blocks` (V1 default 2016). */
  unstakingBlocks?: number;
  /** Node i listens on rpc `basePort + 2i` and p2p `basePort + 2i + 1`; free ports when omitted. */
  basePort?: number;
  host?: string;
  logLevel?: string;
  /** Keep the temp dir (genesis, logs) after `stop()`. */
  keepDir?: boolean;
  /** How long to wait for every node to answer its health check (default 60 s: a loaded machine). */
  startTimeoutMs?: number;
  /**
   * On SIGTERM, how long a validator keeps voting while still in the active set (default 0: the
   * whole net stops together, so none needs to wait to be unstaked first).
   */
  shutdownDrainMs?: number;
  /** Every node's fidelity profile (default `intended`). */
  fidelity?: Fidelity;
  /** Every node serves the debug actions (`--debug-routes`; default off). */
  debugRoutes?: boolean;
}

/** The net could not start; the message names the node, the port and the cause. */
export class NetStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetStartError';
  }
}

export interface NetNode {
  id: string;
  address: string;
  rpcUrl: string;
  /** `host:port` of the p2p server, as staked. */
  serviceUrl: string;
  /** Staked at genesis. */
  staked: boolean;
}

export interface LocalNet {
  readonly nodes: readonly NetNode[];
  /** Temp dir holding `genesis.json`, `logs/<id>.log` and each node's data dir. */
  readonly dir: string;
  readonly genesis: Genesis;
  logFile(id: string): string;
  /** True while the node's process runs. */
  isRunning(id: string): boolean;
  /** Signals a node (SIGKILL by default: a crash) and waits for it to exit. */
  kill(id: string, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a node again (killing it first if it runs) with the same key, ports and data dir. */
  restart(id: string): Promise<void>;
  /** Stops every node (SIGTERM, then SIGKILL) and removes the temp dir unless kept. */
  stop(): Promise<void>;
}

/** The node's entry point: its source, or its bundle when CLUSTER_MANAGER_BUNDLES is set. */
const ENTRY_POINTS = entryPoints(process.env.CLUSTER_MANAGER_BUNDLES);
const BIN = ENTRY_POINTS.localnetNode;

interface Member {
  node: NetNode;
  key: ValidatorKey;
  rpcPort: number;
  p2pPort: number;
  /** The listening sockets held for the node's next start (rpc, p2p); handed over at spawn. */
  held: [Server, Server] | undefined;
  child: ChildProcess | undefined;
}

/** Starts the network; resolves once every node answers `GET /v1/health`. */
export async function startNet(options: StartNetOptions): Promise<LocalNet> {
  checkEntryPoints(ENTRY_POINTS);
  const host = options.host ?? '127.0.0.1';
  const entries = [...options.keys].sort(([a], [b]) => (a < b ? -1 : 1));
  const staked = checkSizes(options, entries.length);
  const sockets = await holdPorts(2 * options.validators, options.basePort, host);
  const members = membersOf(entries.slice(0, options.validators), sockets, host, staked);
  const dir = mkdtempSync(join(tmpdir(), 'localnet-'));
  mkdirSync(join(dir, 'logs'));
  const genesis = buildGenesis({
    keys: options.keys,
    validators: staked,
    serviceUrl: (slot) => members[slot.ordinal]?.node.serviceUrl ?? '',
    ...(options.unstakingBlocks === undefined ? {} : { unstakingBlocks: options.unstakingBlocks }),
  });
  const genesisPath = join(dir, 'genesis.json');
  writeFileSync(genesisPath, `${JSON.stringify(genesis, null, 2)}\n`);
  const byId = new Map(members.map((m) => [m.node.id, m]));
  const peers = members.map((m) => m.node.serviceUrl).join(',');
  const killAll = (): void => {
    for (const member of members) member.child?.kill('SIGKILL');
  };
  process.on('exit', killAll);

  const spawnMember = async (member: Member): Promise<ChildProcess> => {
    // The node's ports stay ours until its process holds them: the sockets listen here from their
    // choice on (a restart takes its ports again first) and are passed down as fds 4 and 5.
    const held = member.held ?? (await holdAgain(member, host));
    member.held = undefined;
    const log = openSync(join(dir, 'logs', `${member.node.id}.log`), 'a');
    const dataDir = join(dir, 'data', member.node.id);
    mkdirSync(dataDir, { recursive: true });
    const args = nodeArgs(options, { genesisPath, host, peers, dataDir });
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        LOCALNET_SHUTDOWN_DRAIN_MS: String(options.shutdownDrainMs ?? 0),
      };
      delete env.POCKET_PRIVATE_KEY;
      delete env.LOCALNET_KEY_FILE;
      // The key goes through a pipe, so it is in neither argv nor /proc/<pid>/environ.
      const child = spawn(process.execPath, args, {
        env,
        stdio: ['pipe', log, log, 'ipc', ...held.map(listeningFd)],
      });
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(member.key.exportPrivateKeyHex());
      child.on('exit', () => {
        if (member.child === child) member.child = undefined;
      });
      member.child = child;
      return child;
    } finally {
      closeSync(log);
      // The child has its own copies of the listening sockets now (or never started).
      for (const socket of held) socket.close();
    }
  };

  const startMember = async (member: Member): Promise<void> => {
    const child = await spawnMember(member);
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        const log = tail(join(dir, 'logs', `${member.node.id}.log`));
        // The node's own one-line reason (`error: cannot listen on …`), else its log's tail.
        const reason = /^error: (.*)$/m.exec(log)?.[1];
        throw new NetStartError(
          reason === undefined
            ? `node ${member.node.id} exited during start-up:\n${log}`
            : `node ${member.node.id} could not start: ${reason}`,
        );
      }
      if (await isHealthy(member.node.rpcUrl)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new NetStartError(`node ${member.node.id} did not become healthy in time`);
  };

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const member of members) for (const socket of member.held?.splice(0) ?? []) socket.close();
    const running = members.flatMap((m) => (m.child === undefined ? [] : [m.child]));
    for (const child of running) child.kill('SIGTERM');
    const exited = await Promise.all(running.map((child) => waitExit(child, 5000)));
    running.forEach((child, i) => {
      if (exited[i] !== true) child.kill('SIGKILL');
    });
    await Promise.all(running.map((child) => waitExit(child, 5000)));
    process.off('exit', killAll);
    if (options.keepDir !== true) rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.all(members.map(startMember));
  } catch (error: unknown) {
    await stop();
    throw error;
  }

  const member = (id: string): Member => {
    const found = byId.get(id);
    if (found === undefined) throw new RangeError(`no node ${id} in this net`);
    return found;
  };
  const kill = async (id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const child = member(id).child;
    if (child === undefined) return;
    child.kill(signal);
    await waitExit(child, 10_000);
  };
  return {
    nodes: members.map((m) => m.node),
    dir,
    genesis,
    logFile: (id) => join(dir, 'logs', `${member(id).node.id}.log`),
    isRunning: (id) => member(id).child !== undefined,
    kill,
    restart: async (id) => {
      await kill(id);
      await startMember(member(id));
    },
    stop,
  };
}

/** Checks the sizes asked for against the keys given; returns how many nodes are staked. */
function checkSizes(options: StartNetOptions, keyCount: number): number {
  if (!Number.isInteger(options.validators) || options.validators < 1) {
    throw new RangeError(`validators must be at least 1 (got ${options.validators})`);
  }
  if (options.validators > keyCount) {
    throw new RangeError(`${options.validators} nodes need as many keys (got ${keyCount})`);
  }
  const staked = options.staked ?? options.validators;
  if (!Number.isInteger(staked) || staked < 1 || staked > options.validators) {
    throw new RangeError(`staked must be within 1…${options.validators} (got ${staked})`);
  }
  return staked;
}

/** One member per key, each with the two listening sockets held for it (rpc, p2p). */
function membersOf(
  entries: readonly (readonly [string, ValidatorKey])[],
  sockets: readonly Server[],
  host: string,
  staked: number,
): Member[] {
  return entries.map(([id, key], i) => {
    const held = sockets.slice(2 * i, 2 * i + 2) as [Server, Server];
    const [rpcPort, p2pPort] = held.map(portOf) as [number, number];
    return {
      key,
      rpcPort,
      p2pPort,
      held,
      child: undefined,
      node: {
        id,
        address: key.address,
        rpcUrl: `http://${host}:${rpcPort}`,
        serviceUrl: `${host}:${p2pPort}`,
        staked: i < staked,
      },
    };
  });
}

/** A node's `localnet-node run` argv: its ports as the inherited fds, its key from stdin. */
function nodeArgs(
  options: StartNetOptions,
  where: { genesisPath: string; host: string; peers: string; dataDir: string },
): string[] {
  return [
    BIN,
    'run',
    '--genesis',
    where.genesisPath,
    '--host',
    where.host,
    '--rpc-port',
    `fd:${INHERITED_FDS[0]}`,
    '--p2p-port',
    `fd:${INHERITED_FDS[1]}`,
    '--pacemaker',
    options.pacemaker ?? PacemakerMode.manual,
    '--block-interval-ms',
    String(options.blockIntervalMs ?? 1000),
    '--peers',
    where.peers,
    '--data-dir',
    where.dataDir,
    '--log-level',
    options.logLevel ?? 'info',
    '--key-file',
    '-',
    ...(options.fidelity === undefined ? [] : ['--fidelity', options.fidelity]),
    ...(options.debugRoutes === true ? ['--debug-routes'] : []),
    ...(options.roundTimeoutMs === undefined
      ? []
      : ['--round-timeout-ms', String(options.roundTimeoutMs)]),
  ];
}

/** Resolves true once `child` has exited, false when it is still running after `timeoutMs`. */
function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve(true);
      return;
    }
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function isHealthy(rpcUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${rpcUrl}/v1/health`, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

/** The fds a node process gets its rpc and p2p sockets on (0–2: stdio, 3: the IPC channel). */
const INHERITED_FDS = [4, 5] as const;

/**
 * `count` listening sockets on `host`: consecutive ports from `base` (a taken one is named before
 * any node starts), or ports the OS picks. They are held, never released and listened on again
 * later: a port found free and released was free for anyone else too (an outgoing connection's
 * local port, another test's `listen(0)`), and a node's EADDRINUSE then broke the net.
 */
async function holdPorts(count: number, base: number | undefined, host: string): Promise<Server[]> {
  const held: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const port = base !== undefined && base > 0 ? base + i : 0;
      const socket = await listenOn(port, host);
      if (typeof socket === 'string') {
        const node = String(Math.floor(i / 2) + 1).padStart(3, '0');
        throw new NetStartError(
          `port ${port} (node ${node} ${i % 2 === 0 ? 'rpc' : 'p2p'}, --base-port ${base}) on ${host}: ${socket}`,
        );
      }
      held.push(socket);
    }
    return held;
  } catch (error: unknown) {
    for (const socket of held) socket.close();
    throw error;
  }
}

/** A restarted node's own ports again, taken back the moment its old process has exited. */
async function holdAgain(member: Member, host: string): Promise<[Server, Server]> {
  const held: Server[] = [];
  for (const [kind, port] of [
    ['rpc', member.rpcPort],
    ['p2p', member.p2pPort],
  ] as const) {
    const socket = await listenOn(port, host);
    if (typeof socket === 'string') {
      for (const each of held) each.close();
      throw new NetStartError(
        `port ${port} (node ${member.node.id} ${kind}) on ${host}: ${socket}`,
      );
    }
    held.push(socket);
  }
  return held as [Server, Server];
}

/**
 * A socket listening on `port` (0: one the OS picks), or why not (`address already in use
 * (EADDRINUSE)`). Connections that reach it before its node has it are dropped, not left hanging.
 */
function listenOn(port: number, host: string): Promise<Server | string> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === 'EADDRINUSE'
          ? 'address already in use'
          : error.code === 'EACCES'
            ? 'permission denied'
            : 'cannot listen';
      resolve(`${reason} (${error.code ?? 'error'})`);
    });
    server.listen(port, host, () => resolve(server));
  });
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/**
 * The file descriptor of a listening socket, to pass to a child in its `stdio`. Node documents no
 * getter for it; `_handle.fd` is the TCP handle's own (Unix).
 */
export function listeningFd(server: Server): number {
  const fd = (server as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new NetStartError('cannot pass a listening socket');
  return fd;
}
