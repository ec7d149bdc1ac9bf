// A real manager for control-RPC tests: the Kubernetes API emulator (simulated kubelet) over
// HTTP, a keys Secret, a validator StatefulSet, and a chain of two in-process localnet nodes
// (001 staked at genesis, 002 a node that votes once staked) with a manual pacemaker. Each pod
// reaches its own node, as on a cluster where pods share their container ports but not their IPs:
// node 001 listens on 127.0.0.10 and node 002 on 127.0.0.11, on the same port numbers (the
// StatefulSet's container ports), and SERVICE_URL_TEMPLATE renders pod validator-N's service URL
// as 127.0.0.1N:{port:p2p}. The manager asks each pod's node which key it signs with (issue 30),
// so a fixture whose pods all reached node 002 had validator-0 signing with 002's key. Nothing here
// stands in for our own adapters.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { ownedPort, ownedPortAt } from '../../support/owned-ports.ts';
import { startEmulator, type Emulator } from '../../../src/kube-emulator/index.ts';
import { buildGenesis } from '../../../src/localnet/genesis.ts';
import { startNode, type RunningNode } from '../../../src/localnet/server.ts';
import { loadConfig } from '../../../src/manager/config.ts';
import { loadKubeClients } from '../../../src/manager/kube/client.ts';
import { createLogger } from '../../../src/manager/logger.ts';
import type { Manager } from '../../../src/manager/manager.ts';
import { composeManager, controlPlaneOf } from '../../../src/manager/compose.ts';
import type { ManagerControlPlane } from '../../../src/manager/rpc/control-plane.ts';
import { buildServer, type ControlServer } from '../../../src/manager/rpc/server.ts';
import { VERSION } from '../../../src/manager/version.ts';
import { generateKeys, PocketRpcClient, type ValidatorKey } from '../../../src/pocket/index.ts';
import {
  Pending,
  pending,
  waitFor,
  type Probe,
  type WaitOptions,
} from '../../../src/harness/wait.ts';

export const TOKEN = 'test-token-0123456789abcdef';
export const STATEFULSET = 'validator';
export const LABELS = {
  'app.kubernetes.io/name': 'localnet-node',
  'pokt.network/purpose': 'validator',
};
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface ManagerUnderTest {
  manager: Manager;
  control: ManagerControlPlane;
  app: ControlServer;
  /** Every log line the manager wrote (JSON). */
  logs: string[];
  stop(): Promise<void>;
}

export interface ControlFixture {
  emulator: Emulator;
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  namespace: string;
  keys: Map<string, ValidatorKey>;
  nodes: RunningNode[];
  chain: PocketRpcClient;
  dir: string;
  /** Starts a manager on this cluster; `env` overrides its configuration. */
  /** Starts a manager and its control RPC; with `start: false`, the manager is built, not started. */
  startManager(
    env?: Record<string, string>,
    options?: { start?: boolean },
  ): Promise<ManagerUnderTest>;
  replicas(): Promise<number>;
  /** Commits one block (the pacemaker is manual) and returns the new height. */
  commitBlock(): Promise<number>;
  /**
   * Waits for `probe` (as `waitFor`, 20 s by default), committing one block after each answer
   * that is not there yet: what a manager waits on moves only with blocks here.
   */
  commitUntil<T>(probe: Probe<T>, options: WaitOptions): Promise<unknown>;
  stop(): Promise<void>;
}

/** A StatefulSet of validator pods whose container ports are `ports`. */
export function validatorStatefulSet(
  name: string,
  replicas: number,
  ports: { rpc: number; p2p: number },
) {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, labels: LABELS },
    spec: {
      replicas,
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
                { name: 'rpc', containerPort: ports.rpc },
                { name: 'p2p', containerPort: ports.p2p },
              ],
            },
          ],
        },
      },
    },
  };
}

/** Where node 001 (pod validator-0) and node 002 (pod validator-1) listen. */
const NODE_HOSTS = ['127.0.0.10', '127.0.0.11'] as const;
/** Pod validator-N's service URL: its own node's p2p address. */
export const SERVICE_URL_TEMPLATE = '127.0.0.1{ordinal}:{port:p2p}';

