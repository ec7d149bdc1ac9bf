// A harness for scale-up and scale-down consensus tests: start a devnet in-process (or attach to
// one through its devnet.json) and ask the chain, the cluster and the manager questions whose
// answers are facts on chain — who signed which block, how many stake transactions were
// committed — with waits that time out with a readable reason.
import { readFile } from 'node:fs/promises';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import {
  startDevnet,
  type Devnet,
  type DevnetInfo,
  type DevnetOptions,
} from '../../src/devnet/devnet.ts';
import { parsePrivateKey, PocketRpcClient, type Block } from '../../src/pocket/index.ts';
import { waitFor } from './wait.ts';

export interface ScaleOptions {
  wait?: 'none' | 'staked' | 'active';
  timeoutSeconds?: number;
  drive?: boolean;
}

export interface ScaleAnswer {
  status: number;
  body: {
    done?: boolean;
    previous?: number;
    replicas?: number;
    drained?: string[];
    missing?: { id: string; phase: string; reason: string }[];
    height?: number;
    error?: { code: string; message: string };
  };
}

export type HarnessOptions = Partial<Omit<DevnetOptions, 'dir' | 'log'>> & { dir: string };

export class Harness {
  readonly info: DevnetInfo;
  readonly chain: PocketRpcClient;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly kubeConfig: KubeConfig;
  /** Present when the harness started the devnet itself (fault switches, manager restarts). */
  readonly devnet: Devnet | undefined;
  #addresses: Map<string, string> | undefined;
  readonly #blocks = new Map<number, Block>();

  private constructor(info: DevnetInfo, devnet: Devnet | undefined) {
    this.info = info;
    this.devnet = devnet;
    this.chain = new PocketRpcClient({ baseUrl: info.chainRpcUrl, timeoutMs: 10_000 });
    this.kubeConfig = new KubeConfig();
    this.kubeConfig.loadFromFile(info.kubeconfig);
    this.core = this.kubeConfig.makeApiClient(CoreV1Api);
    this.apps = this.kubeConfig.makeApiClient(AppsV1Api);
  }

  /** Starts a devnet in this process (defaults: 4 validators, manual pacemaker, RPC mode). */
  static async start(options: HarnessOptions): Promise<Harness> {
    const devnet = await startDevnet({
      validators: 4,
      kubePort: 0,
      rpcPort: 0,
      pacemaker: 'manual',
      blockIntervalMs: 500,
      txMode: 'rpc',
      manager: true,
      ...options,
    });
    return new Harness(devnet.info, devnet);
  }

  /** Attaches to a running devnet through its devnet.json. */
  static async attach(devnetJson: string): Promise<Harness> {
    const info = JSON.parse(await readFile(devnetJson, 'utf8')) as DevnetInfo;
    return new Harness(info, undefined);
  }

  async stop(): Promise<void> {
    await this.devnet?.stop();
  }

  // ---- the manager ----

  /** POST /v1/scale through the control RPC; answers with status and body. */
  async scaleTo(replicas: number, options: ScaleOptions = {}): Promise<ScaleAnswer> {
    const timeoutSeconds = options.timeoutSeconds ?? 120;
    const response = await fetch(`${this.#managerUrl()}/v1/scale`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${this.info.token ?? ''}`,
      },
      body: JSON.stringify({
        replicas,
        wait: options.wait ?? 'active',
        timeoutSeconds,
        drive: options.drive ?? this.info.pacemaker === 'manual',
      }),
      signal: AbortSignal.timeout((timeoutSeconds + 30) * 1000),
    });
    return { status: response.status, body: (await response.json()) as ScaleAnswer['body'] };
  }

  /** GET a control-RPC path as JSON. */
  async manager<T>(path: string): Promise<T> {
    const response = await fetch(`${this.#managerUrl()}${path}`, {
      signal: AbortSignal.timeout(10_000),
    });
    return (await response.json()) as T;
  }

