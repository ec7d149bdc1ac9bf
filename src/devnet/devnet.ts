// The embedded devnet: the Kubernetes API emulator with its process kubelet running localnet
// nodes, a keys Secret and genesis, a validator StatefulSet, a full node for queries, and the
// manager as a child process pointed at it through a kubeconfig — all on loopback.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { startEmulator, type Emulator } from '../kube-emulator/index.ts';
import { buildGenesis } from '../localnet/genesis.ts';
import { generateKeys, PocketRpcClient } from '../pocket/index.ts';
import {
  DEFAULT_DEPARTURE_TIMEOUT_SECONDS,
  DEVNET_NAMESPACE,
  FULL_NODE_STATEFULSET,
  fullNodeStatefulSet,
  genesisConfigMap,
  keysSecret,
  managerTokenSecret,
  namespace,
  NODE_IMAGE,
  services,
  VALIDATOR_STATEFULSET,
  validatorStatefulSet,
} from './manifests.ts';
import { freePorts, isPortFree } from './ports.ts';

export interface DevnetOptions {
  /** Validators at genesis (and replicas of the StatefulSet). */
  validators: number;
  /** Keys in the Secret: room to scale (default max(32, 2 × validators)). */
  keys?: number;
  dir: string;
  kubePort: number;
  /** Control RPC port of the manager (0 = any free port). */
  rpcPort: number;
  pacemaker: 'auto' | 'manual';
  blockIntervalMs: number;
  txMode: 'rpc' | 'cli';
  manager: boolean;
  /** Extra env for the manager (tests: faster polling, debounce). */
  managerEnv?: Record<string, string>;
  /** `validator_unstaking_blocks` of the genesis (default 2016, V1's). */
  unstakingBlocks?: number;
  /**
   * How long a validator pod's preStop hook (`cluster-manager await-departure`) waits for its
   * validator to leave the set before the pod stops anyway (default 60 s; the grace period is
   * this + 30 s).
   */
  departureTimeoutSeconds?: number;
  /** Where progress lines go (default: nowhere). */
  log?: (line: string) => void;
  /** Aborts the start: whatever was started is stopped again and the start rejects. */
  signal?: AbortSignal;
}

/** What `<dir>/devnet.json` holds: everything a client needs to use the devnet. */
export interface DevnetInfo {
  kubeApi: string;
  kubeconfig: string;
  namespace: string;
  statefulSet: string;
  validators: number;
  keys: number;
  pacemaker: 'auto' | 'manual';
  blockIntervalMs: number;
  txMode: 'rpc' | 'cli';
  chainRpcUrl: string;
  managerUrl: string | null;
  token: string | null;
  managerLog: string | null;
  dir: string;
}

export interface Devnet {
  readonly info: DevnetInfo;
  readonly emulator: Emulator;
  /** The manager's child process (undefined with `manager: false` or after it stopped). */
  readonly manager: ChildProcess | undefined;
  /** Starts the manager again (after a kill), with the same env. */
  restartManager(): Promise<void>;
  /** Sends a signal to the manager and waits for it to exit. */
  killManager(signal?: NodeJS.Signals): Promise<void>;
  /** Stops the manager, every node and the emulator; removes nothing but the secrets folder. */
  stop(): Promise<void>;
}

const here = dirname(fileURLToPath(import.meta.url));
export const BIN = {
  clusterManager: resolve(here, '../bin/cluster-manager.ts'),
  localnetNode: resolve(here, '../bin/localnet-node.ts'),
  localnetCli: resolve(here, '../bin/localnet-cli.ts'),
};

