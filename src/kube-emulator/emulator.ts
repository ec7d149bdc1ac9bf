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
  const store = new Store({
    historySize: options.historySize ?? 10_000,
    ...(options.rvBase === undefined ? {} : { rvBase: options.rvBase }),
  });
  const snapshot = options.stateFile === undefined ? undefined : readSnapshot(options.stateFile);
  if (snapshot !== undefined) store.restore(snapshot.objects, snapshot.resourceVersion);
  const persistence =
    options.stateFile === undefined ? undefined : new StorePersistence(store, options.stateFile);
  const api = new ResourceApi({ store, clock });
  for (const name of [
    'default',
    'kube-system',
    'kube-public',
    'kube-node-lease',
    ...(options.namespaces ?? []),
  ]) {
    if (api.peek(namespaces, '', name) === undefined)
      api.create(namespaces, '', { metadata: { name } });
  }
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
  const hub = new WatchHub({
    api,
    clock,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    ...(options.onWatch === undefined ? {} : { onOpen: options.onWatch }),
    ...(options.maxWatchBufferBytes === undefined
      ? {}
      : { maxBufferedBytes: options.maxWatchBufferBytes }),
  });
  const connections = { drop: (): void => undefined };
  const faults = new FaultState({ hub, store, dropConnections: () => connections.drop() });
  const events = new EventRecorder({ api, clock });
  const podEvents = new PodEvents(events);
  const gc = new GarbageCollector({ api, clock });
  const namespaceController = new NamespaceController({ api, clock });
  // The CA every namespace's kube-root-ca.crt carries: the serving certificate over HTTPS, a
  // certificate of its own otherwise (nothing verifies with it over plain HTTP).
  const namespaceDefaults = new NamespaceDefaults({
    api,
    clock,
    caCert: (tls ?? createSelfSignedCertificate(new Date(clock.now()))).cert,
  });
  const statefulSets = new StatefulSetController({ api, clock, events });
  const deployments = new DeploymentController({ api, clock, events });
  const replicaSets = new ReplicaSetController({ api, clock, events });
  const claims = new PvcController({ api, clock });
  const endpoints = new EndpointsController({ api, clock });
  const endpointSlices = new EndpointSliceController({ api, clock });
  const disruption = new DisruptionController({ api, clock });
  const kubeletSettings = options.kubelet ?? { mode: 'simulated' };
  // The simulated kubelet's few synthetic lines stay in memory; processes' output goes to files.
  const logs = new ContainerLogs({
    dir,
    clock,
    memory: kubeletSettings !== false && kubeletSettings.mode === 'simulated',
  });
  let url = '';
  const kubeconfigFor = (
    account?: ServiceAccountRef,
    config: { namespace?: string } = {},
  ): KubeconfigOptions =>
    kubeconfigOptions({
      server: url,
      caCert: tls?.cert,
      token: account === undefined ? token : auth.issueToken(account.namespace, account.name),
      namespace: config.namespace ?? account?.namespace,
      ...(account === undefined ? {} : { user: `${account.namespace}-${account.name}` }),
    });
  // The kubelet's Node and Lease, and the scheduler's binding to it (none without a kubelet).
  const node =
    kubeletSettings === false
      ? undefined
      : new NodeAgent({
          api,
          clock,
          events,
          hostIP: kubeletSettings.mode === 'simulated' ? SIMULATED_HOST_IP : '127.0.0.1',
          runtime: kubeletSettings.mode,
          dir,
          kubeletVersion: serverVersion.gitVersion,
        });
  const kubelet: KubeletBase | undefined =
    kubeletSettings === false || node === undefined
      ? undefined
      : kubeletSettings.mode === 'simulated'
        ? new SimulatedKubelet({
            api,
            clock,
            settings: kubeletSettings,
            logs: new SimulatedLogs(logs),
            events: podEvents,
            node,
          })
        : new ProcessKubelet({
            api,
            clock,
            dir,
            settings: kubeletSettings,
            kubeconfigFor: (account) => kubeconfigYaml(kubeconfigFor(account)),
            logs,
            events: podEvents,
            node,
          });
  const kubeletControl: KubeletControl = kubelet ?? {
    setReady: () => undefined,
    crash: () => undefined,
    kill: () => undefined,
    setTerminationDelay: () => undefined,
    logPath: () => {
      throw new Error('this emulator runs no kubelet');
    },
  };
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
    async writeKubeconfig(path, config = {}) {
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
    },
    stopControllers,
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
}
