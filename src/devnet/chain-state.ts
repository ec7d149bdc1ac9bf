// What a devnet keeps of its chain in `<dir>/chain/`, so that `--resume` brings the same chain
// back: the seed its keys derive from (mode 600: the devnet's throwaway keys, like the keys the
// process kubelet writes into each pod's Secret volume), the genesis, the chain's shape, every
// pod's host ports (validators staked with them as their service URLs), the replicas and the
// height reached. Kept current while the devnet runs.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { PocketRpcClient } from '../pocket/index.ts';

export const CHAIN_DIR = 'chain';
const HOST_PORTS = 'kube-emulator.dev/host-ports';

export interface ChainShape {
  validators: number;
  keys: number;
  pacemaker: 'auto' | 'manual';
  blockIntervalMs: number;
  /** The nodes' fidelity profile (absent in chains saved before it existed: intended). */
  fidelity?: 'intended' | 'v1';
  /** Pod name → container port name → the loopback port it was published on. */
  ports: Record<string, Record<string, number>>;
  replicas: number;
  /** The highest height the devnet saw its chain reach. */
  height: number;
  /** The port its manager's control RPC listened on last (absent in older chains). */
  managerPort?: number;
}

export interface SavedChain extends ChainShape {
  seed: string;
  genesisJson: string;
}

/** A fresh seed for a new chain's keys (hex). */
export function newSeed(): string {
  return randomBytes(32).toString('hex');
}

/** The chain kept in `<dir>/chain/`, or undefined when there is none (or it is incomplete). */
export async function readSavedChain(dir: string): Promise<SavedChain | undefined> {
  const folder = join(dir, CHAIN_DIR);
  try {
    const [seed, genesisJson, shape] = await Promise.all([
      readFile(join(folder, 'seed'), 'utf8'),
      readFile(join(folder, 'genesis.json'), 'utf8'),
      readFile(join(folder, 'state.json'), 'utf8'),
    ]);
    const parsed = JSON.parse(shape) as ChainShape;
    if (!/^[0-9a-f]{64}$/.test(seed.trim()) || !Number.isInteger(parsed.validators))
      return undefined;
    return { ...parsed, seed: seed.trim(), genesisJson };
  } catch {
    return undefined;
  }
}

/** Writes a new chain's seed and genesis, and its shape. */
export async function saveNewChain(dir: string, chain: SavedChain): Promise<void> {
  const folder = join(dir, CHAIN_DIR);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await writeFile(join(folder, 'seed'), `${chain.seed}\n`, { mode: 0o600 });
  await writeFile(join(folder, 'genesis.json'), chain.genesisJson, { mode: 0o600 });
  const { seed: _seed, genesisJson: _genesis, ...shape } = chain;
  await writeShape(dir, shape);
}

async function writeShape(dir: string, shape: ChainShape): Promise<void> {
  const path = join(dir, CHAIN_DIR, 'state.json');
  const aside = `${path}.${randomBytes(4).toString('hex')}`;
  await writeFile(aside, `${JSON.stringify(shape, null, 2)}\n`, { mode: 0o600 });
  await rename(aside, path);
}

/**
 * Keeps `<dir>/chain/state.json` current: the pods' published ports, the validator replicas and
 * the chain's height, read every `intervalMs`, on `poke()` and once more on `stop()`.
 */
export class ChainStateRecorder {
  readonly #dir: string;
  readonly #shape: ChainShape;
  readonly #core: CoreV1Api;
  readonly #apps: AppsV1Api;
  readonly #chain: PocketRpcClient;
  readonly #namespace: string;
  readonly #statefulSet: string;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #written = '';

  constructor(options: {
    dir: string;
    shape: ChainShape;
    kubeConfig: KubeConfig;
    chainRpcUrl: string;
    namespace: string;
    statefulSet: string;
  }) {
    this.#dir = options.dir;
    this.#shape = structuredClone(options.shape);
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#apps = options.kubeConfig.makeApiClient(AppsV1Api);
    this.#chain = new PocketRpcClient({ baseUrl: options.chainRpcUrl, timeoutMs: 2_000 });
    this.#namespace = options.namespace;
    this.#statefulSet = options.statefulSet;
  }

  start(intervalMs = 2_000): void {
    this.poke();
    this.#timer = setInterval(() => this.poke(), intervalMs);
    this.#timer.unref();
  }

  poke(): void {
    this.#writing = this.#writing.then(() => this.#record()).catch(() => undefined);
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.poke();
    await this.#writing;
  }

  async #record(): Promise<void> {
    const shape = this.#shape;
    const [pods, sts, height] = await Promise.all([
      this.#core.listNamespacedPod({ namespace: this.#namespace }).catch(() => undefined),
      this.#apps
        .readNamespacedStatefulSet({ name: this.#statefulSet, namespace: this.#namespace })
        .catch(() => undefined),
      this.#chain.height().catch(() => undefined),
    ]);
    for (const pod of pods?.items ?? []) {
      const published = pod.metadata?.annotations?.[HOST_PORTS];
      const name = pod.metadata?.name;
      if (published === undefined || name === undefined) continue;
      try {
        shape.ports[name] = JSON.parse(published) as Record<string, number>;
      } catch {
        // not ours to judge
      }
    }
    if (sts?.spec?.replicas !== undefined) shape.replicas = sts.spec.replicas;
    if (height !== undefined) shape.height = Math.max(shape.height, height);
    const text = JSON.stringify(shape);
    if (text === this.#written) return;
    await writeShape(this.#dir, shape);
    this.#written = text;
  }
}