/** Starts a devnet; on any failure everything started so far is stopped again. */
export async function startDevnet(options: DevnetOptions): Promise<Devnet> {
  const log = options.log ?? (() => undefined);
  const signal = options.signal ?? new AbortController().signal;
  signal.throwIfAborted();
  const dir = resolve(options.dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const emulatorDir = join(dir, 'emulator');
  await rm(emulatorDir, { recursive: true, force: true });

  const keyCount = Math.min(999, options.keys ?? Math.max(32, options.validators * 2));
  if (options.validators < 1 || options.validators > keyCount)
    throw new Error(`--validators must be 1…${keyCount}`);
  const keys = generateKeys({ count: keyCount });
  if (options.rpcPort !== 0 && !(await isPortFree(options.rpcPort))) {
    throw new Error(`port ${options.rpcPort} is in use; pass --rpc-port 0 or another port`);
  }

  // Genesis names each genesis validator's p2p address, so those ports are fixed up front; the
  // process kubelet hands them to the pods of those ordinals. The full node's RPC is fixed too.
  const fixed = await freePorts(options.validators * 2 + 1);
  const portOf = (ordinal: number, name: 'rpc' | 'p2p'): number | undefined =>
    fixed[ordinal * 2 + (name === 'rpc' ? 0 : 1)];
  const fullNodeRpc = fixed[options.validators * 2] ?? 0;
  const genesis = buildGenesis({
    keys,
    validators: options.validators,
    serviceUrl: (slot) => `127.0.0.1:${portOf(slot.ordinal, 'p2p') ?? 0}`,
    ...(options.unstakingBlocks === undefined ? {} : { unstakingBlocks: options.unstakingBlocks }),
  });

  const emulator = await startEmulator({
    port: options.kubePort,
    dir: emulatorDir,
    kubelet: {
      mode: 'process',
      images: {
        [NODE_IMAGE]: {
          command: process.execPath,
          args: [BIN.localnetNode],
          // The image's binaries a preStop hook runs (the real image links them on its PATH).
          binaries: {
            'cluster-manager': { command: process.execPath, args: [BIN.clusterManager] },
          },
        },
      },
      hostPort: (pod, port) => {
        if (pod.namespace !== DEVNET_NAMESPACE) return undefined;
        if (pod.name === `${FULL_NODE_STATEFULSET}-0` && port.name === 'rpc') return fullNodeRpc;
        const ordinal = /^validator-(\d+)$/.exec(pod.name)?.[1];
        if (ordinal === undefined || (port.name !== 'rpc' && port.name !== 'p2p')) return undefined;
        return Number(ordinal) < options.validators
          ? portOf(Number(ordinal), port.name)
          : undefined;
      },
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
    },
  });
  let manager: ChildProcess | undefined;
  try {
    const kubeconfig = await emulator.writeKubeconfig(join(dir, 'kubeconfig'), {
      namespace: DEVNET_NAMESPACE,
    });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const settings = { pacemaker: options.pacemaker, blockIntervalMs: options.blockIntervalMs };
    // A token even without a manager: one started by hand from manager.env uses it. The
    // validators' preStop hook asks that manager (its URL and token) whether a pod may go.
    const token = randomBytes(24).toString('hex');
    const rpcPort = options.rpcPort === 0 ? ((await freePorts(1))[0] ?? 0) : options.rpcPort;
    const departure = {
      managerUrl: `http://127.0.0.1:${rpcPort}`,
      hookTimeoutSeconds: options.departureTimeoutSeconds ?? DEFAULT_DEPARTURE_TIMEOUT_SECONDS,
    };
    const manifests = [
      namespace(),
      keysSecret(new Map([...keys].map(([id, key]) => [id, key.exportPrivateKeyHex()]))),
      managerTokenSecret(token),
      genesisConfigMap(JSON.stringify(genesis, null, 2)),
      ...services(),
      fullNodeStatefulSet(settings),
      validatorStatefulSet(options.validators, settings, departure),
    ];
    for (const manifest of manifests) await objects.create(manifest);
    log(
      `kubernetes API ${emulator.url}; ${options.validators} validators and a full node starting…`,
    );
    await waitForPods(kc, options.validators + 1, { timeoutMs: 60_000, signal });

    const chainRpcUrl = `http://127.0.0.1:${fullNodeRpc}`;
    await waitForStaked(chainRpcUrl, options.validators, { timeoutMs: 30_000, signal });
    const managerEnv: Record<string, string> = {
      KUBECONFIG: kubeconfig,
      CM_NAMESPACE: DEVNET_NAMESPACE,
      CM_CHAIN_RPC_URL: chainRpcUrl,
      CM_SERVICE_URL_TEMPLATE: '{podIP}:{port:p2p}',
      CM_TX_MODE: options.txMode,
      ...(options.txMode === 'cli' ? { CM_CLI_PATH: BIN.localnetCli } : {}),
      CM_RPC_HOST: '127.0.0.1',
      CM_RPC_PORT: String(rpcPort),
      CM_RPC_TOKEN: token,
      CM_JOURNAL_PATH: join(dir, 'journal.sqlite'),
      CM_READY_DEBOUNCE: '1s',
      CM_CHAIN_POLL_INTERVAL: '250ms',
      CM_RESYNC_INTERVAL: '10s',
      ...options.managerEnv,
    };
    await writeFile(
      join(dir, 'manager.env'),
      `${Object.entries(managerEnv)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n')}\n`,
      { mode: 0o600 },
    );
    const info: DevnetInfo = {
      kubeApi: emulator.url,
      kubeconfig,
      namespace: DEVNET_NAMESPACE,
      statefulSet: VALIDATOR_STATEFULSET,
      validators: options.validators,
      keys: keyCount,
      pacemaker: options.pacemaker,
      blockIntervalMs: options.blockIntervalMs,
      txMode: options.txMode,
      chainRpcUrl,
      managerUrl: options.manager ? `http://127.0.0.1:${rpcPort}` : null,
      token,
      managerLog: options.manager ? join(dir, 'manager.log') : null,
      dir,
    };
    await writeFile(join(dir, 'devnet.json'), `${JSON.stringify(info, null, 2)}\n`, {
      mode: 0o600,
    });

    const startManager = async (): Promise<void> => {
      if (info.managerLog === null || info.managerUrl === null) return;
      const out = createWriteStream(info.managerLog, { flags: 'a', mode: 0o600 });
      await new Promise((resolveOpen) => out.once('open', resolveOpen));
      manager = spawn(process.execPath, [BIN.clusterManager, 'run'], {
        env: {
          ...managerEnv,
          PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
          HOME: process.env.HOME ?? dir,
        },
        stdio: ['ignore', out, out],
      });
      manager.once('exit', () => out.end());
      await waitForManager(info.managerUrl, manager, { timeoutMs: 60_000, signal });
    };
    await startManager();
    if (manager !== undefined) log(`manager ${info.managerUrl ?? ''} synced`);

    const killManager = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
      const child = manager;
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      manager = undefined;
    };
    return {
      info,
      emulator,
      get manager() {
        return manager;
      },
      restartManager: startManager,
      killManager,
      stop: async () => {
        await killManager('SIGTERM');
        await emulator.stop();
      },
    };
  } catch (error: unknown) {
    const child = manager;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
      child.kill('SIGKILL');
      await exited;
    }
    await emulator.stop();
    throw error;
  }
}

