// A harness for scale-up and scale-down consensus tests: start a devnet in-process (or attach to
// one through its devnet.json) and ask the chain, the cluster and the manager questions whose
// answers are facts on chain — who signed which block, how many stake transactions were
// committed — with waits that time out saying what was expected, what the chain showed and at
// which height.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { cp, mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import {
  BIN,
  startDevnet,
  type Devnet,
  type DevnetInfo,
  type DevnetOptions,
} from '../devnet/devnet.ts';
import { acquireDevnetLock } from '../devnet/lock.ts';
import { parsePrivateKey, PocketRpcClient, type Block } from '../pocket/index.ts';
import { keyNeedles, scanFilesForKeys, findKeys, type KeyLeak } from './key-leaks.ts';
import { runKubectl, type KubectlResult } from './kubectl.ts';
import { ChainLedger, type LedgerTx } from './ledger.ts';
import { commandLine, descendants, isAlive } from './processes.ts';
import { participationLines } from '../manager/cli/participation-grid.ts';
import type { Participation } from '../manager/participation/participation.ts';
import { pending, waitFor, WaitTimeout, type Probe, type WaitOptions } from './wait.ts';
import { startWatchdog } from './watchdog.ts';

export interface ScaleOptions {
  wait?: 'none' | 'staked' | 'active';
  timeoutSeconds?: number;
  /** Trigger views while waiting (default: when the pacemaker is manual). */
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

/** One row of the manager's `GET /v1/validators`. */
export interface ValidatorRow {
  key: string;
  id: string | null;
  address: string | null;
  pod: string | null;
  ready: boolean;
  wanted: boolean;
  chain: { status: string; lastSignedHeight: number | null };
  phase: string;
  reason: string;
  waitingFor: string | null;
  pendingAction: 'stake' | 'unstake' | null;
}

/** One entry of the manager's journal (`GET /v1/actions`). */
export interface ActionRow {
  seq: number;
  validatorId: string;
  kind: 'stake' | 'unstake';
  state: string;
  txHash: string | null;
  preparedHeight: number;
  committedHeight: number | null;
  errorCode: string | null;
  reason: string;
  attempts: number;
  createdAt: string;
}

/** A manager process started by the harness besides the devnet's own (a second replica). */
export interface ManagerReplica {
  readonly url: string;
  readonly pid: number;
  readonly log: string;
  readonly child: ChildProcess;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export type HarnessOptions = Partial<Omit<DevnetOptions, 'dir' | 'log'>> & { dir: string };

/** The devnet's full node, whose RPC is the chain RPC the manager and the harness read. */
export const CHAIN_RPC_POD = 'full-node-0';

/** `http://127.0.0.1:PORT` of a pod's node RPC: the host port the emulator published for it. */
function rpcUrlOf(pod: V1Pod): string | undefined {
  const ports = JSON.parse(
    pod.metadata?.annotations?.['kube-emulator.dev/host-ports'] ?? '{}',
  ) as Record<string, number>;
  return ports.rpc === undefined ? undefined : `http://127.0.0.1:${ports.rpc}`;
}

export class Harness {
  readonly info: DevnetInfo;
  readonly chain: PocketRpcClient;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly kubeConfig: KubeConfig;
  /** Present when the harness started the devnet itself (fault switches, manager restarts). */
  readonly devnet: Devnet | undefined;
  readonly ledger: ChainLedger;
  #addresses: Map<string, string> | undefined;
  #idsByAddress = new Map<string, string>();
  readonly #replicas: ManagerReplica[] = [];
  /** Every manager pid this harness ran (the devnet's, restarts, replicas). */
  readonly #managerPids = new Set<number>();

  private constructor(info: DevnetInfo, devnet: Devnet | undefined) {
    this.info = info;
    this.devnet = devnet;
    this.chain = new PocketRpcClient({ baseUrl: info.chainRpcUrl, timeoutMs: 10_000 });
    this.kubeConfig = new KubeConfig();
    this.kubeConfig.loadFromFile(info.kubeconfig);
    this.core = this.kubeConfig.makeApiClient(CoreV1Api);
    this.apps = this.kubeConfig.makeApiClient(AppsV1Api);
    this.ledger = new ChainLedger(
      this.chain,
      (address) => this.#idsByAddress.get(address) ?? address,
    );
    this.#noteManager();
  }

  /** Starts a devnet in this process (defaults: 4 validators, manual pacemaker, RPC mode). */
  static async start(options: HarnessOptions): Promise<Harness> {
    // The folder's lock first, then its watchdog: should this process end before `stop()` (a
    // timed-out test's worker is killed), the watchdog stops what the devnet left running.
    const lock = options.lock ?? (await acquireDevnetLock(resolve(options.dir)));
    startWatchdog(lock.dir);
    const devnet = await startDevnet({
      validators: 4,
      kubePort: 0,
      rpcPort: 0,
      pacemaker: 'manual',
      blockIntervalMs: 500,
      txMode: 'rpc',
      manager: true,
      ...options,
      lock,
    });
    const harness = new Harness(devnet.info, devnet);
    try {
      await harness.addresses();
    } catch (error: unknown) {
      await harness.stop();
      throw error;
    }
    return harness;
  }

