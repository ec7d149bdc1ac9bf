// The embedded devnet: the Kubernetes API emulator with its process kubelet running localnet
// nodes, a keys Secret and genesis, a validator StatefulSet, a full node for queries, and the
// manager as a child process pointed at it through a kubeconfig — all on loopback.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CoreV1Api, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import type { DevnetInfo } from '../cli/devnet-file.ts';
import {
  SnapshotError,
  startEmulator,
  type Emulator,
  type ImageCommand,
} from '../kube-emulator/index.ts';
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
import {
  ChainStateRecorder,
  newSeed,
  readSavedChain,
  saveNewChain,
  type ChainShape,
  type SavedChain,
} from './chain-state.ts';
import { checkEntryPoints, entryPoints } from '../cli/entry-points.ts';
import { removeDevnetFiles, RESUMED_FILES, stopLeftovers } from './cleanup.ts';
import { acquireDevnetLock, type DevnetLock } from './lock.ts';
import { applyManagerIdentity } from './manager-identity.ts';
import { ManagerSupervisor } from './manager-supervisor.ts';
import { freePorts, isPortFree } from './ports.ts';
import { podProcessesMayChange, ProcessRecorder } from './process-record.ts';
import { applyManifests, notResumable, objectsFile } from './resume.ts';
import { v1ChartConfigJson } from '../localnet/cli/chart-config.ts';

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
  /**
   * The nodes' fidelity profile (default intended). `v1`: the nodes behave as V1's code does, the
   * manager runs with CM_POCKET_V1_PROFILE=v1 and reads the chain at the first validator (V1's full
   * nodes never sync), and in CLI mode runs localnet-cli as `p1` with config and genesis files.
   */
  fidelity?: 'intended' | 'v1';
  manager: boolean;
  /**
   * Restart the manager when it exits by itself (crashes, or is killed by someone else), with a
   * back-off and a bound (manager-restarts.ts), saying so through `log` — what `cluster-manager
   * devnet` does. Off by default: a test that kills the manager means it to stay down (and
   * `killManager`/`stop` never count as exiting by itself).
   */
  restartManagerOnExit?: boolean;
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
  /**
   * How long a validator node told to stop keeps voting while it is still in the active set
   * (default the node's 20 s; the grace period assumes at most that). For tests whose subject is
   * not the drain: a pod of a validator that stays staked waits this long on every stop.
   */
  nodeShutdownDrainMs?: number;
  /** Where progress lines go (default: nowhere). */
  log?: (line: string) => void;
  /** Aborts the start: whatever was started is stopped again and the start rejects. */
  signal?: AbortSignal;
  /** The folder's lock, when the caller took it already (released on stop or failure). */
  lock?: DevnetLock;
  /**
   * Bring back the chain this folder last ran — its keys, genesis, pod ports, replicas and
   * journal — instead of a new one. The chain's shape (validators, keys, pacemaker) is the saved
   * one. Fails, naming why, when there is none or it did not come back where it was.
   */
  resume?: boolean;
}

export type { DevnetInfo } from '../cli/devnet-file.ts';

