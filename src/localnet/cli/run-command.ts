// `localnet-node run`: one node process. Flags fall back to the env a process kubelet sets
// (PORT_RPC, PORT_P2P, HOST) and LOCALNET_*; the key comes from `--key-file` (a file, or `-` for
// stdin), POCKET_PRIVATE_KEY, or the file POCKET_PRIVATE_KEY_FILE_TEMPLATE names for this pod's
// ordinal (a StatefulSet mounting the whole keys Secret). Never from argv. The key is parsed by
// the protocol library's one rule (`parsePrivateKey`, as the manager does): no trimming.
import { readFileSync, readSync } from 'node:fs';
import { Command, Option } from 'commander';
import { pino } from 'pino';
import { CliError, ExitCode, UsageError } from '../../cli/program.ts';
import { isPocketError, parsePrivateKey, type ValidatorKey } from '../../pocket/index.ts';
import { DataDirError } from '../data-dir.ts';
import { Fidelity, isFidelity } from '../fidelity.ts';
import { parseGenesis, type Genesis } from '../genesis.ts';
import { isPacemakerMode, type PacemakerMode } from '../pacemaker.ts';
import { startNode, type ListenTarget } from '../server.ts';

export interface RunConfig {
  genesis: Genesis;
  key: ValidatorKey | undefined;
  host: string;
  rpcPort: ListenTarget;
  p2pPort: ListenTarget;
  pacemaker: PacemakerMode;
  blockIntervalMs: number;
  roundTimeoutMs: number | undefined;
  peers: string[];
  dataDir: string | undefined;
  logLevel: string;
  /** On SIGTERM, how long a validator keeps voting while it is still in the active set. */
  shutdownDrainMs: number;
  fidelity: Fidelity;
  /** The debug actions (off unless asked for: `--debug-routes`, LOCALNET_DEBUG_ROUTES=true). */
  debugRoutes: boolean;
}

interface RunFlags {
  genesis?: string;
  host?: string;
  rpcPort?: string;
  p2pPort?: string;
  pacemaker?: string;
  blockIntervalMs?: string;
  roundTimeoutMs?: string;
  peers?: string;
  dataDir?: string;
  logLevel?: string;
  shutdownDrainMs?: string;
  fidelity?: string;
  keyFile?: string;
  debugRoutes?: boolean;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Resolves flags over env over defaults and validates everything at once: every problem is
 * reported together, by name. The key is read from `env` and never echoed.
 */
export function resolveRunConfig(flags: RunFlags, env: NodeJS.ProcessEnv): RunConfig {
  const problems: string[] = [];
  const genesis = readGenesis(flags.genesis ?? env.GENESIS_PATH, problems);
  const key = readKey(env, flags.keyFile ?? env.LOCALNET_KEY_FILE, problems);
  const fidelity = flags.fidelity ?? env.LOCALNET_FIDELITY ?? Fidelity.intended;
  if (!isFidelity(fidelity)) problems.push('--fidelity must be intended or v1');
  const pacemaker = flags.pacemaker ?? env.LOCALNET_PACEMAKER ?? 'manual';
  if (!isPacemakerMode(pacemaker)) problems.push('--pacemaker must be manual or auto');
  const debugRoutes = flags.debugRoutes === true || onOff(env.LOCALNET_DEBUG_ROUTES, problems);
  const logLevel = flags.logLevel ?? env.LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  const config = { key, ...nodeSettings(flags, env, problems), logLevel, debugRoutes };
  if (
    problems.length > 0 ||
    genesis === undefined ||
    !isPacemakerMode(pacemaker) ||
    !isFidelity(fidelity)
  ) {
    throw new UsageError(problems.join('; '));
  }
  return { ...config, genesis, pacemaker, fidelity };
}

/** Where the node listens and how it paces itself: flags over env over defaults. */
function nodeSettings(
  flags: RunFlags,
  env: NodeJS.ProcessEnv,
  problems: string[],
): Pick<
  RunConfig,
  | 'host'
  | 'rpcPort'
  | 'p2pPort'
  | 'blockIntervalMs'
  | 'roundTimeoutMs'
  | 'peers'
  | 'dataDir'
  | 'shutdownDrainMs'
> {
  return {
    host: flags.host ?? (env.HOST !== undefined && env.HOST !== '' ? env.HOST : '0.0.0.0'),
    rpcPort: port('--rpc-port', flags.rpcPort ?? env.PORT_RPC, 50832, problems),
    p2pPort: port('--p2p-port', flags.p2pPort ?? env.PORT_P2P, 42069, problems),
    blockIntervalMs:
      positive(
        '--block-interval-ms',
        flags.blockIntervalMs ?? env.LOCALNET_BLOCK_INTERVAL_MS,
        problems,
      ) ?? 1000,
    roundTimeoutMs: positive(
      '--round-timeout-ms',
      flags.roundTimeoutMs ?? env.LOCALNET_ROUND_TIMEOUT_MS,
      problems,
    ),
    peers: (flags.peers ?? env.LOCALNET_PEERS ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== ''),
    dataDir: flags.dataDir ?? (env.LOCALNET_DATA_DIR === '' ? undefined : env.LOCALNET_DATA_DIR),
    shutdownDrainMs:
      nonNegative(
        '--shutdown-drain-ms',
        flags.shutdownDrainMs ?? env.LOCALNET_SHUTDOWN_DRAIN_MS,
        problems,
      ) ?? 20_000,
  };
}

/**
 * A port, or `fd:N`: a listening socket inherited as file descriptor N (`localnet-node net`
 * passes each node the ports it holds, so none is free for another program in between).
 */
function port(
  name: string,
  value: string | undefined,
  fallback: number,
  problems: string[],
): ListenTarget {
  if (value === undefined || value === '') return fallback;
  const fd = /^fd:(\d{1,4})$/.exec(value)?.[1];
  if (fd !== undefined && Number(fd) > 2) return { fd: Number(fd) };
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    problems.push(`${name} must be a port number (or fd:N, an inherited listening socket)`);
  return n;
}

function positive(name: string, value: string | undefined, problems: string[]): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) problems.push(`${name} must be a positive whole number`);
  return n;
}