  /** Attaches to a running devnet through its devnet.json. */
  static async attach(devnetJson: string): Promise<Harness> {
    const info = JSON.parse(await readFile(devnetJson, 'utf8')) as DevnetInfo;
    const harness = new Harness(info, undefined);
    await harness.addresses();
    return harness;
  }

  /**
   * Stops every replica the harness started and the devnet (manager, nodes, emulator), then
   * checks that every process it ran is gone; throws naming any that is left.
   */
  async stop(): Promise<void> {
    const ours = this.devnet === undefined ? [] : await this.processes();
    for (const replica of this.#replicas.splice(0)) await replica.stop('SIGTERM');
    await this.devnet?.stop();
    await waitFor(
      () => {
        const left = ours.filter(isAlive);
        return left.length === 0 || pending(`still running: ${left.join(', ')}`);
      },
      { what: 'every process the harness started to exit', timeoutMs: 15_000 },
    );
  }

  /** The pids of every process of this devnet now: managers, nodes and whatever they run. */
  async processes(): Promise<number[]> {
    this.#noteManager();
    const roots = new Set<number>();
    for (const pid of descendants()) {
      if (this.#managerPids.has(pid)) roots.add(pid);
      else {
        const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => '');
        if (cwd.startsWith(this.info.dir)) roots.add(pid);
      }
    }
    const all = new Set<number>();
    for (const root of roots) {
      all.add(root);
      for (const child of descendants(root)) all.add(child);
    }
    return [...all].sort((a, b) => a - b);
  }

  #noteManager(): void {
    const pid = this.devnet?.manager?.pid;
    if (pid !== undefined) this.#managerPids.add(pid);
  }

  // ---- the manager ----

  /** POST /v1/scale through the control RPC; answers with status and body. */
  async scaleTo(replicas: number, options: ScaleOptions = {}): Promise<ScaleAnswer> {
    const timeoutSeconds = options.timeoutSeconds ?? 120;
    const answer = await this.post(
      '/v1/scale',
      {
        replicas,
        wait: options.wait ?? 'active',
        timeoutSeconds,
        drive: options.drive ?? this.info.pacemaker === 'manual',
      },
      (timeoutSeconds + 30) * 1000,
    );
    return answer;
  }

  /** A mutating control-RPC call with the devnet's token. */
  async post(
    path: string,
    body: unknown,
    timeoutMs = 30_000,
    url = this.#managerUrl(),
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${this.info.token ?? ''}`,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** GET a control-RPC path as JSON (of the devnet's manager, or of `url`). */
  async manager<T>(path: string, url = this.#managerUrl()): Promise<T> {
    const response = await fetch(`${url}${path}`, {
      headers: { authorization: `Bearer ${this.info.token ?? ''}` },
      signal: AbortSignal.timeout(10_000),
    });
    return (await response.json()) as T;
  }

  /**
   * One sample of the manager's `/metrics` (its text exposition): the value on the line that
   * starts with `series` (a name, with its labels as printed: `x_total{action="restarted"}`), or
   * undefined when the manager has not written that series yet.
   */
  async metric(series: string): Promise<number | undefined> {
    const response = await fetch(`${this.#managerUrl()}/metrics`, {
      signal: AbortSignal.timeout(10_000),
    });
    const line = (await response.text()).split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  }

  /** The manager's status rows (`GET /v1/validators`). */
  async validators(url?: string): Promise<ValidatorRow[]> {
    return (await this.manager<{ validators: ValidatorRow[] }>('/v1/validators', url)).validators;
  }

  /** The status row of one validator id (or unmanaged address). */
  async validator(key: string, url?: string): Promise<ValidatorRow | undefined> {
    return (await this.validators(url)).find((row) => row.key === key);
  }

  /** The manager's journal, newest first (`GET /v1/actions`). */
  async actions(url?: string): Promise<ActionRow[]> {
    return (await this.manager<{ actions: ActionRow[] }>('/v1/actions?limit=500', url)).actions;
  }

  /**
   * Waits until the manager's status row of `key` satisfies `check`; returns it. `drive` commits
   * a block on every look (manual pacemaker: "active" needs blocks to sign).
   */
  async waitForValidator(
    key: string,
    check: (row: ValidatorRow) => boolean,
    what: string,
    options: { timeoutMs?: number; url?: string; drive?: boolean } = {},
  ): Promise<ValidatorRow> {
    return this.#wait(
      async () => {
        const row = await this.validator(key, options.url);
        if (row !== undefined && check(row)) return row;
        if (options.drive === true) await this.triggerView().catch(() => undefined);
        return pending(
          row === undefined
            ? `no status row for ${key}`
            : `${key} is ${row.phase} (${row.reason}) at height ${await this.height().catch(() => '?')}`,
        );
      },
      { what: `${key} to be ${what}`, timeoutMs: options.timeoutMs ?? 30_000, intervalMs: 100 },
    );
  }