/** Keys 001 and 002 in the Secret (003 deliberately missing: a wanted id without a key). */
export async function startControlFixture(): Promise<ControlFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'cm-rpc-test-'));
  const namespace = 'default';
  const keys = generateKeys({ count: 2, seed: 'control-rpc-test' });
  // Listening from here on: the genesis and the StatefulSet name them, and each node takes its own.
  const [rpc1, p2p1] = await Promise.all([ownedPort(NODE_HOSTS[0]), ownedPort(NODE_HOSTS[0])]);
  const [rpc2, p2p2] = await Promise.all([
    ownedPortAt(NODE_HOSTS[1], rpc1.port),
    ownedPortAt(NODE_HOSTS[1], p2p1.port),
  ]);
  const genesis = buildGenesis({
    keys,
    validators: 1,
    serviceUrl: `${NODE_HOSTS[0]}:${p2p1.port}`,
    unstakingBlocks: 3,
  });
  const nodeLog = pino({ level: 'silent' });
  const nodes: RunningNode[] = [];
  let emulator: Emulator | undefined;
  try {
    for (const [id, rpcPort, p2pPort, host] of [
      ['001', rpc1, p2p1, NODE_HOSTS[0]],
      ['002', rpc2, p2p2, NODE_HOSTS[1]],
    ] as const) {
      nodes.push(
        await startNode({
          debugRoutes: true,
          genesis,
          key: keys.get(id),
          host,
          rpcPort: rpcPort.server,
          p2pPort: p2pPort.server,
          pacemaker: 'manual',
          roundTimeoutMs: 1_000,
          syncIntervalMs: 200,
          logger: nodeLog,
        }),
      );
    }
    emulator = await startEmulator({
      dir: join(dir, 'emulator'),
      kubelet: { mode: 'simulated', pendingMs: 10, readyMs: 10, terminationMs: 10 },
    });
    const kubeconfig = await emulator.writeKubeconfig(join(dir, 'kubeconfig'), { namespace });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    await core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'validators-private-keys' },
        stringData: Object.fromEntries([...keys].map(([id, k]) => [id, k.exportPrivateKeyHex()])),
      },
    });
    await apps.createNamespacedStatefulSet({
      namespace,
      body: validatorStatefulSet(STATEFULSET, 1, { rpc: rpc1.port, p2p: p2p1.port }),
    });
    const chain = new PocketRpcClient({ baseUrl: nodes[0]?.rpcUrl ?? '', timeoutMs: 10_000 });
    const running = new Set<ManagerUnderTest>();
    const started = emulator;

    const startManager = async (
      env: Record<string, string> = {},
      options: { start?: boolean } = {},
    ): Promise<ManagerUnderTest> => {
      const config = loadConfig({
        env: {
          CM_NAMESPACE: namespace,
          CM_CHAIN_RPC_URL: chain.baseUrl,
          CM_SERVICE_URL_TEMPLATE: SERVICE_URL_TEMPLATE,
          CM_JOURNAL_PATH: join(dir, `journal-${running.size}-${Date.now()}.sqlite`),
          CM_READY_DEBOUNCE: '50ms',
          CM_CHAIN_POLL_INTERVAL: '100ms',
          CM_RESYNC_INTERVAL: '5s',
          CM_SYNC_CHECK: 'false',
          CM_PACING: 'off',
          CM_RPC_TOKEN: TOKEN,
          CM_LOG_LEVEL: 'info',
          CM_SHUTDOWN_TIMEOUT: '2s',
          ...env,
        },
      });
      const logs: string[] = [];
      const logger = createLogger({
        level: config.logLevel,
        destination: new Writable({
          write(chunk: Buffer, _encoding, done) {
            logs.push(chunk.toString('utf8'));
            done();
          },
        }),
      });
      const kube = loadKubeClients({ namespace: config.namespace, env: {}, kubeConfig: kc });
      const manager = composeManager({ config, logger, kube });
      const control = controlPlaneOf(manager);
      const app = await buildServer({ control, token: config.rpcToken, logger, version: VERSION });
      if (options.start !== false) await manager.start();
      let stopped = false;
      const handle: ManagerUnderTest = {
        manager,
        control,
        app,
        logs,
        stop: async () => {
          if (stopped) return;
          stopped = true;
          running.delete(handle);
          await app.close();
          await manager.stop();
        },
      };
      running.add(handle);
      return handle;
    };

    const fixture: ControlFixture = {
      emulator,
      kc,
      core,
      apps,
      namespace,
      keys,
      nodes,
      chain,
      dir,
      startManager,
      replicas: async () =>
        (await apps.readNamespacedStatefulSet({ name: STATEFULSET, namespace })).spec?.replicas ??
        -1,
      commitBlock: async () => {
        const before = await chain.height();
        await chain.debug('trigger_view');
        await waitFor(
          async () => ((await chain.height()) > before ? true : pending('no new block')),
          {
            what: `a block after height ${before}`,
            timeoutMs: 10_000,
            intervalMs: 20,
          },
        );
        return chain.height();
      },
      commitUntil: (probe, options) =>
        waitFor(
          async () => {
            const answer = await probe();
            const notYet =
              answer instanceof Pending ||
              answer === undefined ||
              answer === null ||
              answer === false;
            if (notYet) await fixture.commitBlock();
            return answer;
          },
          { timeoutMs: 20_000, ...options },
        ),
      stop: async () => {
        for (const handle of [...running]) await handle.stop();
        await started.stop();
        await Promise.all(nodes.map((node) => node.stop()));
        await rm(dir, { recursive: true, force: true });
      },
    };
    return fixture;
  } catch (error: unknown) {
    await emulator?.stop();
    await Promise.all(nodes.map((node) => node.stop()));
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Patches the StatefulSet's replicas directly (as `kubectl scale` does). */
export async function kubectlScale(fixture: ControlFixture, replicas: number): Promise<void> {
  await fixture.apps.patchNamespacedStatefulSetScale(
    { name: STATEFULSET, namespace: fixture.namespace, body: { spec: { replicas } } },
    mergePatch,
  );
}