/** Sleeps `ms`, or rejects at once with the signal's reason. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolveSleep, reject) => {
    signal.throwIfAborted();
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolveSleep();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

interface WaitLimits {
  timeoutMs: number;
  signal: AbortSignal;
}

async function waitForPods(kc: KubeConfig, count: number, limits: WaitLimits): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const deadline = Date.now() + limits.timeoutMs;
  for (;;) {
    const pods = await core.listNamespacedPod({ namespace: DEVNET_NAMESPACE });
    const ready = pods.items.filter((p) =>
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    if (ready >= count) return;
    if (Date.now() > deadline)
      throw new Error(
        `only ${ready} of ${count} node pods became Ready within ${limits.timeoutMs / 1000} s`,
      );
    await pause(200, limits.signal);
  }
}

/** Waits until the chain (through the full node) shows `count` staked validators. */
async function waitForStaked(url: string, count: number, limits: WaitLimits): Promise<void> {
  const chain = new PocketRpcClient({ baseUrl: url, timeoutMs: 2_000 });
  const deadline = Date.now() + limits.timeoutMs;
  let seen: string;
  for (;;) {
    try {
      const rows = await chain.validators();
      const staked = rows.filter((r) => r.unstaking_height < 0 && r.paused_height < 0).length;
      if (staked >= count) return;
      seen = `${staked} staked`;
    } catch (error: unknown) {
      seen = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline)
      throw new Error(
        `the chain did not show ${count} staked validators within ${limits.timeoutMs / 1000} s (${seen})`,
      );
    await pause(200, limits.signal);
  }
}

async function waitForManager(url: string, child: ChildProcess, limits: WaitLimits): Promise<void> {
  const deadline = Date.now() + limits.timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `the manager exited during start (${child.exitCode ?? child.signalCode ?? '?'}); see manager.log`,
      );
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(
        `the manager did not become ready within ${limits.timeoutMs / 1000} s; see manager.log`,
      );
    await pause(200, limits.signal);
  }
}
