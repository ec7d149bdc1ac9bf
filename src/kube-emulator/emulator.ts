// Assembles and runs the emulator: store, API, watch hub, HTTP(S) server, controllers, kubelet.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Authenticator, type ServiceAccountRef } from './auth/auth.ts';
import { realClock, type Clock } from './clock.ts';
import { control } from './api-server/control-routes.ts';
import { DisruptionController } from './controllers/disruption-controller.ts';
import { DeploymentController } from './controllers/deployment-controller.ts';
import { EndpointsController } from './controllers/endpoints-controller.ts';
import { EndpointSliceController } from './controllers/endpointslice-controller.ts';
import { FaultState, type Faults } from './faults.ts';
import { GarbageCollector } from './controllers/garbage-collector.ts';
import { NamespaceController } from './controllers/namespace-controller.ts';
import { NamespaceDefaults } from './controllers/namespace-defaults.ts';
import { ContainerLogs } from './kubelets/container-logs.ts';
import { EventRecorder } from './event-recorder.ts';
import { extraRoute } from './api-server/extra-routes.ts';
import { decodeBody } from './api-server/request-body.ts';
import { ApiServer, type LoggedRequest } from './api-server/http-server.ts';
import { kindOf } from './kinds.ts';
import type { KubeletBase, KubeletControl } from './kubelets/kubelet.ts';
import { ProcessKubelet, type ProcessKubeletOptions } from './kubelets/kubelet-process.ts';
import { SimulatedKubelet, type SimulatedKubeletOptions } from './kubelets/kubelet-simulated.ts';
import { PodEvents } from './kubelets/pod-events.ts';
import { SimulatedLogs } from './kubelets/simulated-logs.ts';
import { kubeconfigOptions, kubeconfigYaml, type KubeconfigOptions } from './kubeconfig.ts';
import { NodeAgent } from './kubelets/node-agent.ts';
import { serverVersion } from './api-server/discovery.ts';
import { PvcController } from './controllers/pvc-controller.ts';
import { ReplicaSetController } from './controllers/replicaset-controller.ts';
import { ResourceApi } from './resource-api.ts';
import { createSelfSignedCertificate } from './auth/self-signed-cert.ts';
import { StatefulSetController } from './controllers/statefulset-controller.ts';
import { StreamUpgrades } from './api-server/stream-upgrades.ts';
import { readSnapshot, StorePersistence } from './persistence.ts';
import { Store } from './store.ts';
import { WatchHub, type WatchRequest } from './api-server/watch-hub.ts';

export interface EmulatorOptions {
  /** TCP port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** Serve HTTPS with a fresh self-signed certificate (`caCert`); a token is then required. */
  https?: boolean;
  /** The admin bearer token. Without one (and without https) any request is admin. */
  token?: string;
  /** Check ServiceAccount tokens against Roles and RoleBindings (403 otherwise). */
  rbac?: boolean;
  /** Where kubeconfigs, pod folders and logs go; a fresh temp dir (removed on stop) by default. */
  dir?: string;
  /** The fake kubelet (simulated by default); `false` runs none (pods stay Pending). */
  kubelet?: SimulatedKubeletOptions | ProcessKubeletOptions | false;
  /** How many events the watch history keeps (default 10,000). */
  historySize?: number;
  /** The clock behind every delay and timestamp (default: the real one). */
  clock?: Clock;
  /** How often watches that allow bookmarks get one (default 60 s). */
  bookmarkIntervalMs?: number;
  /** Namespaces to create at start besides default, kube-system and kube-public. */
  namespaces?: string[];
  /** The first resourceVersion (random and large by default). */
  rvBase?: number;
  /** Called when a watch opens. */
  onWatch?: (request: WatchRequest) => void;
  /** Unsent bytes a watch may hold before it is dropped (default 16 MiB). */
  maxWatchBufferBytes?: number;
  /**
   * Keep the objects in this file (persistence.ts): read back at start when it exists (pods
   * aside; a file that is not a snapshot fails the start with a SnapshotError), written behind
   * every write and at stop. Without it the objects live in memory only.
   */
  stateFile?: string;
}

