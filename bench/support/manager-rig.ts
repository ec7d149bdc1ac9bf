// The rig of the manager benchmarks: the Kubernetes API emulator with the simulated kubelet, a
// keys Secret and a validator StatefulSet (Parallel), one localnet node as the chain (a full node
// with a manual pacemaker: it admits transactions; nothing needs to commit), a bare client-node
// informer on the pods as the floor's observer, and the manager itself as a child process
// (`cluster-manager run`), so its CPU time and peak RSS are its own. Every timestamp is
// `performance.now()` of this process: when the emulator wrote a pod Ready, when the bare
// informer saw it, when the node admitted a validator's stake.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type Informer,
  type V1Pod,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { bundle } from '../../scripts/bundle.ts';
import { BIN } from '../../src/devnet/devnet.ts';
import { freePorts } from '../../src/devnet/ports.ts';
import { startEmulator, type Emulator } from '../../src/kube-emulator/index.ts';
import { buildGenesis, startNode, type RunningNode } from '../../src/localnet/index.ts';
import { generateKeys, type ValidatorKey } from '../../src/pocket/index.ts';

export const NAMESPACE = 'bench';
const LABELS = { 'pokt.network/purpose': 'validator' };

export interface RigOptions {
  /** Keys in the Secret (and funded accounts in genesis); at most 999. */
  keys: number;
  /** Replicas at start; the first `staked` ids are staked at genesis. */
  replicas: number;
  staked: number;
  /** Simulated kubelet: creation → Running → Ready delays (ms). */
  pendingMs?: number;
  readyMs?: number;
  /**
   * A chain that commits: the node runs as validator 001 with an automatic pacemaker at this
   * interval, and the other genesis validators are paused on chain (staked, out of the active
   * set), so one node commits alone. Without it the node is a full node at height 0.
   */
  blockIntervalMs?: number;
}

export interface ManagerProcess {
  readonly pid: number;
  readonly url: string;
  readonly child: ChildProcess;
  /** CPU time (user + system) used so far, in ms. */
  cpuMs(): Promise<number>;
  /** Peak resident set size so far, in MiB. */
  peakRssMiB(): Promise<number>;
  stop(): Promise<void>;
}

const CLOCK_TICKS_PER_SECOND = 100;

export class Rig {
  readonly emulator: Emulator;
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly keys: Map<string, ValidatorKey>;
  readonly node: RunningNode;
  readonly dir: string;
  readonly kubeconfig: string;
  /** Address → when the node first admitted a transaction signed by it. */
  readonly admitted = new Map<string, number>();
  /** Pod name → when the emulator wrote it Ready (latest Ready spell). */
  readonly readyWritten = new Map<string, number>();
  /** Pod name → when the bare informer first saw it Ready. */
  readonly readySeen = new Map<string, number>();
  readonly #informer: Informer<V1Pod>;
  readonly #unsubscribe: () => void;
  #manager: ManagerProcess | undefined;
  #observing = true;