function nonNegative(
  name: string,
  value: string | undefined,
  problems: string[],
): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) problems.push(`${name} must be a whole number`);
  return n;
}

/** The genesis file at `path` (`--genesis` or GENESIS_PATH), or a problem. */
function readGenesis(path: string | undefined, problems: string[]): Genesis | undefined {
  if (path === undefined || path === '') {
    problems.push('--genesis is required (or GENESIS_PATH)');
    return undefined;
  }
  try {
    return parseGenesis(JSON.parse(readFileSync(path, 'utf8')));
  } catch (error: unknown) {
    problems.push(`--genesis ${path}: ${error instanceof Error ? error.message : 'unreadable'}`);
    return undefined;
  }
}

/** The node's key from its source (keySource), or none, or a problem naming the source. */
function readKey(
  env: NodeJS.ProcessEnv,
  keyFile: string | undefined,
  problems: string[],
): ValidatorKey | undefined {
  const source = keySource(env, keyFile);
  if ('problem' in source) {
    problems.push(source.problem);
    return undefined;
  }
  if (source.text === undefined) return undefined;
  try {
    // The manager's rule, V1's too (`hex.DecodeString` in shared/crypto/ed25519.go:46-52
    // refuses a trailing newline): the value as given, never trimmed.
    return parsePrivateKey(source.text);
  } catch (error: unknown) {
    const code = isPocketError(error) ? `${error.code}: ` : '';
    problems.push(`${source.name}: ${code}${error instanceof Error ? error.message : 'invalid'}`);
    return undefined;
  }
}

/** LOCALNET_DEBUG_ROUTES: `true`/`on`/`1` or `false`/`off`/`0`/unset; anything else is a problem. */
function onOff(value: string | undefined, problems: string[]): boolean {
  if (value === undefined || value === '') return false;
  const normal = value.trim().toLowerCase();
  if (['on', 'true', '1'].includes(normal)) return true;
  if (!['off', 'false', '0'].includes(normal))
    problems.push('LOCALNET_DEBUG_ROUTES must be true or false');
  return false;
}

/** How long `--key-file -` waits for its writer (`startNet` writes the key right after spawn). */
const STDIN_WAIT_MS = 10_000;

/**
 * All of stdin, read synchronously. A pipe from a Node parent is non-blocking in the child: a read
 * before the parent has written fails with EAGAIN (`readFileSync(0)` does), so this waits for the
 * data in 5 ms steps, up to STDIN_WAIT_MS. The buffers that held the key are zeroed.
 */
function readStdin(): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(64 * 1024);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + STDIN_WAIT_MS;
  try {
    for (;;) {
      let read: number;
      try {
        read = readSync(0, buffer, 0, buffer.length, null);
      } catch (error: unknown) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > deadline)
          throw error;
        Atomics.wait(pause, 0, 0, 5);
        continue;
      }
      if (read === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    }
    const all = Buffer.concat(chunks);
    const text = all.toString('utf8');
    all.fill(0);
    return text;
  } finally {
    buffer.fill(0);
    for (const chunk of chunks) chunk.fill(0);
  }
}