export interface Emulator {
  /** `http://127.0.0.1:PORT` or `https://…`. */
  readonly url: string;
  /** The folder holding kubeconfigs, pod folders and logs. */
  readonly dir: string;
  /** How many objects were read back from `stateFile` at start (0: a new cluster). */
  readonly restoredObjects: number;
  /** The PEM CA certificate clients must trust (https only). */
  readonly caCert: string | undefined;
  /** The admin token (https always has one). */
  readonly token: string | undefined;
  /** Fault switches. */
  readonly faults: Faults;
  /** Fake kubelet controls. */
  readonly kubelet: KubeletControl;
  /** Direct access to the store (benchmarks, assertions); writes here skip API semantics. */
  readonly store: Store;
  /** The API semantics layer, for tests that write as controllers do. */
  readonly api: ResourceApi;
  /** The last requests served (method, path, query, user agent), oldest first. */
  readonly requestLog: readonly LoggedRequest[];
  /** How many watch streams are open now. */
  readonly openWatches: number;
  /** Watch streams now: open, bytes written and not yet sent, dropped for not reading. */
  readonly watchStats: { open: number; bufferedBytes: number; dropped: number };
  /** The bearer token of a ServiceAccount (stable per account). */
  issueToken(namespace: string, serviceAccount: string): string;
  /** A kubeconfig (in `KubeConfig.loadFromOptions` form) for the admin, or for a ServiceAccount. */
  kubeconfigFor(
    serviceAccount?: ServiceAccountRef,
    options?: { namespace?: string },
  ): KubeconfigOptions;
  /** Writes a kubeconfig file (YAML) usable by kubectl; returns its path. */
  writeKubeconfig(path: string, options?: { namespace?: string; token?: string }): Promise<string>;
  /**
   * Stops the controllers (StatefulSet, Deployment, ReplicaSet, claims, garbage collector): no
   * pod is created or deleted for them any more. The first step of a stop, so that a devnet under
   * load does not keep creating pods while its other parts shut down. Idempotent.
   */
  stopControllers(): void;
  /** Ends every watch, closes every socket, stops every process and waits for them to exit. */
  stop(): Promise<void>;
}

const namespaces = kindOf('', 'namespaces');
/** The simulated kubelet's node address (its pods' hostIP). */
const SIMULATED_HOST_IP = '10.0.0.1';