export interface Devnet {
  readonly info: DevnetInfo;
  readonly emulator: Emulator;
  /** The manager's child process (undefined with `manager: false` or after it stopped). */
  readonly manager: ChildProcess | undefined;
  /** Starts the manager again (after a kill), with the same env; a pending restart is dropped. */
  restartManager(): Promise<void>;
  /** Sends a signal to the manager and waits for it to exit. */
  killManager(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Stops the manager, every node and the emulator; removes nothing but the secrets folder.
   * devnet.json stays, marked stopped (`stoppedAt`) and without the token.
   */
  stop(): Promise<void>;
}

/** What this process's devnets run: the sources, or the bundles of CLUSTER_MANAGER_BUNDLES. */
export const BIN = entryPoints(process.env.CLUSTER_MANAGER_BUNDLES);

/**
/**
 * The node image: `localnet-node`, with `p1` (and `localnet-cli`) for `kubectl exec`, talking to
 * the pod's own RPC as p1 in a real node's container would.
 */
function nodeImage(): ImageCommand {
  const cli = {
    command: process.execPath,
    args: [BIN.localnetCli],
    env: { POCKET_REMOTE_CLI_URL: 'http://127.0.0.1:$(PORT_RPC)' },
  };
  return {
    command: process.execPath,
    args: [BIN.localnetNode],
    binaries: {
      p1: cli,
      'localnet-cli': cli,
      // What the validators' preStop hook runs (the real image links it on its PATH).
      'cluster-manager': { command: process.execPath, args: [BIN.clusterManager] },
    },
  };
}

/**
 * CLI mode on a V1 chain: localnet-cli run under the name `p1` (its v1 mode) through a symlink,
 * with the config and genesis files p1 loads before `Debug TriggerView` (CONFIG_PATH,
 * GENESIS_PATH; app/client/cli/helpers/setup.go:28, common.go:18 at 58c9b650). The config is the
 * one V1's chart renders (charts/pocket/values.yaml:73-126), `p2p.hostname: ""` included: p1
 * creates its P2P module only because the manager sets POCKET_P2P_HOSTNAME, as on a real LocalNet.
 */
async function p1Files(
  dir: string,
  localnetCli: string,
  genesisJson: string,
): Promise<Record<string, string>> {
  const folder = join(dir, 'p1');
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const p1 = join(folder, 'p1');
  await rm(p1, { force: true });
  await symlink(localnetCli, p1);
  const config = join(folder, 'config.json');
  const genesis = join(folder, 'genesis.json');
  await writeFile(config, v1ChartConfigJson(), { mode: 0o600 });
  await writeFile(genesis, genesisJson, { mode: 0o600 });
  return {
    CM_POCKET_V1_CLI_PATH: p1,
    CM_POCKET_V1_CLI_CONFIG_PATH: config,
    CM_POCKET_V1_CLI_GENESIS_PATH: genesis,
  };
}

/**
 * Starts a devnet; on any failure everything started so far is stopped again. The folder is
 * locked first (a running devnet's folder is refused before anything in it is touched), then
 * cleaned: a devnet starts on a fresh chain, with a fresh journal.
 */
export async function startDevnet(options: DevnetOptions): Promise<Devnet> {
  const log = options.log ?? (() => undefined);
  const signal = options.signal ?? new AbortController().signal;
  signal.throwIfAborted();
  const dir = resolve(options.dir);
  const lock = options.lock ?? (await acquireDevnetLock(dir));
  try {
    // Before anything starts; the lock (also one the caller took) is released on the way out.
    checkEntryPoints(BIN);
    return await startLocked(options, { dir, lock, log, signal });
  } catch (error: unknown) {
    await lock.release();
    throw error;
  }
}

/** What a start makes of the flags, or takes from a resumed chain. */
interface ChainPlan {
  validators: number;
  pacemaker: ChainShape['pacemaker'];
  blockIntervalMs: number;
  fidelity: 'intended' | 'v1';
  keyCount: number;
}

async function startLocked(
  options: DevnetOptions,
  context: { dir: string; lock: DevnetLock; log: (line: string) => void; signal: AbortSignal },
): Promise<Devnet> {
  const { dir, lock, log, signal } = context;
  await chmod(dir, 0o700);
  const saved = options.resume === true ? await readSavedChain(dir) : undefined;
  const plan = await planChain(options, dir, saved);
  await stopLeftoversOf(dir, lock, log);
  // A fresh chain gets a fresh journal, log and node folders: nothing of an earlier run is reused.
  // A resumed one keeps them, and its pods get their ports back (on chain as service URLs).
  if (saved !== undefined) await checkResumedPorts(saved);
  await removeDevnetFiles(dir, saved === undefined ? [] : RESUMED_FILES);
  const seed = saved?.seed ?? newSeed();
  const keys = generateKeys({ count: plan.keyCount, seed });
  const ports = saved?.ports ?? (await fixPorts(plan.validators));
  const genesisJson = saved?.genesisJson ?? newGenesisJson(keys, plan.validators, ports, options);
  // The control RPC's port and every pod port the kubelet picks avoid the fixed ones: a node that
  // has not listened yet must not find its port taken (it would fail on every restart).
  const fixedPorts = Object.values(ports).flatMap((named) => Object.values(named));
  const rpcPort = await managerPortOf(options.rpcPort, saved?.managerPort, fixedPorts);
  const shape = shapeOf(plan, saved, ports, rpcPort);
  if (saved === undefined) await saveNewChain(dir, { ...shape, seed, genesisJson });
  const compileCache = process.env.NODE_COMPILE_CACHE ?? join(dir, 'compile-cache');
  const emulator = await startDevnetEmulator({
    kubePort: options.kubePort,
    emulatorDir: join(dir, 'emulator'),
    ports,
    reservedPorts: [...fixedPorts, rpcPort],
    compileCache,
  });
  let supervisor: ManagerSupervisor | undefined;
  // Every process the devnet starts is recorded, so a devnet killed with SIGKILL can be cleaned up.
  const recorder = new ProcessRecorder(dir);
  recorder.start();
  let stopChainState = (): Promise<void> => Promise.resolve();
  const unsubscribe = emulator.store.subscribe((event) => {
    if (event.storage.endsWith('pods') && podProcessesMayChange(event))
      setTimeout(() => void recorder.poke(), 200).unref();
  });
  try {
    const kubeconfig = await emulator.writeKubeconfig(join(dir, 'kubeconfig'), {
      namespace: DEVNET_NAMESPACE,
    });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    // A token even without a manager: one started by hand from manager.env uses it. The
    // validators' preStop hook asks that manager (its URL and token) whether a pod may go.
    const token = randomBytes(24).toString('hex');
    const managerKubeconfig = await applyDevnetObjects({
      kc,
      emulator,
      dir,
      options,
      plan,
      shape,
      keys,
      token,
      genesisJson,
      rpcPort,
      resumed: saved !== undefined,
      log,
    });
    log(
      `kubernetes API ${emulator.url}; ${shape.replicas} validator(s) and a full node ${saved === undefined ? 'starting' : `resuming at height ${saved.height}`}…`,
    );
    const chainRpcUrl = chainRpcUrlOf(plan.fidelity, ports);
    const managerEnv = await writeManagerEnv({
      dir,
      options,
      fidelity: plan.fidelity,
      genesisJson,
      managerKubeconfig,
      chainRpcUrl,
      rpcPort,
      token,
      compileCache,
    });
    const info = devnetInfoOf({
      emulator,
      kubeconfig,
      plan,
      options,
      chainRpcUrl,
      token,
      dir,
      rpcPort,
      startedAt: lock.startedAt,
    });
    supervisor = supervisorOf(info, managerEnv, {
      log,
      spawned: () => void recorder.poke(),
      signal,
    });
    // The manager starts with the pods: its own start (loading, listing, reading the chain once it
    // answers) overlaps theirs instead of following it — about two seconds of every devnet start.
    const managerReady = supervisor?.start() ?? Promise.resolve();
    managerReady.catch(() => undefined);
    await waitForChain({ kc, plan, shape, saved, chainRpcUrl, signal });
    await writeFile(join(dir, 'devnet.json'), `${JSON.stringify(info, null, 2)}\n`, {
      mode: 0o600,
    });

    const chainState = startChainState(dir, shape, kc, chainRpcUrl);
    stopChainState = () => chainState.stop();
    await managerReady;
    // On disk before the devnet says it is ready: a devnet killed right after (SIGKILL) must have
    // its manager in the record, or `devnet reset` and the next start cannot stop it (its folder
    // is not inside the devnet's, so only the record names it).
    await recorder.poke();
    if (supervisor?.child !== undefined) log(`manager ${info.managerUrl ?? ''} synced`);
    await lock.update({ kubeApi: info.kubeApi, chain: info.chainRpcUrl, manager: info.managerUrl });
    if (supervisor !== undefined) supervisor.supervising = options.restartManagerOnExit === true;
    return devnetHandle({
      info,
      emulator,
      supervisor,
      dir,
      log,
      stopChainState,
      unsubscribe,
      recorder,
      lock,
    });
  } catch (error: unknown) {
    // A manager still opening its log file is not started at all.
    await supervisor?.abandon();
    await stopChainState();
    unsubscribe();
    await emulator.stop();
    await recorder.stop();
    throw error;
  }
}

/** Until the pods are Ready and the chain is up: its validators staked, or (resumed) its height back. */
async function waitForChain(parts: {
  kc: KubeConfig;
  plan: ChainPlan;
  shape: ChainShape;
  saved: SavedChain | undefined;
  chainRpcUrl: string;
  signal: AbortSignal;
}): Promise<void> {
  const { kc, plan, shape, saved, chainRpcUrl, signal } = parts;
  await waitForPods(kc, Math.min(plan.validators, shape.replicas) + 1, {
    timeoutMs: 60_000,
    signal,
  });
  if (saved === undefined)
    await waitForStaked(chainRpcUrl, plan.validators, { timeoutMs: 30_000, signal });
  else await waitForHeight(chainRpcUrl, saved.height, { timeoutMs: 30_000, signal });
}

/** Keeps chain/state.json current (replicas, height) for `--resume`. */
function startChainState(
  dir: string,
  shape: ChainShape,
  kc: KubeConfig,
  chainRpcUrl: string,
): ChainStateRecorder {
  const chainState = new ChainStateRecorder({
    dir,
    shape,
    kubeConfig: kc,
    chainRpcUrl,
    namespace: DEVNET_NAMESPACE,
    statefulSet: VALIDATOR_STATEFULSET,
  });
  chainState.start();
  return chainState;
}

/** A devnet that died without stopping (SIGKILL) left its lock and maybe its processes. */
async function stopLeftoversOf(
  dir: string,
  lock: DevnetLock,
  log: (line: string) => void,
): Promise<void> {
  const stopped = await stopLeftovers(dir);
  if (lock.takenOverFrom !== undefined || stopped.length > 0)
    log(
      `${dir} was left by a devnet that is gone` +
        `${lock.takenOverFrom === undefined ? '' : ` (pid ${lock.takenOverFrom.process.pid})`}; ` +
        `stopped ${stopped.length} process(es) it left running`,
    );
}

/** The chain's shape as chain/state.json keeps it (a resumed chain's replicas and height). */
function shapeOf(
  plan: ChainPlan,
  saved: SavedChain | undefined,
  ports: Record<string, Record<string, number>>,
  rpcPort: number,
): ChainShape {
  return {
    validators: plan.validators,
    keys: plan.keyCount,
    pacemaker: plan.pacemaker,
    blockIntervalMs: plan.blockIntervalMs,
    ...(plan.fidelity === 'intended' ? {} : { fidelity: plan.fidelity }),
    ports,
    replicas: saved?.replicas ?? plan.validators,
    height: saved?.height ?? 0,
    managerPort: rpcPort,
  };
}

/** Where the chain is read: V1's full nodes never leave genesis (no state sync), so validator-001. */
function chainRpcUrlOf(
  fidelity: 'intended' | 'v1',
  ports: Record<string, Record<string, number>>,
): string {
  return fidelity === 'v1'
    ? `http://127.0.0.1:${ports[`${VALIDATOR_STATEFULSET}-0`]?.rpc ?? 0}`
    : `http://127.0.0.1:${ports[`${FULL_NODE_STATEFULSET}-0`]?.rpc ?? 0}`;
}

/** devnet.json's content. */
function devnetInfoOf(parts: {
  emulator: Emulator;
  kubeconfig: string;
  plan: ChainPlan;
  options: DevnetOptions;
  chainRpcUrl: string;
  token: string;
  dir: string;
  rpcPort: number;
  startedAt: DevnetLock['startedAt'];
}): DevnetInfo {
  const { plan, options, rpcPort, dir } = parts;
  return {
    kubeApi: parts.emulator.url,
    kubeconfig: parts.kubeconfig,
    namespace: DEVNET_NAMESPACE,
    statefulSet: VALIDATOR_STATEFULSET,
    validators: plan.validators,
    keys: plan.keyCount,
    pacemaker: plan.pacemaker,
    blockIntervalMs: plan.blockIntervalMs,
    txMode: options.txMode,
    ...(plan.fidelity === 'intended' ? {} : { fidelity: plan.fidelity }),
    chainRpcUrl: parts.chainRpcUrl,
    managerUrl: options.manager ? `http://127.0.0.1:${rpcPort}` : null,
    token: parts.token,
    managerLog: options.manager ? join(dir, 'manager.log') : null,
    dir,
    managerRpcUrl: `http://127.0.0.1:${rpcPort}`,
    pid: process.pid,
    startedAt: parts.startedAt,
  };
}

/** The manager's supervisor, or none without a manager (`manager: false`). */
function supervisorOf(
  info: DevnetInfo,
  env: Record<string, string>,
  parts: { log: (line: string) => void; spawned: () => void; signal: AbortSignal },
): ManagerSupervisor | undefined {
  const { managerUrl, managerLog } = info;
  if (managerUrl === null || managerLog === null) return undefined;
  return new ManagerSupervisor({
    entry: BIN.clusterManager,
    env,
    home: info.dir,
    logFile: managerLog,
    url: managerUrl,
    log: parts.log,
    spawned: parts.spawned,
    waitReady: (child) =>
      waitForManager(managerUrl, child, { timeoutMs: 60_000, signal: parts.signal }),
  });
}

/** The running devnet: its manager's controls, and the stop of everything in order. */
function devnetHandle(parts: {
  info: DevnetInfo;
  emulator: Emulator;
  supervisor: ManagerSupervisor | undefined;
  dir: string;
  log: (line: string) => void;
  stopChainState: () => Promise<void>;
  unsubscribe: () => void;
  recorder: ProcessRecorder;
  lock: DevnetLock;
}): Devnet {
  const { info, emulator, supervisor, dir, log, lock } = parts;
  return {
    info,
    emulator,
    get manager() {
      return supervisor?.child;
    },
    restartManager: async () => {
      await supervisor?.restart();
    },
    killManager: async (signal) => {
      await supervisor?.kill(signal);
    },
    stop: async () => {
      supervisor?.stopping();
      // Controllers first: under load they would go on creating pods while the manager stops.
      emulator.stopControllers();
      await supervisor?.kill('SIGTERM');
      // A file that cannot be rewritten (its folder gone) must not leave the nodes running.
      await markStopped(dir, info).catch((error: unknown) =>
        log(
          `could not mark devnet.json stopped: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
      await parts.stopChainState();
      parts.unsubscribe();
      await emulator.stop();
      await parts.recorder.stop();
      await lock.release();
    },
  };
}

/** The shape of the chain to start: a resumed chain's own, else the flags'; checked. */
async function planChain(
  options: DevnetOptions,
  dir: string,
  saved: SavedChain | undefined,
): Promise<ChainPlan> {
  if (options.resume === true && saved === undefined)
    throw new Error(`--resume: ${dir} holds no chain to resume; start without --resume`);
  const unresumable = saved === undefined ? undefined : notResumable(dir, join(dir, 'emulator'));
  if (unresumable !== undefined) throw new Error(unresumable);
  // A resumed chain keeps its shape; the flags only shape a new one.
  const validators = saved?.validators ?? options.validators;
  const pacemaker = saved?.pacemaker ?? options.pacemaker;
  const blockIntervalMs = saved?.blockIntervalMs ?? options.blockIntervalMs;
  const fidelity =
    saved === undefined ? (options.fidelity ?? 'intended') : (saved.fidelity ?? 'intended');
  const keyCount = saved?.keys ?? Math.min(999, options.keys ?? Math.max(32, validators * 2));
  if (validators < 1 || validators > keyCount)
    throw new Error(`--validators must be 1…${keyCount}`);
  if (options.rpcPort !== 0 && !(await isPortFree(options.rpcPort))) {
    throw new Error(`port ${options.rpcPort} is in use; pass --rpc-port 0 or another port`);
  }
  return { validators, pacemaker, blockIntervalMs, fidelity, keyCount };
}

/** A resumed chain's pods get their ports back: refused, naming them, when any is taken. */
async function checkResumedPorts(saved: SavedChain): Promise<void> {
  const taken: string[] = [];
  for (const [pod, ports] of Object.entries(saved.ports))
    for (const [name, port] of Object.entries(ports))
      if (!(await isPortFree(port))) taken.push(`${port} (${pod} ${name})`);
  if (taken.length > 0)
    throw new Error(
      `--resume: the chain's ports are in use: ${taken.join(', ')}; free them or start without --resume`,
    );
}

/**
 * Genesis names each genesis validator's p2p address, so those ports are fixed up front; the
 * process kubelet hands them to the pods of those ordinals. The full node's RPC is fixed too.
 */
async function fixPorts(validators: number): Promise<Record<string, Record<string, number>>> {
  const ports: Record<string, Record<string, number>> = {};
  const fixed = await freePorts(validators * 2 + 1);
  for (let ordinal = 0; ordinal < validators; ordinal++)
    ports[`${VALIDATOR_STATEFULSET}-${ordinal}`] = {
      rpc: fixed[ordinal * 2] ?? 0,
      p2p: fixed[ordinal * 2 + 1] ?? 0,
    };
  ports[`${FULL_NODE_STATEFULSET}-0`] = { rpc: fixed[validators * 2] ?? 0 };
  return ports;
}

/** A new chain's genesis: the first `validators` keys staked at their fixed p2p ports. */
function newGenesisJson(
  keys: Parameters<typeof buildGenesis>[0]['keys'],
  validators: number,
  ports: Record<string, Record<string, number>>,
  options: DevnetOptions,
): string {
  return JSON.stringify(
    buildGenesis({
      keys,
      validators,
      serviceUrl: (slot) =>
        `127.0.0.1:${ports[`${VALIDATOR_STATEFULSET}-${slot.ordinal}`]?.p2p ?? 0}`,
      ...(options.unstakingBlocks === undefined
        ? {}
        : { unstakingBlocks: options.unstakingBlocks }),
    }),
    null,
    2,
  );
}

/**
 * The manager's control RPC port: the flag's, else (a resumed chain) its last one when free —
 * the validators' preStop hook names it — else a free one beside the fixed ports.
 */
async function managerPortOf(
  flag: number,
  lastPort: number | undefined,
  fixedPorts: number[],
): Promise<number> {
  if (flag !== 0) return flag;
  if (lastPort !== undefined && (await isPortFree(lastPort))) return lastPort;
  return (await freePorts(1, fixedPorts))[0] ?? 0;
}

/** The devnet's cluster: HTTPS, RBAC, the process kubelet running the node image. */
function startDevnetEmulator(parts: {
  kubePort: number;
  emulatorDir: string;
  ports: Record<string, Record<string, number>>;
  reservedPorts: number[];
  compileCache: string;
}): Promise<Emulator> {
  const { ports } = parts;
  return startEmulator({
    port: parts.kubePort,
    dir: parts.emulatorDir,
    // The cluster's objects, kept for `--resume` (read back here when resuming: resume.ts).
    stateFile: objectsFile(parts.emulatorDir),
    // As on a cluster: HTTPS (kubectl sends a token over nothing else), requests need a token,
    // and the manager's account gets what k8s/base's Role allows and no more (manager-identity.ts).
    https: true,
    rbac: true,
    kubelet: {
      mode: 'process',
      images: { [NODE_IMAGE]: nodeImage() },
      // The ports fixed for the chain (or the resumed chain's); any other port is a free one.
      reservedPorts: parts.reservedPorts,
      // When the devnet stops, the whole chain stops: a validator's SIGTERM drain (voting until it
      // leaves the active set) cannot end, so the kubelet's default 3 s grace was 3 s of every
      // stop. 1 s lets a node that does not drain close cleanly; the data dirs survive SIGKILL
      // (test/localnet/restart-from-data-dir.test.ts). Pod deletions keep their own grace period.
      stopGraceMs: 1_000,
      hostPort: (pod, port) =>
        pod.namespace === DEVNET_NAMESPACE && port.name !== undefined
          ? ports[pod.name]?.[port.name]
          : undefined,
      env: {
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        // The pods' node processes share one compile cache: after the first, each starts without
        // compiling or type-stripping the sources again (about half the start time).
        NODE_COMPILE_CACHE: parts.compileCache,
      },
    },
  }).catch((error: unknown) => {
    // The objects of the last run cannot be read back: say which file and what to do.
    if (error instanceof SnapshotError)
      throw new Error(
        `--resume: ${error.message}; start without --resume for a fresh devnet (the chain's nodes keep their data only with their cluster)`,
      );
    throw error;
  });
}

/** The devnet's objects (namespace, Secrets, genesis, Services, StatefulSets) and the manager's identity; returns its kubeconfig. */
async function applyDevnetObjects(parts: {
  kc: KubeConfig;
  emulator: Emulator;
  dir: string;
  options: DevnetOptions;
  plan: {
    pacemaker: ChainShape['pacemaker'];
    blockIntervalMs: number;
    fidelity: 'intended' | 'v1';
  };
  shape: ChainShape;
  keys: ReturnType<typeof generateKeys>;
  token: string;
  genesisJson: string;
  rpcPort: number;
  resumed: boolean;
  log: (line: string) => void;
}): Promise<string> {
  const { emulator, options, plan, keys } = parts;
  const objects = KubernetesObjectApi.makeApiClient(parts.kc);
  const settings = {
    pacemaker: plan.pacemaker,
    blockIntervalMs: plan.blockIntervalMs,
    ...(plan.fidelity === 'intended' ? {} : { fidelity: plan.fidelity }),
    ...(options.nodeShutdownDrainMs === undefined
      ? {}
      : { shutdownDrainMs: options.nodeShutdownDrainMs }),
  };
  const departure = {
    managerUrl: `http://127.0.0.1:${parts.rpcPort}`,
    hookTimeoutSeconds: options.departureTimeoutSeconds ?? DEFAULT_DEPARTURE_TIMEOUT_SECONDS,
  };
  const manifests = [
    namespace(),
    keysSecret(new Map([...keys].map(([id, key]) => [id, key.exportPrivateKeyHex()]))),
    managerTokenSecret(parts.token),
    genesisConfigMap(parts.genesisJson),
    ...services(),
    fullNodeStatefulSet(settings),
    validatorStatefulSet(parts.shape.replicas, settings, departure),
  ];
  await applyManifests(objects, manifests, { resumed: parts.resumed, log: parts.log });
  return applyManagerIdentity({
    objects,
    emulator,
    namespace: DEVNET_NAMESPACE,
    path: join(parts.dir, 'manager-kubeconfig'),
  });
}

/** The manager's environment, also written to manager.env (for a manager started by hand). */
async function writeManagerEnv(parts: {
  dir: string;
  options: DevnetOptions;
  fidelity: 'intended' | 'v1';
  genesisJson: string;
  managerKubeconfig: string;
  chainRpcUrl: string;
  rpcPort: number;
  token: string;
  compileCache: string;
}): Promise<Record<string, string>> {
  const { dir, options, fidelity } = parts;
  const cliEnv =
    options.txMode !== 'cli'
      ? {}
      : fidelity === 'v1'
        ? await p1Files(dir, BIN.localnetCli, parts.genesisJson)
        : { CM_POCKET_V1_CLI_PATH: BIN.localnetCli };
  const managerEnv: Record<string, string> = {
    KUBECONFIG: parts.managerKubeconfig,
    CM_NAMESPACE: DEVNET_NAMESPACE,
    CM_CHAIN_RPC_URL: parts.chainRpcUrl,
    CM_SERVICE_URL_TEMPLATE: '{podIP}:{port:p2p}',
    CM_POCKET_V1_TX_MODE: options.txMode,
    CM_POCKET_V1_PROFILE: fidelity,
    ...cliEnv,
    CM_RPC_HOST: '127.0.0.1',
    CM_RPC_PORT: String(parts.rpcPort),
    CM_RPC_TOKEN: parts.token,
    CM_JOURNAL_PATH: join(dir, 'journal.sqlite'),
    CM_READY_DEBOUNCE: '1s',
    NODE_COMPILE_CACHE: parts.compileCache,
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
  return managerEnv;
}

/**
 * Rewrites devnet.json of a devnet that stopped: `stoppedAt`, and no token — a stopped devnet's
 * port may be another server's soon, and its token is nobody's to send. (The CLIs also check the
 * lock: a devnet killed with SIGKILL cannot do this.) `--resume` and `devnet reset` need nothing
 * of this file: the chain is kept in chain/, and a start writes a new devnet.json.
 */
async function markStopped(dir: string, info: DevnetInfo): Promise<void> {
  const path = join(dir, 'devnet.json');
  const aside = `${path}.${randomBytes(4).toString('hex')}`;
  const stopped: DevnetInfo = { ...info, token: null, stoppedAt: new Date().toISOString() };
  await writeFile(aside, `${JSON.stringify(stopped, null, 2)}\n`, { mode: 0o600 });
  await rename(aside, path);
}

/**
 * How often a start looks again (pods Ready, validators staked, the manager ready): every step of
 * every start waited half of it on average, and a devnet is started by most test files.
 */
const POLL_MS = 50;

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
    await pause(POLL_MS, limits.signal);
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
    await pause(POLL_MS, limits.signal);
  }
}

/**
 * Checks that a resumed chain came back at the height it had reached. Its Ready full node answers
 * with what it restored; a lower height means its nodes did not keep their blocks (a chain that
 * starts again from genesis would pass the old height later, on another history: not waited for).
 */
async function waitForHeight(url: string, height: number, limits: WaitLimits): Promise<void> {
  const chain = new PocketRpcClient({ baseUrl: url, timeoutMs: 2_000 });
  const deadline = Date.now() + limits.timeoutMs;
  for (;;) {
    let now: number | undefined;
    let seen: string;
    try {
      now = await chain.height();
      seen = `height ${now}`;
    } catch (error: unknown) {
      seen = error instanceof Error ? error.message : String(error);
    }
    if (now !== undefined && now >= height) return;
    if (now !== undefined || Date.now() > deadline)
      throw new Error(
        `--resume: the chain came back at ${seen}, below the height ${height} it had reached: its nodes did not keep their blocks; start without --resume for a fresh devnet`,
      );
    await pause(POLL_MS, limits.signal);
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
    await pause(POLL_MS, limits.signal);
  }
}