/**
 * Where the key comes from: `--key-file` (a path, or `-` for stdin) wins; then
 * `POCKET_PRIVATE_KEY` (hex); else the file named by `POCKET_PRIVATE_KEY_FILE_TEMPLATE` with
 * `{id}` (ordinal + 1, three digits), `{ordinal}` and `{index}` taken from this pod's name
 * (`POD_NAME`, else `HOSTNAME`: `<statefulset>-<ordinal>`). None = a full node. Problems name the
 * source and never include key material.
 */
export function keySource(
  env: NodeJS.ProcessEnv,
  keyFile?: string,
): { name: string; text: string | undefined } | { problem: string } {
  if (keyFile !== undefined && keyFile !== '') {
    const name = keyFile === '-' ? '--key-file - (stdin)' : `--key-file ${keyFile}`;
    try {
      return { name, text: keyFile === '-' ? readStdin() : readFileSync(keyFile, 'utf8') };
    } catch (error: unknown) {
      return {
        problem: `${name}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      };
    }
  }
  const inline = env.POCKET_PRIVATE_KEY;
  if (inline !== undefined && inline !== '') return { name: 'POCKET_PRIVATE_KEY', text: inline };
  const template = env.POCKET_PRIVATE_KEY_FILE_TEMPLATE;
  if (template === undefined || template === '') return { name: 'none', text: undefined };
  const podName = env.POD_NAME ?? env.HOSTNAME ?? '';
  const ordinal = /-(\d+)$/.exec(podName)?.[1];
  if (ordinal === undefined || Number(ordinal) > 998) {
    return {
      problem: `POCKET_PRIVATE_KEY_FILE_TEMPLATE needs POD_NAME (or HOSTNAME) ending in a StatefulSet ordinal 0-998, got ${JSON.stringify(podName)}`,
    };
  }
  const n = Number(ordinal);
  const path = template
    .replaceAll('{id}', String(n + 1).padStart(3, '0'))
    .replaceAll('{ordinal}', String(n))
    .replaceAll('{index}', String(n + 1));
  try {
    return { name: `key file ${path}`, text: readFileSync(path, 'utf8') };
  } catch (error: unknown) {
    return {
      problem: `cannot read the key file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
}

/** Runs a node until SIGTERM/SIGINT (or the parent's IPC channel closes); resolves after it stopped. */
export async function runNode(config: RunConfig): Promise<void> {
  // The key is never handed to the logger; redaction is the second line of defence.
  const logger = pino({
    level: config.logLevel,
    base: { pid: process.pid },
    redact: {
      paths: ['key', '*.key', 'privateKey', '*.privateKey', 'env.POCKET_PRIVATE_KEY'],
      censor: '[redacted]',
    },
  });
  const running = await startNode({
    fidelity: config.fidelity,
    debugRoutes: config.debugRoutes,
    genesis: config.genesis,
    key: config.key,
    host: config.host,
    rpcPort: config.rpcPort,
    p2pPort: config.p2pPort,
    pacemaker: config.pacemaker,
    blockIntervalMs: config.blockIntervalMs,
    ...(config.roundTimeoutMs === undefined ? {} : { roundTimeoutMs: config.roundTimeoutMs }),
    peers: config.peers,
    dataDir: config.dataDir,
    logger,
  });
  await new Promise<void>((resolve) => {
    const shutdown = (reason: string) => {
      logger.info({ reason }, 'stopping');
      resolve();
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    // Started by `localnet-node net` with an IPC channel: exit with the parent, however it died.
    if (process.connected) process.once('disconnect', () => shutdown('parent exited'));
  });
  await leaveGracefully(running.node, config.shutdownDrainMs, logger);
  await running.stop();
  logger.flush();
}

/**
 * A validator that is told to stop while it is still in the active set keeps voting until the
 * block that removes it is committed (its unstake is usually on its way: the manager sends it the
 * moment the StatefulSet's replicas drop), for at most `drainMs` (keep it below the pod's
 * termination grace period). Without this, `kubectl scale` kills validators faster than their
 * unstakes commit and the chain stalls. Rounds that fail on the way (a leader that is down, a
 * peer restarting) are no reason to leave: leaving then is what would stop the chain — an early
 * exit after 2 s without a block did exactly that when a scale-down met a crashed validator.
 * When the whole network goes down, the grace period ends the wait.
 */
async function leaveGracefully(
  node: { inActiveSet(): boolean; chain: { height: number } },
  drainMs: number,
  logger: { info(o: object, m: string): void },
): Promise<void> {
  if (drainMs <= 0 || !node.inActiveSet()) return;
  logger.info({ drainMs }, 'still in the active set; voting until removed');
  const deadline = Date.now() + drainMs;
  while (node.inActiveSet() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  logger.info({ inActiveSet: node.inActiveSet(), height: node.chain.height }, 'leaving');
}

export function runCommand(): Command {
  return new Command('run')
    .description(
      'Run one localnet node (a validator when POCKET_PRIVATE_KEY is set, else a full node).',
    )
    .addOption(new Option('--genesis <file>', 'genesis JSON (V1 shape)').env('GENESIS_PATH'))
    .option('--host <host>', 'interface to listen on (env HOST, default 0.0.0.0)')
    .option('--rpc-port <port>', 'RPC port (env PORT_RPC, default 50832)')
    .option(
      '--p2p-port <port>',
      'p2p port, the one staked as service_url (env PORT_P2P, default 42069)',
    )
    .option('--pacemaker <mode>', 'manual or auto (env LOCALNET_PACEMAKER, default manual)')
    .option(
      '--block-interval-ms <ms>',
      'auto pacemaker interval (env LOCALNET_BLOCK_INTERVAL_MS, default 1000)',
    )
    .option(
      '--round-timeout-ms <ms>',
      'base consensus step timeout (env LOCALNET_ROUND_TIMEOUT_MS, default 3 intervals)',
    )
    .option(
      '--peers <list>',
      'extra peers, host:port of their p2p servers, comma-separated (env LOCALNET_PEERS)',
    )
    .option(
      '--data-dir <dir>',
      'keeps the vote guard and the committed blocks across restarts (env LOCALNET_DATA_DIR)',
    )
    .option('--log-level <level>', 'pino level (env LOG_LEVEL, default info)')
    .option(
      '--fidelity <profile>',
      'intended (V1 as meant) or v1 (V1 as its Go code runs) (env LOCALNET_FIDELITY, default intended)',
    )
    .option(
      '--debug-routes',
      'serve the debug actions: /v1/debug/* and their forwarding between peers (env LOCALNET_DEBUG_ROUTES=true; default off: they reset and drive the chain with no key or token)',
    )
    .option(
      '--key-file <file>',
      'the validator key (128 hex, nothing else), "-" for stdin (env LOCALNET_KEY_FILE); keeps it out of /proc/<pid>/environ',
    )
    .option(
      '--shutdown-drain-ms <ms>',
      'on SIGTERM, how long a validator keeps voting while still in the active set (env LOCALNET_SHUTDOWN_DRAIN_MS, default 20000; 0 = exit at once)',
    )
    .action(async (flags: RunFlags) => {
      const config = resolveRunConfig(flags, process.env);
      // Children started from here do not inherit the key. The kernel's copy of the initial
      // environment (/proc/<pid>/environ) cannot be cleared: use --key-file to keep it out.
      delete process.env.POCKET_PRIVATE_KEY;
      delete process.env.POCKET_PRIVATE_KEY_FILE_TEMPLATE;
      try {
        await runNode(config);
      } catch (error: unknown) {
        // A data dir that is not this chain's history, or cannot be used: a named reason, exit 2.
        if (error instanceof DataDirError) throw new CliError(error.message, ExitCode.usage);
        throw listenFailure(error, config) ?? error;
      }
    });
}

/**
 * A server that could not listen, as one line naming the port: `cannot listen on
 * 127.0.0.1:40001 (--p2p-port): address already in use (EADDRINUSE)`.
 */
function listenFailure(error: unknown, config: RunConfig): CliError | undefined {
  const cause = error as NodeJS.ErrnoException & { port?: number; address?: string };
  if (cause.syscall !== 'listen' || cause.code === undefined) return undefined;
  const flag =
    cause.port === config.rpcPort
      ? '--rpc-port'
      : cause.port === config.p2pPort
        ? '--p2p-port'
        : '';
  const reason = LISTEN_REASONS[cause.code] ?? 'cannot listen';
  return new CliError(
    `cannot listen on ${cause.address ?? config.host}:${cause.port ?? '?'}${flag === '' ? '' : ` (${flag})`}: ${reason} (${cause.code})`,
  );
}

const LISTEN_REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'address not available',
};