/** Starts an emulator listening on 127.0.0.1. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const clock = options.clock ?? realClock;
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'kube-emulator-')));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { store, snapshot, persistence } = openStore(options);
  const api = new ResourceApi({ store, clock });
  createNamespaces(api, options.namespaces ?? []);
  persistence?.start();
  const tls =
    options.https === true ? createSelfSignedCertificate(new Date(clock.now())) : undefined;
  const token = options.token ?? (tls === undefined ? undefined : `admin-${crypto.randomUUID()}`);
  const auth = new Authenticator({
    adminToken: token,
    rbac: options.rbac === true,
    store,
    now: () => clock.now(),
  });
  const hub = watchHub(api, clock, options);
  const connections = { drop: (): void => undefined };
  const faults = new FaultState({ hub, store, dropConnections: () => connections.drop() });
  const events = new EventRecorder({ api, clock });
  // The CA every namespace's kube-root-ca.crt carries: the serving certificate over HTTPS, a
  // certificate of its own otherwise (nothing verifies with it over plain HTTP).
  const caCert = (tls ?? createSelfSignedCertificate(new Date(clock.now()))).cert;
  const controllers = startControllers({ api, clock, events, caCert });
  const kubeletSettings = options.kubelet ?? { mode: 'simulated' };
  // The simulated kubelet's few synthetic lines stay in memory; processes' output goes to files.
  const logs = new ContainerLogs({
    dir,
    clock,
    memory: kubeletSettings !== false && kubeletSettings.mode === 'simulated',
  });
  let url = '';
  const kubeconfigFor = kubeconfigs({ server: () => url, caCert: tls?.cert, token, auth });
  const { node, kubelet, kubeletControl } = startKubelet({
    api,
    clock,
    events,
    dir,
    logs,
    settings: kubeletSettings,
    kubeconfigFor,
  });
  const upgrades = new StreamUpgrades({ api, auth, kubelet: () => kubelet });
  const apiServer: ApiServer = new ApiServer({
    api,
    hub,
    auth,
    faults,
    port: options.port ?? 0,
    tls,
    control: control({
      faults,
      kubelet: kubeletControl,
      auth,
      requestLog: () => apiServer.requestLog,
    }),
    requestLogSize: 5_000,
    now: () => clock.now(),
    extraRoute: (route) =>
      extraRoute(
        { api, auth, logs, decodeProtobuf: (bytes) => decodeBody(bytes, 'protobuf') },
        route,
      ),
    upgrade: (request, socket, head) => upgrades.handle(request, socket, head),
  });
  connections.drop = () => apiServer.dropConnections();
  url = await apiServer.listen();
  let stopping: Promise<void> | undefined;
  let controllersStopped = false;
  const stopControllers = (): void => {
    if (controllersStopped) return;
    controllersStopped = true;
    controllers.stop();
    node?.stop();
  };
  const stop = async (): Promise<void> => {
    hub.endAll();
    stopControllers();
    upgrades.closeAll();
    await kubelet?.stop();
    hub.endAll();
    await apiServer.close();
    await persistence?.stop();
    if (ownDir) await rm(dir, { recursive: true, force: true });
  };
  return {
    url,
    dir,
    restoredObjects: snapshot?.objects.length ?? 0,
    caCert: tls?.cert,
    token,
    faults,
    kubelet: kubeletControl,
    store,
    api,
    get requestLog() {
      return apiServer.requestLog;
    },
    get openWatches() {
      return hub.size;
    },
    get watchStats() {
      return { open: hub.size, bufferedBytes: hub.bufferedBytes, dropped: hub.dropped };
    },
    issueToken: (namespace, serviceAccount) => auth.issueToken(namespace, serviceAccount),
    kubeconfigFor,
    writeKubeconfig: (path, config = {}) => writeKubeconfigFile(kubeconfigFor, path, config),
    stopControllers,
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
}

/**
 * The kubeconfig of the admin (`token`), or of a ServiceAccount (its token, its namespace);
 * `server` is read when one is made (the URL is known once the server listens).
 */
function kubeconfigs(parts: {
  server: () => string;
  caCert: string | undefined;
  token: string | undefined;
  auth: Authenticator;
}): (account?: ServiceAccountRef, config?: { namespace?: string }) => KubeconfigOptions {
  const { server, caCert, token, auth } = parts;
  return (account, config = {}) =>
    kubeconfigOptions({
      server: server(),
      caCert,
      token: account === undefined ? token : auth.issueToken(account.namespace, account.name),
      namespace: config.namespace ?? account?.namespace,
      ...(account === undefined ? {} : { user: `${account.namespace}-${account.name}` }),
    });
}

/** The watch hub, with the options' bookmark interval, buffer limit and open hook. */
function watchHub(api: ResourceApi, clock: Clock, options: EmulatorOptions): WatchHub {
  return new WatchHub({
    api,
    clock,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    ...(options.onWatch === undefined ? {} : { onOpen: options.onWatch }),
    ...(options.maxWatchBufferBytes === undefined
      ? {}
      : { maxBufferedBytes: options.maxWatchBufferBytes }),
  });
}

/** The store, with the objects of `stateFile` read back and kept written when one is given. */
function openStore(options: EmulatorOptions): {
  store: Store;
  snapshot: ReturnType<typeof readSnapshot> | undefined;
  persistence: StorePersistence | undefined;
} {
  const store = new Store({
    historySize: options.historySize ?? 10_000,
    ...(options.rvBase === undefined ? {} : { rvBase: options.rvBase }),
  });
  const snapshot = options.stateFile === undefined ? undefined : readSnapshot(options.stateFile);
  if (snapshot !== undefined) store.restore(snapshot.objects, snapshot.resourceVersion);
  const persistence =
    options.stateFile === undefined ? undefined : new StorePersistence(store, options.stateFile);
  return { store, snapshot, persistence };
}