  #managerUrl(): string {
    if (this.info.managerUrl === null) throw new Error('this devnet runs without a manager');
    return this.info.managerUrl;
  }

  // ---- the chain ----

  /** Commits one block (manual pacemaker) and returns the new height. */
  async triggerView(): Promise<number> {
    const before = await this.chain.height();
    await this.chain.debug('trigger_view');
    await this.waitForHeight(before + 1);
    return this.chain.height();
  }

  async height(): Promise<number> {
    return this.chain.height();
  }

  async waitForHeight(height: number, timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        const now = await this.chain.height();
        return now >= height ? true : `height ${now}`;
      },
      { what: `height ${height}`, timeoutMs },
    );
  }

  /** Fails unless `blocks` more blocks commit within `withinMs` (drives a manual chain). */
  async expectChainProgress(blocks: number, withinMs: number): Promise<void> {
    const start = await this.chain.height();
    const deadline = Date.now() + withinMs;
    while (
      this.info.pacemaker === 'manual' &&
      (await this.chain.height()) < start + blocks &&
      Date.now() < deadline
    ) {
      await this.chain.debug('trigger_view').catch(() => undefined);
      await waitFor(async () => ((await this.chain.height()) > start ? true : 'no block'), {
        what: 'a block',
        timeoutMs: Math.max(100, deadline - Date.now()),
      }).catch(() => undefined);
    }
    await waitFor(
      async () => {
        const now = await this.chain.height();
        return now >= start + blocks ? true : `height ${now} (started at ${start})`;
      },
      {
        what: `${blocks} new blocks within ${withinMs} ms`,
        timeoutMs: Math.max(1, deadline - Date.now()),
      },
    );
  }

  /** A committed block (cached: committed blocks never change). */
  async block(height: number): Promise<Block> {
    const cached = this.#blocks.get(height);
    if (cached !== undefined) return cached;
    const block = await this.chain.block(height);
    this.#blocks.set(height, block);
    return block;
  }

  /** Validator id → address, from the keys Secret. */
  async addresses(): Promise<Map<string, string>> {
    if (this.#addresses !== undefined) return this.#addresses;
    const secret = await this.core.readNamespacedSecret({
      name: 'validators-private-keys',
      namespace: this.info.namespace,
    });
    const map = new Map<string, string>();
    for (const [id, value] of Object.entries(secret.data ?? {}))
      map.set(id, parsePrivateKey(Buffer.from(value, 'base64').toString('utf8')).address);
    this.#addresses = map;
    return map;
  }

  async #idOf(address: string): Promise<string> {
    for (const [id, a] of await this.addresses()) if (a === address) return id;
    return address;
  }

  async #addressOf(id: string): Promise<string> {
    const address = (await this.addresses()).get(id);
    if (address === undefined) throw new Error(`no key ${id} in the Secret`);
    return address;
  }

  /** Ids whose signatures are in the certificate of the block at `height` (default: latest). */
  async activeValidators(height?: number): Promise<string[]> {
    const h = height ?? (await this.chain.height());
    const block = await this.block(h);
    const ids = await Promise.all(
      (block.block_header.quorum_cert.threshold_sig.signatures ?? []).map((s) =>
        this.#idOf(s.address),
      ),
    );
    return ids.sort();
  }

  /** Ids staked on chain now (the active set of the next height). */
  async stakedValidators(): Promise<string[]> {
    const rows = await this.chain.validators();
    const ids = await Promise.all(
      rows
        .filter((r) => r.unstaking_height < 0 && r.paused_height < 0)
        .map((r) => this.#idOf(r.address)),
    );
    return ids.sort();
  }

  /** Waits until `id` has signed a committed certificate at or after `since`. */
  async expectActive(
    id: string,
    options: { since?: number; timeoutMs?: number } = {},
  ): Promise<number> {
    const address = await this.#addressOf(id);
    const since = options.since ?? 1;
    let found = -1;
    let scanned = since - 1;
    await waitFor(
      async () => {
        const height = await this.chain.height();
        for (let h = scanned + 1; h <= height; h++) {
          const block = await this.block(h);
          scanned = h;
          if (
            (block.block_header.quorum_cert.threshold_sig.signatures ?? []).some(
              (s) => s.address === address,
            )
          ) {
            found = h;
            return true;
          }
        }
        if (this.info.pacemaker === 'manual')
          await this.chain.debug('trigger_view').catch(() => undefined);
        return `no signature of ${id} in certificates ${since}…${height}; signers at ${height}: ${(await this.activeValidators(height)).join(',')}`;
      },
      {
        what: `validator ${id} to sign a block at or after height ${since}`,
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 200,
      },
    );
    return found;
  }

  /** Waits until `id` is not staked and the next committed certificate lacks it. */
  async expectInactive(id: string, options: { timeoutMs?: number } = {}): Promise<void> {
    const address = await this.#addressOf(id);
    let outAt: number | undefined;
    await waitFor(
      async () => {
        const row = await this.chain.validator(address);
        const height = await this.chain.height();
        if (row !== undefined && row.unstaking_height < 0) {
          if (this.info.pacemaker === 'manual')
            await this.chain.debug('trigger_view').catch(() => undefined);
          return `${id} still staked at height ${height}`;
        }
        outAt ??= height;
        if (height <= outAt) {
          if (this.info.pacemaker === 'manual')
            await this.chain.debug('trigger_view').catch(() => undefined);
          return `${id} unstaked at ${outAt}; waiting for the next block`;
        }
        const signers = await this.activeValidators(height);
        return signers.includes(id) ? `${id} still signs at height ${height}` : true;
      },
      {
        what: `validator ${id} to leave the set`,
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 200,
      },
    );
  }

  /** Stake (or unstake) transactions of `id` committed in blocks 1…latest. */
  async transactions(id: string, type: 'MessageStake' | 'MessageUnstake'): Promise<number> {
    const address = await this.#addressOf(id);
    const height = await this.chain.height();
    let count = 0;
    for (let h = 1; h <= height; h++) {
      for (const tx of (await this.block(h)).transactions ?? [])
        if (tx.signer_addr === address && tx.message_type === type) count++;
    }
    return count;
  }

  async stakeTransactions(id: string): Promise<number> {
    return this.transactions(id, 'MessageStake');
  }

  async unstakeTransactions(id: string): Promise<number> {
    return this.transactions(id, 'MessageUnstake');
  }

  // ---- the cluster and faults ----

  /** Sets the StatefulSet's replicas directly, as `kubectl scale` does (no drain). */
  async kubectlScale(replicas: number): Promise<void> {
    const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
    await this.apps.patchNamespacedStatefulSetScale(
      { name: this.info.statefulSet, namespace: this.info.namespace, body: { spec: { replicas } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** The emulator's fault switches (only when the harness started the devnet). */
  get faults(): Devnet['emulator']['faults'] {
    if (this.devnet === undefined)
      throw new Error('fault switches need a devnet started by the harness');
    return this.devnet.emulator.faults;
  }

  /** Kills a validator's node process (its pod stays; the kubelet restarts it). */
  async killNode(id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.devnet === undefined)
      throw new Error('killing nodes needs a devnet started by the harness');
    this.devnet.emulator.kubelet.kill(
      this.info.namespace,
      `${this.info.statefulSet}-${Number(id) - 1}`,
      signal,
    );
    await Promise.resolve();
  }
}
