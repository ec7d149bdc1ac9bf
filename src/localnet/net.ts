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
  child: ChildProcess | undefined;
}

/** Starts the network; resolves once every node answers `GET /v1/health`. */
export async function startNet(options: StartNetOptions): Promise<LocalNet> {
  checkEntryPoints(ENTRY_POINTS);
  const host = options.host ?? '127.0.0.1';
  const entries = [...options.keys].sort(([a], [b]) => (a < b ? -1 : 1));
  if (!Number.isInteger(options.validators) || options.validators < 1) {
    throw new RangeError(`validators must be at least 1 (got ${options.validators})`);
  }
  if (options.validators > entries.length) {
    throw new RangeError(`${options.validators} nodes need as many keys (got ${entries.length})`);
  }
  const staked = options.staked ?? options.validators;
  if (!Number.isInteger(staked) || staked < 1 || staked > options.validators) {
    throw new RangeError(`staked must be within 1…${options.validators} (got ${staked})`);
  }
  const ports = await allocatePorts(2 * options.validators, options.basePort, host);
  const members: Member[] = entries.slice(0, options.validators).map(([id, key], i) => {
    const rpcPort = ports[2 * i] ?? 0;
    const p2pPort = ports[2 * i + 1] ?? 0;
    return {
      key,
      rpcPort,
      p2pPort,
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

  const spawnMember = (member: Member): ChildProcess => {
    const log = openSync(join(dir, 'logs', `${member.node.id}.log`), 'a');
    const dataDir = join(dir, 'data', member.node.id);
    mkdirSync(dataDir, { recursive: true });
    const args = [
      BIN,
      'run',
      '--genesis',
      genesisPath,
      '--host',
      host,
      '--rpc-port',
      String(member.rpcPort),
      '--p2p-port',
      String(member.p2pPort),
      '--pacemaker',
      options.pacemaker ?? PacemakerMode.manual,
      '--block-interval-ms',
      String(options.blockIntervalMs ?? 1000),
      '--peers',
      peers,
      '--data-dir',
      dataDir,
      '--log-level',
      options.logLevel ?? 'info',
      '--key-file',
      '-',
      ...(options.fidelity === undefined ? [] : ['--fidelity', options.fidelity]),
      ...(options.roundTimeoutMs === undefined
        ? []
        : ['--round-timeout-ms', String(options.roundTimeoutMs)]),
    ];
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        LOCALNET_SHUTDOWN_DRAIN_MS: String(options.shutdownDrainMs ?? 0),
      };
      delete env.POCKET_PRIVATE_KEY;
      delete env.LOCALNET_KEY_FILE;
      // The key goes through a pipe, so it is in neither argv nor /proc/<pid>/environ.
      const child = spawn(process.execPath, args, { env, stdio: ['pipe', log, log, 'ipc'] });
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(member.key.exportPrivateKeyHex());
      child.on('exit', () => {
        if (member.child === child) member.child = undefined;
      });
      member.child = child;
      return child;
    } finally {
      closeSync(log);
    }
  };

  const waitExit = (child: ChildProcess, timeoutMs: number): Promise<boolean> =>
    new Promise((resolve) => {
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

  const startMember = async (member: Member): Promise<void> => {
    const child = spawnMember(member);
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

/**
 * `count` ports: consecutive from `base` (each checked free first, so a taken one is named
 * before any node starts), or free ones picked by the OS.
 */
async function allocatePorts(
  count: number,
  base: number | undefined,
  host: string,
): Promise<number[]> {
  if (base !== undefined && base > 0) {
    const ports = Array.from({ length: count }, (_, i) => base + i);
    for (const [i, port] of ports.entries()) {
      const problem = await probePort(port, host);
      if (problem !== undefined) {
        const node = String(Math.floor(i / 2) + 1).padStart(3, '0');
        throw new NetStartError(
          `port ${port} (node ${node} ${i % 2 === 0 ? 'rpc' : 'p2p'}, --base-port ${base}) on ${host}: ${problem}`,
        );
      }
    }
    return ports;
  }
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Whether `port` can be listened on: undefined, or the reason (`address already in use (EADDRINUSE)`). */
function probePort(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === 'EADDRINUSE'
          ? 'address already in use'
          : error.code === 'EACCES'
            ? 'permission denied'
            : 'cannot listen';
      resolve(`${reason} (${error.code ?? 'error'})`);
    });
    server.listen(port, host, () => server.close(() => resolve(undefined)));
  });
}