  /**
   * Waits until the manager counts every one of `ids` as voting (phase `active`: staked, and
   * signing recent certificates), committing blocks meanwhile on a manual pacemaker. A certificate
   * holds only a quorum: after one block the manager may not yet know that a member votes, and its
   * pacing then rightly holds a newcomer (4 members, 3 known voting: a silent fifth could halt the
   * chain). A test that expects a stake without committing blocks waits on this first.
   */
  async waitForVoting(ids: readonly string[], options: { timeoutMs?: number } = {}): Promise<void> {
    for (const id of ids)
      await this.waitForValidator(id, (row) => row.phase === 'active', 'voting', {
        drive: this.info.pacemaker === 'manual',
        timeoutMs: options.timeoutMs ?? 30_000,
      });
  }

  /**
   * The manager's participation read (`GET /v1/participation`): per height who signed, who was
   * staked and did not, the proposer and the stakes and unstakes (defaults: the last 50 heights).
   */
  async participation(from?: number, to?: number): Promise<Participation> {
    const query = new URLSearchParams();
    if (from !== undefined) query.set('from', String(from));
    if (to !== undefined) query.set('to', String(to));
    const response = await fetch(
      `${this.#managerUrl()}/v1/participation${query.size === 0 ? '' : `?${query.toString()}`}`,
      {
        headers: { authorization: `Bearer ${this.info.token ?? ''}` },
        signal: AbortSignal.timeout(10_000),
      },
    );
    if (!response.ok)
      throw new Error(`GET /v1/participation: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as Participation;
  }

  /**
   * The grid of the last `heights` heights as `cluster-manager participation` draws it off a
   * terminal, `width` columns wide; a line saying why when it cannot be read (no manager).
   */
  async participationGrid(heights = 60, width = 100): Promise<string> {
    try {
      const newest = (await this.participation()).height;
      const read = await this.participation(Math.max(1, newest - heights + 1), Math.max(1, newest));
      return participationLines(read, {
        width,
        color: false,
        height: Number.POSITIVE_INFINITY,
      }).join('\n');
    } catch (error: unknown) {
      return `(no participation grid: ${error instanceof Error ? error.message : String(error)})`;
    }
  }

  /** `waitFor`, whose timeout ends with the grid of the last heights (who signed where). */
  async #wait<T>(probe: Probe<T>, options: WaitOptions): ReturnType<typeof waitFor<T>> {
    try {
      return await waitFor(probe, options);
    } catch (error: unknown) {
      if (!(error instanceof WaitTimeout)) throw error;
      throw new WaitTimeout(`${error.message}\n${await this.participationGrid()}`);
    }
  }

  #managerUrl(): string {
    if (this.info.managerUrl === null) throw new Error('this devnet runs without a manager');
    return this.info.managerUrl;
  }

  /**
   * Starts another manager process on this devnet with the devnet manager's environment plus
   * `env` (give it its own CM_RPC_PORT — `0` for one the OS picks, read back from its log —,
   * CM_IDENTITY and CM_JOURNAL_PATH); resolves once its control RPC answers /healthz.
   */
  async startReplica(env: Record<string, string>, name: string): Promise<ManagerReplica> {
    const base = Object.fromEntries(
      (await readFile(join(this.info.dir, 'manager.env'), 'utf8'))
        .split('\n')
        .filter((line) => line.includes('='))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    ) as Record<string, string>;
    const merged = { ...base, ...env };
    const log = join(this.info.dir, `${name}.log`);
    const out = createWriteStream(log, { flags: 'a', mode: 0o600 });
    await new Promise((resolve) => out.once('open', resolve));
    const child = spawn(process.execPath, [BIN.clusterManager, 'run'], {
      env: { ...merged, PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? this.info.dir },
      stdio: ['ignore', out, out],
    });
    child.once('exit', () => out.end());
    const pid = child.pid ?? -1;
    this.#managerPids.add(pid);
    // CM_RPC_PORT=0: the replica listens on a port the OS picks and names it in its log, so no
    // port is chosen here and released for it (anyone could take it in between).
    // A replica that does not come up in time is killed, not left running as a second manager
    // nobody stops (a soak's `two managers` step on a loaded machine).
    const orKill = <T>(waiting: Promise<T>): Promise<T> =>
      waiting.catch((error: unknown) => {
        child.kill('SIGKILL');
        throw error;
      });
    const url =
      merged.CM_RPC_PORT === '0'
        ? await orKill(
            waitFor(
              async () => {
                if (child.exitCode !== null) throw new Error(`exited; see ${log}`);
                const line = (await readFile(log, 'utf8'))
                  .split('\n')
                  .find((each) => each.includes('"control RPC listening"'));
                return line === undefined ? undefined : (JSON.parse(line) as { url: string }).url;
              },
              { what: `manager replica ${name} to listen`, timeoutMs: 30_000 },
            ),
          )
        : `http://${merged.CM_RPC_HOST ?? '127.0.0.1'}:${merged.CM_RPC_PORT ?? ''}`;
    const replica: ManagerReplica = {
      url,
      pid,
      log,
      child,
      stop: async (signal = 'SIGTERM') => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      },
    };
    this.#replicas.push(replica);
    await orKill(
      waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}; see ${log}`);
          return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) })).ok;
        },
        { what: `manager replica ${name} to answer /healthz`, timeoutMs: 30_000 },
      ),
    );
    return replica;
  }

  /** Kills the devnet's manager (SIGKILL by default) and waits for it to exit. */
  async killManager(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    this.#noteManager();
    await this.#devnet('killing the manager').killManager(signal);
  }

  /** Starts the devnet's manager again (same env, same journal); resolves once it is ready. */
  async restartManager(): Promise<void> {
    await this.#devnet('restarting the manager').restartManager();
    this.#noteManager();
  }

  #devnet(what: string): Devnet {
    if (this.devnet === undefined) throw new Error(`${what} needs a devnet started by the harness`);
    return this.devnet;
  }

  // ---- the chain ----

  /**
   * Commits one block (manual pacemaker: `trigger_view?wait=true`) and returns the new height.
   * `via` sends it to another node's RPC (while the chain RPC is down).
   *
   * A trigger can be lost: one forwarded while the validators restart reaches nobody, and the
   * manual pacemaker has no timeout to move the open height on. So the trigger is sent again
   * after 2 s, then 4 s, then every 8 s, until a block commits or 30 s have passed; each later
   * trigger moves a stuck height to its next round. Before, a lost trigger cost 30 s: the node
   * held the request for its whole default wait (seen after a StatefulSet came back from 0).
   */
  async triggerView(via: string = this.info.chainRpcUrl): Promise<number> {
    const client = this.#clientOf(via);
    const before = await client.height();
    const deadline = Date.now() + 30_000;
    for (let waitMs = 2_000; ; waitMs = Math.min(2 * waitMs, 8_000)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no block after height ${before} within 30 s of triggers`);
      // A block that committed just after the last wait ended: done, no second block.
      if (waitMs > 2_000) {
        const now = await client.height();
        if (now > before) return now;
      }
      if (await this.#triggerOnce(client, via, before, Math.min(waitMs, left))) {
        return waitFor(
          async () => {
            const now = await client.height();
            return now > before ? now : pending(`height ${now} at ${via}`);
          },
          { what: `height ${before + 1} after a trigger_view`, timeoutMs: 30_000 },
        );
      }
    }
  }

  /**
   * One TriggerView — V1's debug message to every validator, or our node's debug route — and
   * whether a block committed at `via` within `waitMs`.
   */
  async #triggerOnce(
    client: PocketRpcClient,
    via: string,
    before: number,
    waitMs: number,
  ): Promise<boolean> {
    if (this.info.fidelity === 'v1') {
      // V1 has no debug routes: a DebugMessage to each validator of the address book, as p1 does.
      const book = await client.addressBook({ actorType: 'validator' });
      const answers = await Promise.all(
        (book.actors ?? []).map((actor) =>
          fetch(`http://${actor.service_url}/p2p/v1/debug-message`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ action: 'DEBUG_CONSENSUS_TRIGGER_NEXT_VIEW' }),
            signal: AbortSignal.timeout(10_000),
          }).then(
            async (r) => (await r.arrayBuffer(), r.status),
            () => 0,
          ),
        ),
      );
      if (!answers.includes(200))
        throw new Error(`no validator took the TriggerView message at height ${before}`);
      const committed = await waitFor(
        async () => (await client.height()) > before || pending('no block yet'),
        { what: `height ${before + 1} after a TriggerView`, timeoutMs: waitMs },
      ).catch(() => false);
      return committed;
    }
    // The node answers 200 once the height committed, 504 when `timeout_ms` passed without it.
    // `height`: a trigger sent again after a slow (not lost) one must not commit a second block.
    const query = `wait=true&timeout_ms=${waitMs}&height=${before + 1}`;
    const response = await fetch(`${via}/v1/debug/trigger_view?${query}`, {
      method: 'POST',
      signal: AbortSignal.timeout(waitMs + 10_000),
    });
    if (response.status !== 200 && response.status !== 504)
      throw new Error(
        `trigger_view at height ${before} answered ${response.status}: ${await response.text()}`,
      );
    await response.arrayBuffer();
    return response.status === 200;
  }

  /** The chain RPC's client, or one of the node at `via`. */
  #clientOf(via: string | undefined): PocketRpcClient {
    return via === undefined || via === this.info.chainRpcUrl
      ? this.chain
      : new PocketRpcClient({ baseUrl: via });
  }

  async height(): Promise<number> {
    return this.chain.height();
  }

  async waitForHeight(height: number, timeoutMs = 30_000): Promise<void> {
    await this.#wait(
      async () => {
        const now = await this.chain.height();
        return now >= height || pending(`height ${now}`);
      },
      { what: `the chain to reach height ${height}`, timeoutMs },
    );
  }

  /** Fails unless `blocks` more blocks commit within `withinMs` (drives a manual chain). */
  async expectChainProgress(blocks: number, withinMs: number): Promise<number> {
    const start = await this.chain.height();
    const deadline = Date.now() + withinMs;
    if (this.info.pacemaker === 'manual') {
      while ((await this.chain.height()) < start + blocks && Date.now() < deadline)
        await this.triggerView().catch(() => undefined);
    }
    await this.#wait(
      async () => {
        const now = await this.chain.height();
        if (now >= start + blocks) return true;
        return pending(
          `height ${now} (started at ${start}); signers of ${now}: ${(await this.activeValidators(now)).join(',')}`,
        );
      },
      {
        what: `${blocks} new blocks within ${withinMs} ms`,
        timeoutMs: Math.max(1, deadline - Date.now()),
      },
    );
    return this.chain.height();
  }

  /** A committed block (cached). */
  async block(height: number): Promise<Block> {
    return this.ledger.block(height);
  }

  /** Validator id → address, from the keys Secret (read once). */
  async addresses(): Promise<Map<string, string>> {
    if (this.#addresses !== undefined) return this.#addresses;
    const keys = await this.privateKeys();
    const map = new Map<string, string>();
    for (const [id, hex] of keys) {
      try {
        map.set(id, parsePrivateKey(hex).address);
      } catch {
        // a malformed key (a test may plant one) has no address
      }
    }
    this.#addresses = map;
    this.#idsByAddress = new Map([...map].map(([id, address]) => [address, id]));
    return map;
  }

  /** The keys Secret as id → value (hex), read now. */
  async privateKeys(): Promise<Map<string, string>> {
    const secret = await this.core.readNamespacedSecret({
      name: 'validators-private-keys',
      namespace: this.info.namespace,
    });
    return new Map(
      Object.entries(secret.data ?? {}).map(([id, value]) => [
        id,
        Buffer.from(value, 'base64').toString('utf8').trim(),
      ]),
    );
  }

  async #addressOf(id: string): Promise<string> {
    const address = (await this.addresses()).get(id);
    if (address === undefined) throw new Error(`no key ${id} in the Secret`);
    return address;
  }

  /** Ids whose signatures are in the certificate of the block at `height` (default: latest). */
  async activeValidators(height?: number): Promise<string[]> {
    const h = height ?? (await this.chain.height());
    if (h < 1) return [];
    return this.ledger.signers(h);
  }

  /**
   * Ids whose votes count at `height`: staked (not unstaking, not paused) after block
   * `height − 1`. A certificate needs only a quorum of them, so a member may be missing from one.
   */
  async activeSet(height: number): Promise<string[]> {
    return this.#stakedAt(Math.max(0, height - 1));
  }

  /** Ids staked on chain now (the active set of the next height). */
  async stakedValidators(): Promise<string[]> {
    return this.#stakedAt(undefined);
  }

  /** Ids staked (not unstaking, not paused) in the state after block `height` (default: latest). */
  async #stakedAt(height: number | undefined): Promise<string[]> {
    const rows = await this.chain.validators(height === undefined ? undefined : { height });
    return rows
      .filter((r) => r.unstaking_height < 0 && r.paused_height < 0)
      .map((r) => this.#idsByAddress.get(r.address) ?? r.address)
      .sort();
  }

  /** Waits until `id` has signed a committed certificate at or after `since`; returns the height. */
  async expectActive(
    id: string,
    options: { since?: number; timeoutMs?: number } = {},
  ): Promise<number> {
    const address = await this.#addressOf(id);
    const since = Math.max(1, options.since ?? 1);
    let scanned = since - 1;
    return this.#wait(
      async () => {
        const height = await this.chain.height();
        for (let h = scanned + 1; h <= height; h++) {
          const block = await this.block(h);
          scanned = h;
          const signatures = block.block_header.quorum_cert.threshold_sig.signatures ?? [];
          if (signatures.some((s) => s.address === address)) return h;
        }
        if (this.info.pacemaker === 'manual') await this.triggerView().catch(() => undefined);
        const row = await this.chain.validator(address).catch(() => undefined);
        const staked =
          row === undefined ? 'not staked' : row.unstaking_height < 0 ? 'staked' : 'unstaking';
        return pending(
          `no signature of ${id} in certificates ${since}…${height} (${id} is ${staked}); signers at ${height}: ${(await this.activeValidators(height)).join(',')}`,
        );
      },
      {
        what: `validator ${id} to sign a block at or after height ${since}`,
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 100,
      },
    );
  }

  /** Waits until `id` is not staked and the next committed certificate lacks it. */
  async expectInactive(id: string, options: { timeoutMs?: number } = {}): Promise<number> {
    const address = await this.#addressOf(id);
    let outAt: number | undefined;
    return this.#wait(
      async () => {
        const row = await this.chain.validator(address);
        const height = await this.chain.height();
        if (row !== undefined && row.unstaking_height < 0) {
          if (this.info.pacemaker === 'manual') await this.triggerView().catch(() => undefined);
          return pending(`${id} still staked at height ${height}`);
        }
        outAt ??= height;
        if (height <= outAt) {
          if (this.info.pacemaker === 'manual') await this.triggerView().catch(() => undefined);
          return pending(`${id} unstaked at ${outAt}; waiting for the next block`);
        }
        const signers = await this.activeValidators(height);
        return signers.includes(id)
          ? pending(`${id} still signs at height ${height} (signers ${signers.join(',')})`)
          : height;
      },
      {
        what: `validator ${id} to leave the set`,
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 100,
      },
    );
  }

  /** Stake (or unstake) transactions of `id` committed in blocks 1…latest. */
  async transactions(id: string, type: 'MessageStake' | 'MessageUnstake'): Promise<number> {
    const counts = (await this.ledger.counts()).get(id);
    return type === 'MessageStake' ? (counts?.stakes ?? 0) : (counts?.unstakes ?? 0);
  }

  async stakeTransactions(id: string): Promise<number> {
    return this.transactions(id, 'MessageStake');
  }

  async unstakeTransactions(id: string): Promise<number> {
    return this.transactions(id, 'MessageUnstake');
  }

  /** Every stake and unstake committed so far, in height order. */
  async committedTransactions(): Promise<LedgerTx[]> {
    return this.ledger.transactions();
  }

  /**
   * Waits until the chain's staked set is exactly `ids` and every one of them signs, driving a
   * manual chain; the failure says which are missing or extra at which height.
   */
  async expectStakedSet(
    ids: readonly string[],
    options: { timeoutMs?: number } = {},
  ): Promise<number> {
    const want = [...ids].sort().join(',');
    return this.#wait(
      async () => {
        const staked = (await this.stakedValidators()).join(',');
        const height = await this.chain.height();
        const signers = await this.activeValidators(height);
        if (staked === want && ids.every((id) => signers.includes(id))) return height;
        if (this.info.pacemaker === 'manual') await this.triggerView().catch(() => undefined);
        return pending(`at height ${height} staked ${staked}, signers ${signers.join(',')}`);
      },
      {
        what: `the staked set to be ${want}, all signing`,
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 100,
      },
    );
  }

  /**
   * Heights at which some node's committed block differs from the chain RPC's (a fork): every
   * running validator node and the chain RPC node are asked for each height up to the lowest
   * height they all have (blocks `from`…). Empty when every node agrees.
   */
  async forks(from = 1): Promise<string[]> {
    const urls = (await this.#servingNodes()).map(({ name, url }) => ({
      name,
      client: new PocketRpcClient({ baseUrl: url, timeoutMs: 5_000 }),
    }));
    const heights = await Promise.all(urls.map((u) => u.client.height().catch(() => 0)));
    const top = Math.min(await this.chain.height(), ...heights);
    const forks: string[] = [];
    for (let h = Math.max(1, from); h <= top; h++) {
      const reference = (await this.block(h)).block_header.state_hash;
      for (const { name, client } of urls) {
        const theirs = await client.block(h).catch(() => undefined);
        if (theirs !== undefined && theirs.block_header.state_hash !== reference)
          forks.push(
            `height ${h}: ${name} has ${theirs.block_header.state_hash.slice(0, 12)}, the chain RPC ${reference.slice(0, 12)}`,
          );
      }
    }
    return forks;
  }

  /**
   * The stakes and unstakes waiting in the chain RPC's mempool, by signer id. V1 will not list a
   * mempool that holds anything (500, code 135: `rpc/handlers_query.go:551-599`); then, as the
   * manager's chain view does, only the manager's own transactions can be known: each one its
   * journal shows as prepared or sent is looked up by hash (V1 answers 135 for that too, which
   * the client reads as "in the mempool"). A transaction nobody journalled is not listed then.
   */
  async mempool(via?: string): Promise<{ id: string; type: string; hash: string }[]> {
    const client = this.#clientOf(via);
    const view = await client.mempool({ timeoutMs: 10_000 });
    if (view.readable)
      return view.transactions.map((tx) => ({
        id: this.#idsByAddress.get(tx.signer_addr) ?? tx.signer_addr,
        type: tx.message_type,
        hash: tx.tx.hash,
      }));
    const open = (await this.actions()).filter(
      (a): a is ActionRow & { txHash: string } =>
        a.txHash !== null && (a.state === 'sent' || a.state === 'prepared'),
    );
    const pool: { id: string; type: string; hash: string }[] = [];
    for (const action of open) {
      const entry = await client.mempoolEntry(action.txHash, { timeoutMs: 10_000 });
      if (!entry.inMempool) continue;
      pool.push({
        id: action.validatorId,
        type:
          entry.transaction?.message_type ??
          (action.kind === 'stake' ? 'MessageStake' : 'MessageUnstake'),
        hash: action.txHash,
      });
    }
    return pool;
  }

  /**
   * Sets the pacemaker of every node (`manual`: blocks only on `triggerView`; `auto`: one every
   * block interval), through the chain RPC's debug endpoint. The switch reaches the other nodes as
   * messages, so a switch to manual while blocks are made may leave the height in progress to a
   * round timeout (its leader had the switch and did not start it; the others had already
   * started): a test that measures block gaps leaves that height out (scale-steps).
   */
  async setPacemaker(mode: 'manual' | 'auto'): Promise<void> {
    const response = await fetch(
      `${this.info.chainRpcUrl}/v1/debug/toggle_pacemaker_mode?mode=${mode}`,
      { method: 'POST', signal: AbortSignal.timeout(10_000) },
    );
    if (response.status !== 200)
      throw new Error(
        `toggle_pacemaker_mode answered ${response.status}: ${await response.text()}`,
      );
    await response.arrayBuffer().catch(() => undefined);
    if (mode === 'manual') await this.#untilQuiet();
  }

  /**
   * Waits until every running validator pod's node is on the manual pacemaker with no height in
   * progress: the switch reaches the peers as messages, and a height one of them had started
   * goes on to commit. Before, a test that held blocks to gather transactions saw one more block
   * commit them (scale-steps: "the six unstakes in every mempool" never came).
   */
  async #untilQuiet(): Promise<void> {
    await waitFor(
      async () => {
        const busy: string[] = [];
        for (const { name, url } of await this.#servingNodes('pokt.network/purpose=validator')) {
          const state = (await fetch(`${url}/v1/debug/state`, {
            signal: AbortSignal.timeout(2_000),
          })
            .then((r) => r.json())
            .catch(() => undefined)) as
            { pacemaker: string; consensus: { step: string; height: number } } | undefined;
          if (state === undefined) continue; // not serving: it cannot commit anything either
          if (state.pacemaker !== 'manual' || state.consensus.step !== 'idle')
            busy.push(`${name} ${state.pacemaker} ${state.consensus.step}`);
        }
        return busy.length === 0 || pending(`still moving: ${busy.join(', ')}`);
      },
      {
        what: 'every validator to hold on the manual pacemaker',
        timeoutMs: 20_000,
        intervalMs: 50,
      },
    );
  }

  // ---- the cluster and faults ----

  /** Sets the StatefulSet's replicas directly, as `kubectl scale` does (no drain). */
  async kubectlScale(replicas: number): Promise<void> {
    await this.apps.patchNamespacedStatefulSetScale(
      { name: this.info.statefulSet, namespace: this.info.namespace, body: { spec: { replicas } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** Runs kubectl 1.32 against the devnet. */
  async kubectl(args: readonly string[]): Promise<KubectlResult> {
    return runKubectl(args, {
      kubeconfig: this.info.kubeconfig,
      cacheDir: join(this.info.dir, 'kube-cache'),
      home: this.info.dir,
    });
  }

  /** The pod name of validator `id` (ordinal = id − 1). */
  podOf(id: string): string {
    return `${this.info.statefulSet}-${Number(id) - 1}`;
  }

  /** `http://127.0.0.1:PORT` of validator `id`'s own node RPC (its pod's published host port). */
  async nodeRpcUrl(id: string): Promise<string> {
    const pod = await this.core.readNamespacedPod({
      name: this.podOf(id),
      namespace: this.info.namespace,
    });
    const url = rpcUrlOf(pod);
    if (url === undefined) throw new Error(`pod of ${id} publishes no rpc port`);
    return url;
  }

  /** The node RPC of every pod (of `labelSelector`) that publishes one and is not being deleted. */
  async #servingNodes(labelSelector?: string): Promise<{ name: string; url: string }[]> {
    const pods = await this.core.listNamespacedPod({
      namespace: this.info.namespace,
      ...(labelSelector === undefined ? {} : { labelSelector }),
    });
    const nodes: { name: string; url: string }[] = [];
    for (const pod of pods.items) {
      const url = rpcUrlOf(pod);
      if (url !== undefined && pod.metadata?.deletionTimestamp === undefined)
        nodes.push({ name: pod.metadata?.name ?? '', url });
    }
    return nodes;
  }

  /** Merge-patches the annotations of validator `id`'s pod (null removes one). */
  async annotatePod(id: string, annotations: Record<string, string | null>): Promise<void> {
    await this.core.patchNamespacedPod(
      {
        name: this.podOf(id),
        namespace: this.info.namespace,
        body: { metadata: { annotations } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** Merge-patches the keys Secret's `stringData` (null removes an entry). */
  async patchKeys(entries: Record<string, string | null>): Promise<void> {
    const data: Record<string, string | null> = {};
    for (const [id, value] of Object.entries(entries))
      data[id] = value === null ? null : Buffer.from(value).toString('base64');
    await this.core.patchNamespacedSecret(
      { name: 'validators-private-keys', namespace: this.info.namespace, body: { data } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** The emulator's fault switches (only when the harness started the devnet). */
  get faults(): Devnet['emulator']['faults'] {
    return this.#devnet('fault switches').emulator.faults;
  }

  /** The fake kubelet's controls (readiness, crashes, signals). */
  get kubelet(): Devnet['emulator']['kubelet'] {
    return this.#devnet('kubelet controls').emulator.kubelet;
  }

  /** Kills a validator's node process (its pod stays; the kubelet restarts it). */
  async killNode(id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    this.kubelet.kill(this.info.namespace, this.podOf(id), signal);
    await Promise.resolve();
  }

  /**
   * The pid of the node process of validator `id`'s current pod, once the kubelet started it:
   * the `localnet-node` process in that pod's folder (not a preStop hook's process, nor the node
   * of an earlier pod of that name still terminating).
   */
  async nodePid(id: string): Promise<number | undefined> {
    const pod = await this.core
      .readNamespacedPod({ name: this.podOf(id), namespace: this.info.namespace })
      .catch(() => undefined);
    const uid = pod?.metadata?.uid;
    if (uid === undefined) return undefined;
    const folder = `/pods/${this.info.namespace}_${this.podOf(id)}_${uid.slice(0, 8)}`;
    for (const pid of descendants()) {
      const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => '');
      if (!cwd.startsWith(this.info.dir) || !cwd.includes(folder)) continue;
      const argv = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (argv.includes('localnet-node')) return pid;
    }
    return undefined;
  }

  /** Freezes (SIGSTOP) or thaws (SIGCONT) the full node that serves the chain RPC. */
  setChainRpcFrozen(frozen: boolean): void {
    this.kubelet.kill(this.info.namespace, CHAIN_RPC_POD, frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** The pid of the node process of `pod` (found by its folder under the emulator's). */
  async podPid(pod: string): Promise<number | undefined> {
    const folder = `/pods/${this.info.namespace}_${pod}_`;
    for (const pid of descendants()) {
      const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => '');
      if (cwd.startsWith(this.info.dir) && cwd.includes(folder)) return pid;
    }
    return undefined;
  }

  /** The host folder the node of `pod` keeps its data in (its `--data-dir`). */
  async dataDirOf(pod: string): Promise<string> {
    const pid = await this.podPid(pod);
    if (pid === undefined) throw new Error(`no node process for pod ${pod}`);
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    const at = argv.indexOf('--data-dir');
    const dir = at < 0 ? undefined : argv[at + 1];
    if (dir === undefined) throw new Error(`the node of ${pod} runs without --data-dir`);
    return dir;
  }

  /**
   * A copy of the chain RPC node's data dir as it is now (its block log is append-only, so a copy
   * taken while it runs is a consistent older state): to restart it from later.
   */
  async snapshotChainRpcNode(): Promise<{ dir: string; height: number }> {
    const height = await this.chain.height();
    const dir = await mkdtemp(join(this.info.dir, 'snapshot-'));
    await cp(await this.dataDirOf(CHAIN_RPC_POD), dir, { recursive: true });
    return { dir, height };
  }

  /**
   * Restarts the node that serves the chain RPC from an old snapshot of its data dir, as a node
   * restored from an old backup (or a volume of yesterday) comes back: at the snapshot's height.
   * It catches up from its peers if they answer.
   */
  async restartChainRpcNodeFrom(snapshot: { dir: string }): Promise<void> {
    const dataDir = await this.dataDirOf(CHAIN_RPC_POD);
    const before = await this.podPid(CHAIN_RPC_POD);
    this.kubelet.kill(this.info.namespace, CHAIN_RPC_POD, 'SIGSTOP');
    await rm(dataDir, { recursive: true, force: true });
    await cp(snapshot.dir, dataDir, { recursive: true });
    this.kubelet.kill(this.info.namespace, CHAIN_RPC_POD, 'SIGKILL');
    await waitFor(
      async () => {
        const pid = await this.podPid(CHAIN_RPC_POD);
        if (pid === undefined || pid === before) return pending('the old process is still there');
        return (await this.chain.isHealthy().catch(() => false)) || pending('not answering yet');
      },
      { what: 'the chain RPC node to restart from the snapshot', timeoutMs: 30_000 },
    );
  }

  // ---- secrets hygiene ----

  /**
   * Every place a key of the Secret shows up: the manager logs, every node log under the
   * emulator folder, and the argv of every process of this devnet now (plus `argv` samples a
   * test took while short-lived processes ran).
   */
  async keyLeaks(extraArgv: ReadonlyMap<number, string> = new Map()): Promise<{
    leaks: KeyLeak[];
    scannedFiles: number;
    scannedProcesses: number;
  }> {
    const needles = keyNeedles(await this.privateKeys());
    const files = [
      ...(this.info.managerLog === null ? [] : [this.info.managerLog]),
      ...this.#replicas.map((r) => r.log),
    ];
    const { leaks, scanned } = await scanFilesForKeys(
      files,
      [this.info.dir, join(this.info.dir, 'emulator', 'logs')],
      needles,
    );
    const argv = new Map(extraArgv);
    for (const pid of await this.processes()) argv.set(pid, commandLine(pid));
    for (const [pid, line] of argv) leaks.push(...findKeys(line, needles, `argv of pid ${pid}`));
    return { leaks, scannedFiles: scanned.length, scannedProcesses: argv.size };
  }
}