  private constructor(parts: {
    emulator: Emulator;
    kc: KubeConfig;
    keys: Map<string, ValidatorKey>;
    node: RunningNode;
    dir: string;
    kubeconfig: string;
  }) {
    this.emulator = parts.emulator;
    this.kc = parts.kc;
    this.core = parts.kc.makeApiClient(CoreV1Api);
    this.apps = parts.kc.makeApiClient(AppsV1Api);
    this.keys = parts.keys;
    this.node = parts.node;
    this.dir = parts.dir;
    this.kubeconfig = parts.kubeconfig;
    // When the node admits a transaction (the instrumentation: the call is passed through as is).
    const node = this.node.node;
    const submit = node.submit.bind(node);
    node.submit = (bytes) => {
      const tx = submit(bytes);
      if (!this.admitted.has(tx.signerAddress))
        this.admitted.set(tx.signerAddress, performance.now());
      return tx;
    };
    this.#unsubscribe = this.emulator.store.subscribe((event) => {
      if (event.storage !== '/pods' || event.type === 'DELETED') return;
      const name = event.object.metadata.name ?? '';
      if (hasReadyCondition(event.object) && !hasReadyCondition(event.previous))
        this.readyWritten.set(name, performance.now());
    });
    this.#informer = makeInformer(this.kc, `/api/v1/namespaces/${NAMESPACE}/pods`, () =>
      this.core.listNamespacedPod({ namespace: NAMESPACE }),
    );
    const seen = (pod: V1Pod): void => {
      const name = pod.metadata?.name ?? '';
      if (isReady(pod) && !this.readySeen.has(name)) this.readySeen.set(name, performance.now());
      if (!isReady(pod)) this.readySeen.delete(name);
    };
    this.#informer.on('add', seen);
    this.#informer.on('update', seen);
  }

  static async start(options: RigOptions): Promise<Rig> {
    const dir = await mkdtemp(join(tmpdir(), 'cm-bench-'));
    const emulator = await startEmulator({
      dir: join(dir, 'emulator'),
      namespaces: [NAMESPACE],
      kubelet: {
        mode: 'simulated',
        pendingMs: options.pendingMs ?? 20,
        readyMs: options.readyMs ?? 20,
      },
      historySize: 50_000,
    });
    const kubeconfig = await emulator.writeKubeconfig(join(dir, 'kubeconfig'), {
      namespace: NAMESPACE,
    });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const keys = generateKeys({ count: options.keys, seed: 'bench-manager' });
    // Service URLs on loopback ports where nothing listens: the node's gossip to its "peers"
    // fails at once instead of waiting on DNS for cluster names.
    const genesis = buildGenesis({
      keys,
      validators: options.staked,
      serviceUrl: (slot) => `127.0.0.1:${slot.ordinal + 1}`,
    });
    const committing = options.blockIntervalMs !== undefined;
    if (committing)
      for (const validator of genesis.validators)
        if (validator.address !== keys.get('001')?.address) validator.paused_height = 0;
    const node = await startNode({
      genesis,
      key: committing ? keys.get('001') : undefined,
      host: '127.0.0.1',
      rpcPort: 0,
      p2pPort: 0,
      pacemaker: committing ? 'auto' : 'manual',
      ...(committing ? { blockIntervalMs: options.blockIntervalMs } : {}),
      logger: pino({ level: 'silent' }),
    });
    const rig = new Rig({ emulator, kc, keys, node, dir, kubeconfig });
    await rig.core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'validators-private-keys' },
        stringData: Object.fromEntries([...keys].map(([id, k]) => [id, k.exportPrivateKeyHex()])),
      },
    });
    await rig.apps.createNamespacedStatefulSet({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'validator' },
        spec: {
          replicas: options.replicas,
          serviceName: 'validators',
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: LABELS },
          template: {
            metadata: { labels: LABELS },
            spec: {
              containers: [
                {
                  name: 'node',
                  image: 'localnet-node:dev',
                  ports: [
                    { name: 'rpc', containerPort: 50832 },
                    { name: 'p2p', containerPort: 42069 },
                  ],
                },
              ],
            },
          },
        },
      },
    });
    await rig.#informer.start();
    await rig.waitFor(() => rig.readySeen.size >= options.replicas, 60_000, 'the first pods');
    return rig;
  }

  #image: Promise<ManagerImage> | undefined;

  /** The image's entry point and Node environment for the manager, prepared once per rig. */
  #managerImage(): Promise<ManagerImage> {
    this.#image ??= managerImage(this.dir);
    return this.#image;
  }

  /** Starts `cluster-manager run` against the rig; resolves once /readyz answers 200. */
  async startManager(env: Record<string, string> = {}): Promise<ManagerProcess> {
    const [port] = await freePorts(1);
    const url = `http://127.0.0.1:${port ?? 0}`;
    const log = createWriteStream(join(this.dir, 'manager.log'), { flags: 'a' });
    await new Promise((resolve) => log.once('open', resolve));
    const image = await this.#managerImage();
    const child = spawn(process.execPath, [...image.nodeFlags, image.entry, 'run'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: this.dir,
        KUBECONFIG: this.kubeconfig,
        CM_NAMESPACE: NAMESPACE,
        CM_CHAIN_RPC_URL: this.node.rpcUrl,
        CM_RPC_HOST: '127.0.0.1',
        CM_RPC_PORT: String(port),
        CM_JOURNAL_PATH: join(this.dir, `journal-${Date.now()}.sqlite`),
        CM_SERVICE_URL_TEMPLATE: '127.0.0.1:{ordinal}',
        ...image.env,
        ...env,
      },
      stdio: ['ignore', log, log],
    });
    child.once('exit', () => log.end());
    const pid = child.pid ?? -1;
    const stat = async (): Promise<string[]> =>
      (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
    const manager: ManagerProcess = {
      pid,
      url,
      child,
      cpuMs: async () => {
        const fields = await stat();
        // utime and stime are fields 14 and 15 of /proc/<pid>/stat (11 and 12 after the name).
        return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
      },
      peakRssMiB: async () => {
        const status = await readFile(`/proc/${pid}/status`, 'utf8');
        const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 'NaN');
        return kb / 1024;
      },
      stop: async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      },
    };
    this.#manager = manager;
    await this.waitForAsync(
      async () => {
        if (child.exitCode !== null) throw new Error('the manager exited; see manager.log');
        const response = await fetch(`${url}/readyz`).catch(() => undefined);
        return response?.status === 200;
      },
      60_000,
      'the manager to be ready',
    );
    return manager;
  }

  /** Patches the StatefulSet's scale subresource (what `kubectl scale` does). */
  async scale(replicas: number): Promise<void> {
    await this.apps.patchNamespacedStatefulSetScale(
      { name: 'validator', namespace: NAMESPACE, body: { spec: { replicas } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  addressOf(id: string): string {
    const key = this.keys.get(id);
    if (key === undefined) throw new Error(`no key ${id}`);
    return key.address;
  }

  /** Polls a synchronous condition every 2 ms (benchmark waits must not add much). */
  async waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!condition()) {
      if (performance.now() > deadline) throw new Error(`benchmark: timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  async waitForAsync(
    condition: () => Promise<boolean>,
    timeoutMs: number,
    what: string,
  ): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!(await condition())) {
      if (performance.now() > deadline) throw new Error(`benchmark: timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops the bare informer (so that the API server's request log holds the manager's only). */
  async stopObserver(): Promise<void> {
    if (!this.#observing) return;
    this.#observing = false;
    this.#unsubscribe();
    await this.#informer.stop();
  }

  async stop(): Promise<void> {
    await this.#manager?.stop();
    await this.stopObserver();
    await this.node.stop();
    await this.emulator.stop();
    // BENCH_KEEP=1 keeps the rig's folder (the manager's log, its journal) to look into a run.
    if (process.env.BENCH_KEEP === '1') process.stderr.write(`bench: kept ${this.dir}\n`);
    else await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * The Node options of the manager's process: those the image sets (the Dockerfile's
 * cluster-manager stage, `ENV NODE_OPTIONS`), so that the figures are production's, plus
 * BENCH_MANAGER_NODE_OPTIONS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p` to profile the manager).
 */
export async function managerNodeOptions(): Promise<string> {
  const dockerfile = await readFile(new URL('../../Dockerfile', import.meta.url), 'utf8');
  const stage = dockerfile.slice(dockerfile.indexOf('AS cluster-manager'));
  const image = /^ENV NODE_OPTIONS="([^"]*)"/m.exec(stage)?.[1] ?? '';
  return [image, process.env.BENCH_MANAGER_NODE_OPTIONS ?? ''].join(' ').trim();
}

/**
 * How the image starts the manager: its entry point (the Dockerfile's cluster-manager
 * ENTRYPOINT; the bundle of `npm run build`, ADR 0021, is built into `dir` for this rig), its
 * NODE_OPTIONS as above and allocator settings, and, when the image fills a compile cache at
 * build time (the `warm-compile-cache.ts cluster-manager` step), one filled the same way in
 * `dir`, so that the manager starts as it does in the image.
 */
const WARM_COMPILE_CACHE = fileURLToPath(
  new URL('../../src/bin/warm-compile-cache.ts', import.meta.url),
);

interface ManagerImage {
  entry: string;
  /** Node's own flags on the ENTRYPOINT's command line, before the script. */
  nodeFlags: string[];
  env: Record<string, string>;
}

async function managerImage(dir: string): Promise<ManagerImage> {
  const options = await managerNodeOptions();
  const dockerfile = await readFile(new URL('../../Dockerfile', import.meta.url), 'utf8');
  const stage = dockerfile.slice(dockerfile.indexOf('AS cluster-manager'));
  const malloc = mallocEnv(stage);
  const nodeFlags = entrypointNodeFlags(stage);
  const bundled = /^ENTRYPOINT \[.*"\/app\/dist\/cluster-manager\.mjs"\]$/m.test(stage);
  const dist = join(dir, 'dist');
  const entry = bundled ? (await bundle(dist))['cluster-manager'] : BIN.clusterManager;
  const warm =
    /^RUN node \/app\/src\/bin\/warm-compile-cache\.ts cluster-manager( \/app\/dist)?$/m.exec(
      stage,
    );
  if (warm === null) return { entry, nodeFlags, env: { NODE_OPTIONS: options, ...malloc } };
  const cacheDir = join(dir, 'compile-cache');
  const env = { PATH: process.env.PATH ?? '', NODE_OPTIONS: options, NODE_COMPILE_CACHE: cacheDir };
  const warmArgs = warm[1] === undefined ? ['cluster-manager'] : ['cluster-manager', dist];
  await promisify(execFile)(process.execPath, [WARM_COMPILE_CACHE, ...warmArgs], { env });
  return {
    entry,
    nodeFlags,
    env: { NODE_OPTIONS: options, NODE_COMPILE_CACHE: cacheDir, ...malloc },
  };
}

/**
 * The flags a Dockerfile stage's exec-form ENTRYPOINT gives `node` itself (those between `node`
 * and the script), e.g. V8 flags that NODE_OPTIONS refuses.
 */
export function entrypointNodeFlags(stage: string): string[] {
  const line = /^ENTRYPOINT (\[.*\])$/m.exec(stage)?.[1];
  if (line === undefined) return [];
  const argv = JSON.parse(line) as string[];
  const node = argv.indexOf('node');
  if (node < 0) return [];
  const flags: string[] = [];
  for (const arg of argv.slice(node + 1)) {
    if (!arg.startsWith('-')) break;
    flags.push(arg);
  }
  return flags;
}

/** The glibc allocator settings (`ENV MALLOC_…=…`) of a Dockerfile stage. */
export function mallocEnv(stage: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of stage.split('\n').filter((l) => l.startsWith('ENV ')))
    for (const [, key, value] of line.matchAll(/\b(MALLOC_\w+)=(\S+)/g))
      if (key !== undefined && value !== undefined) env[key] = value;
  return env;
}

export function isReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** A pod object of the emulator's store with a Ready condition that is True. */
function hasReadyCondition(object: unknown): boolean {
  const pod = object as
    { status?: { conditions?: { type?: string; status?: string }[] } } | undefined;
  return pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}