/** The namespaces every cluster has, and the extra ones asked for, unless restored already. */
function createNamespaces(api: ResourceApi, extra: readonly string[]): void {
  for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease', ...extra]) {
    if (api.peek(namespaces, '', name) === undefined)
      api.create(namespaces, '', { metadata: { name } });
  }
}

/**
 * The controllers (kube-controller-manager's share), started in this order; `stop()` stops
 * the workload controllers first, so that no pod is created or deleted for them any more.
 */
function startControllers(parts: {
  api: ResourceApi;
  clock: Clock;
  events: EventRecorder;
  caCert: string;
}): { stop(): void } {
  const { api, clock, events, caCert } = parts;
  const gc = new GarbageCollector({ api, clock });
  const namespaceController = new NamespaceController({ api, clock });
  const namespaceDefaults = new NamespaceDefaults({ api, clock, caCert });
  const statefulSets = new StatefulSetController({ api, clock, events });
  const deployments = new DeploymentController({ api, clock, events });
  const replicaSets = new ReplicaSetController({ api, clock, events });
  const claims = new PvcController({ api, clock });
  const endpoints = new EndpointsController({ api, clock });
  const endpointSlices = new EndpointSliceController({ api, clock });
  const disruption = new DisruptionController({ api, clock });
  return {
    stop() {
      statefulSets.stop();
      deployments.stop();
      replicaSets.stop();
      claims.stop();
      endpoints.stop();
      endpointSlices.stop();
      disruption.stop();
      gc.stop();
      namespaceController.stop();
      namespaceDefaults.stop();
    },
  };
}

/**
 * The kubelet's Node and Lease (and the scheduler's binding to it), and the kubelet itself:
 * simulated, or running processes; none with `settings: false` (then its controls do nothing).
 */
function startKubelet(parts: {
  api: ResourceApi;
  clock: Clock;
  events: EventRecorder;
  dir: string;
  logs: ContainerLogs;
  settings: SimulatedKubeletOptions | ProcessKubeletOptions | false;
  kubeconfigFor: (account?: ServiceAccountRef) => KubeconfigOptions;
}): {
  node: NodeAgent | undefined;
  kubelet: KubeletBase | undefined;
  kubeletControl: KubeletControl;
} {
  const { api, clock, events, dir, logs, settings, kubeconfigFor } = parts;
  if (settings === false) return { node: undefined, kubelet: undefined, kubeletControl: noKubelet };
  const podEvents = new PodEvents(events);
  const node = new NodeAgent({
    api,
    clock,
    events,
    hostIP: settings.mode === 'simulated' ? SIMULATED_HOST_IP : '127.0.0.1',
    runtime: settings.mode,
    dir,
    kubeletVersion: serverVersion.gitVersion,
  });
  const kubelet: KubeletBase =
    settings.mode === 'simulated'
      ? new SimulatedKubelet({
          api,
          clock,
          settings,
          logs: new SimulatedLogs(logs),
          events: podEvents,
          node,
        })
      : new ProcessKubelet({
          api,
          clock,
          dir,
          settings,
          kubeconfigFor: (account) => kubeconfigYaml(kubeconfigFor(account)),
          logs,
          events: podEvents,
          node,
        });
  return { node, kubelet, kubeletControl: kubelet };
}

/** The controls of an emulator without a kubelet. */
const noKubelet: KubeletControl = {
  setReady: () => undefined,
  crash: () => undefined,
  kill: () => undefined,
  setTerminationDelay: () => undefined,
  logPath: () => {
    throw new Error('this emulator runs no kubelet');
  },
};

/** Writes the admin's kubeconfig (or one with `token`) as YAML, readable by its owner only. */
async function writeKubeconfigFile(
  kubeconfigFor: (
    account?: ServiceAccountRef,
    config?: { namespace?: string },
  ) => KubeconfigOptions,
  path: string,
  config: { namespace?: string; token?: string },
): Promise<string> {
  const base = kubeconfigFor(
    undefined,
    config.namespace === undefined ? {} : { namespace: config.namespace },
  );
  const withToken =
    config.token === undefined
      ? base
      : { ...base, users: [{ name: 'admin', token: config.token }] };
  await writeFile(path, kubeconfigYaml(withToken), { mode: 0o600 });
  return path;
}
