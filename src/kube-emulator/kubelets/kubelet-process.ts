// The process kubelet: each container of a pod runs as a local child process, with its env
// resolved from the store, its volumes written to a private folder (and rewritten when their
// Secret or ConfigMap changes), its ports mapped to free loopback ports, readiness from its HTTP
// readiness probe, and restarts with backoff.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Cancel, Clock } from '../clock.ts';
import { startChild, type Child } from './child-processes.ts';
import type { ContainerLogs, LogWriter } from './container-logs.ts';
import { HostPorts, portKey, type HostPortChooser } from './host-ports.ts';
import { clone, isObject, objects, type JsonObject } from '../json.ts';
import { kindOf, podInfo } from '../kinds.ts';
import { isBound, NODE_NAME, terminationMs, type KubeletBase } from './kubelet.ts';
import type { NodeAgent } from './node-agent.ts';
import {
  Deadline,
  graceDeadline,
  hookOf,
  MINIMUM_GRACE_MS,
  runHook,
  type HookRunners,
} from './kubelet-lifecycle.ts';
import { ClaimFolders } from './pod-claims.ts';
import { EnvError, expand, resolveEnv, type EnvSources } from './pod-env.ts';
import type { PodEvents } from './pod-events.ts';
import { podStatus, type ContainerReport, type ContainerState } from './pod-status.ts';
import {
  MountError,
  mountsObject,
  mountsOf,
  refreshVolumes,
  rewriteMountPath,
  writeVolumes,
  type Mount,
} from './pod-volumes.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { KubeObject } from '../types.ts';
import { WorkQueue, objectKey, splitKey } from '../work-queue.ts';
import type { ExecTarget, ImageCommand } from './images.ts';

// node:http(s) through process.getBuiltinModule, not an ESM import: eslint.config.js says why.
const { request } = process.getBuiltinModule('node:http');

export interface ProcessKubeletOptions {
  mode: 'process';
  /** Image name (without tag, or with it) → what to run. */
  images: Record<string, ImageCommand>;
  /** Fixes host ports; undefined from it (or no function) picks free loopback ports. */
  hostPort?: HostPortChooser;
  /**
   * Ports the kubelet never picks for a pod on its own: the ones `hostPort` fixes, and any the
   * caller chose for a process of its own that may not listen yet.
   */
  reservedPorts?: readonly number[];
  /** How often readiness probes run until a pod is Ready (default 200 ms; then `periodSeconds`). */
  readinessPeriodMs?: number;
  /** First restart backoff (default 500 ms); it doubles up to `maxRestartBackoffMs` (default 10 s). */
  restartBackoffMs?: number;
  maxRestartBackoffMs?: number;
  /** Extra env for every process (below the container's own). */
  env?: Record<string, string>;
  /** How long `stop()` waits after SIGTERM before SIGKILL (default 3 s). */
  stopGraceMs?: number;
  /**
   * How long after a Secret or ConfigMap changes the volume files of the running pods that mount
   * it are rewritten (default 1 s; they are also rewritten before each container restart). A real
   * kubelet rewrites them at its next periodic sync of the pod (`--sync-frequency`, 1 min by
   * default) from its cache of the object (kept by a watch: `configMapAndSecretChangeDetection
   * Strategy: Watch`, the default), so about a minute at most.
   */
  volumeRefreshDelayMs?: number;
}

/** The annotation publishing a pod's host ports: `{"rpc":53001,"9000":53002}`. */
export const HOST_PORTS_ANNOTATION = 'kube-emulator.dev/host-ports';
export const LOOPBACK = '127.0.0.1';

/** A container's readiness probe, when its spec has one. */
function readinessProbeOf(container: { readonly spec: JsonObject }): JsonObject | undefined {
  const probe = container.spec.readinessProbe;
  return isObject(probe) ? probe : undefined;
}

/** How often a probe runs once the pod is Ready: its `periodSeconds` (Kubernetes' default 10). */
function probePeriodMs(probe: JsonObject | undefined): number {
  return (typeof probe?.periodSeconds === 'number' ? probe.periodSeconds : 10) * 1000;
}

interface ContainerRun {
  readonly name: string;
  readonly spec: JsonObject;
  /**
   * A `kubectl debug` container (spec.ephemeralContainers): started once it appears in the spec,
   * never restarted, not probed, reported in status.ephemeralContainerStatuses, and no part of
   * the pod's phase or readiness (pkg/kubelet/kuberuntime/kuberuntime_manager.go
   * computePodActions: one is started when it has no status yet, "Ephemeral Containers are
   * never restarted").
   */
  readonly ephemeral: boolean;
  child: Child | undefined;
  state: ContainerState;
  lastState: ContainerState | undefined;
  restartCount: number;
  ready: boolean;
  probeFailures: number;
  backoffMs: number;
  startedAt: number;
  restartTimer: Cancel | undefined;
  /** When the last Unhealthy Event was written (ms). */
  lastUnhealthyAt: number;
  /** A postStart hook is running: not ready until it is done. */
  postStarting: boolean;
}

interface PodRun {
  readonly key: string;
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly folder: string;
  readonly ports: Record<string, number>;
  readonly containers: ContainerRun[];
  volumes: Map<string, string> | undefined;
  /** Claim folders this run mounted, released once its processes are gone. */
  claimFolders: string[];
  forcedReady: boolean | undefined;
  terminating: boolean;
  probing: boolean;
  probeTimer: Cancel | undefined;
  /** Volumes being written; teardown waits for it so nothing writes after removal. */
  preparing: Promise<unknown> | undefined;
  /** A rewrite of the volumes is due (a Secret or ConfigMap they mount changed). */
  refreshTimer: Cancel | undefined;
  startTime: number;
  /** While the pod terminates: the end of its grace period (a shorter delete moves it). */
  deadline: Deadline | undefined;
}

function newContainerRun(spec: JsonObject, backoffMs: number, ephemeral: boolean): ContainerRun {
  return {
    name: String(spec.name),
    spec,
    ephemeral,
    child: undefined,
    state: { type: 'waiting', reason: 'ContainerCreating' },
    lastState: undefined,
    restartCount: 0,
    ready: false,
    probeFailures: 0,
    backoffMs,
    startedAt: 0,
    restartTimer: undefined,
    lastUnhealthyAt: 0,
    postStarting: false,
  };
}

/** A pod's containers as the status reports them (ephemeral ones apart). */
function reportsOf(containers: readonly ContainerRun[], ready: (c: ContainerRun) => boolean) {
  return containers.map((c): ContainerReport => ({
    name: c.name,
    state: c.state,
    ready: ready(c),
    restartCount: c.restartCount,
    ...(c.lastState === undefined ? {} : { lastState: c.lastState }),
  }));
}

const secrets = kindOf('', 'secrets');
const configMaps = kindOf('', 'configmaps');

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

function imageEntry(images: Record<string, ImageCommand>, image: string): ImageCommand | undefined {
  const withoutDigest = image.split('@')[0] ?? image;
  const withoutTag = withoutDigest.replace(/:[^/:]+$/, '');
  return images[image] ?? images[withoutDigest] ?? images[withoutTag];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** `PORT_<NAME>`: the name upper-cased, `-` turned into `_`. */
export function portEnvName(name: string): string {
  return `PORT_${name.toUpperCase().replaceAll('-', '_')}`;
}

/** An HTTP probe: true, or why it failed in the kubelet's words (pkg/probe/http). */
async function probe(port: number, path: string, timeoutMs: number): Promise<true | string> {
  return new Promise((resolve) => {
    const req = request(
      { host: LOOPBACK, port, path, method: 'GET', timeout: timeoutMs, agent: false },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(code >= 200 && code < 400 ? true : `HTTP probe failed with statuscode: ${code}`);
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve(
        `Get "http://${LOOPBACK}:${port}${path}": ${
          error.code === 'ECONNREFUSED'
            ? `dial tcp ${LOOPBACK}:${port}: connect: connection refused`
            : error.message
        }`,
      ),
    );
    req.end();
  });
}

export class ProcessKubelet implements KubeletBase {
  readonly #api: ResourceApi;
  readonly #clock: Clock;
  readonly #dir: string;
  readonly #settings: ProcessKubeletOptions;
  readonly #kubeconfigFor: (account: { namespace: string; name: string }) => string;
  readonly #logs: ContainerLogs | undefined;
  readonly #events: PodEvents | undefined;
  readonly #ports: HostPorts;
  readonly #runs = new Map<string, PodRun>();
  readonly #chains = new Map<string, Promise<void>>();
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;
  readonly #terminationByPod = new Map<string, number>();
  readonly #claims: ClaimFolders;
  readonly #node: NodeAgent;
  #terminationMs = 0;
  #stopped = false;

  constructor(options: {
    api: ResourceApi;
    clock: Clock;
    dir: string;
    settings: ProcessKubeletOptions;
    kubeconfigFor: (account: { namespace: string; name: string }) => string;
    /** Per-container logs for `pods/log` (container-logs.ts). */
    logs?: ContainerLogs;
    /** The scheduler's and kubelet's Events (pod-events.ts). */
    events?: PodEvents;
    /** The node this kubelet runs (and the scheduler binds pods to). */
    node: NodeAgent;
  }) {
    this.#api = options.api;
    this.#node = options.node;
    this.#clock = options.clock;
    this.#dir = options.dir;
    this.#settings = options.settings;
    this.#kubeconfigFor = options.kubeconfigFor;
    this.#logs = options.logs;
    this.#events = options.events;
    this.#ports = new HostPorts(options.settings.hostPort, options.settings.reservedPorts);
    this.#claims = new ClaimFolders({ api: this.#api, dir: this.#dir });
    this.#queue = new WorkQueue({ handle: (key) => this.#schedule(key), clock: this.#clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      if (event.storage === podInfo.storage) {
        this.#queue.add(
          objectKey(event.object.metadata.namespace ?? '', event.object.metadata.name ?? ''),
        );
      } else if (event.storage === secrets.storage || event.storage === configMaps.storage) {
        this.#sourceChanged(
          event.storage === secrets.storage ? 'secrets' : 'configmaps',
          event.object,
        );
      }
    });
    for (const pod of this.#api.store.list(podInfo.storage)) {
      this.#queue.add(objectKey(pod.metadata.namespace ?? '', pod.metadata.name ?? ''));
    }
    // A cordon lifted (or a taint removed): pods waiting to be scheduled try again.
    this.#node.onChange(() => {
      for (const pod of this.#api.store.list(podInfo.storage))
        if (!isBound(pod))
          this.#queue.add(objectKey(pod.metadata.namespace ?? '', pod.metadata.name ?? ''));
    });
  }

  logPath(namespace: string, pod: string): string {
    return join(this.#dir, 'logs', `${namespace}_${pod}.log`);
  }

  /** Where the output of a pod's lifecycle hooks goes (a kubelet shows it nowhere). */
  hookLogPath(namespace: string, pod: string): string {
    return join(this.#dir, 'logs', `${namespace}_${pod}.hooks.log`);
  }

  setReady(namespace: string, pod: string, ready: boolean): void {
    const run = this.#runs.get(objectKey(namespace, pod));
    if (run === undefined) throw new Error(`no pod ${namespace}/${pod} on this kubelet`);
    run.forcedReady = ready;
    this.#writeStatus(run);
  }

  crash(namespace: string, pod: string): void {
    this.kill(namespace, pod, 'SIGKILL');
  }

  kill(namespace: string, pod: string, signal: NodeJS.Signals = 'SIGTERM'): void {
    const run = this.#runs.get(objectKey(namespace, pod));
    if (run === undefined) throw new Error(`no pod ${namespace}/${pod} on this kubelet`);
    for (const container of run.containers) container.child?.signal(signal);
  }

  setTerminationDelay(ms: number, pod?: { namespace: string; name: string }): void {
    if (pod === undefined) this.#terminationMs = ms;
    else this.#terminationByPod.set(objectKey(pod.namespace, pod.name), ms);
  }

  /** The container a command of `kubectl exec` runs in, or why there is none to run in. */
  execTarget(namespace: string, pod: string, container: string): ExecTarget | string {
    const run = this.#runs.get(objectKey(namespace, pod));
    const current = this.#api.peek(podInfo, namespace, pod);
    if (
      run === undefined ||
      current === undefined ||
      current.metadata.uid !== run.uid ||
      run.terminating
    )
      return `pod ${pod} is not running on this kubelet`;
    const found = run.containers.find((c) => c.name === container);
    if (found === undefined) return `container not found ("${container}")`;
    if (found.child === undefined)
      return `container ${container} is not running (${found.state.type})`;
    try {
      const mounts = mountsOf(found.spec, run.volumes ?? new Map());
      return {
        env: this.#environment(run, current, found, mounts),
        cwd: run.folder,
        image: imageEntry(this.#settings.images, String(found.spec.image)),
      };
    } catch (error: unknown) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** Stops every process (SIGTERM, then SIGKILL after `stopGraceMs`) and waits for all to exit. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe();
    this.#queue.stop();
    const grace = this.#settings.stopGraceMs ?? 3000;
    // The node goes away: a pod already terminating has its grace period cut to now, so a preStop
    // hook still waiting (for a manager that may be gone too) does not hold the stop.
    for (const run of this.#runs.values()) run.deadline?.moveEarlier(this.#clock.now());
    await Promise.all([...this.#runs.values()].map((run) => this.#teardown(run, grace)));
    await Promise.allSettled([...this.#chains.values()]);
    this.#runs.clear();
    await this.#claims.stop();
  }

  /** Runs the sync of one pod after its previous sync, so a pod's steps never overlap. */
  #schedule(key: string): void {
    this.#shortenGrace(key);
    this.#chain(key, () => this.#sync(key));
  }

  /** Runs a step of one pod after its previous one; a failed step retries the pod's sync. */
  #chain(key: string, step: () => Promise<void>): void {
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(step)
      .catch(() => {
        if (!this.#stopped) this.#queue.addAfter(key, 500);
      })
      .finally(() => {
        if (this.#chains.get(key) === next) this.#chains.delete(key);
      });
    this.#chains.set(key, next);
  }

  /**
   * A pod already terminating that was deleted again with a shorter grace period (or removed
   * outright): its deadline moves earlier now, not after the termination under way.
   */
  #shortenGrace(key: string): void {
    const run = this.#runs.get(key);
    if (run?.deadline === undefined) return;
    const [namespace, name] = splitKey(key);
    const pod = this.#api.peek(podInfo, namespace, name);
    const now = this.#clock.now();
    if (pod === undefined || pod.metadata.uid !== run.uid) run.deadline.moveEarlier(now);
    else if (pod.metadata.deletionTimestamp !== undefined)
      run.deadline.moveEarlier(graceDeadline(pod, now));
  }

  #sources(namespace: string): EnvSources {
    return {
      secret: (name) => this.#api.peek(secrets, namespace, name),
      configMap: (name) => this.#api.peek(configMaps, namespace, name),
    };
  }

  async #sync(key: string): Promise<void> {
    if (this.#stopped) return;
    const [namespace, name] = splitKey(key);
    const pod = this.#api.peek(podInfo, namespace, name);
    let run = this.#runs.get(key);
    if (run !== undefined && (pod === undefined || pod.metadata.uid !== run.uid)) {
      await this.#teardown(run, 2000);
      await this.#logs?.removePod({ namespace, pod: name, uid: run.uid });
      this.#runs.delete(key);
      run = undefined;
    }
    if (pod === undefined) return;
    if (pod.metadata.deletionTimestamp !== undefined) {
      if (run?.terminating === true) return;
      const started = this.#clock.now();
      if (run !== undefined) await this.#terminatePod(run, pod);
      const slowMs = terminationMs(pod, this.#terminationByPod.get(key) ?? this.#terminationMs);
      const remaining = slowMs - (this.#clock.now() - started);
      if (remaining > 0) await sleep(this.#clock, remaining);
      this.#runs.delete(key);
      const current = this.#api.peek(podInfo, namespace, name);
      if (current !== undefined && current.metadata.uid === pod.metadata.uid)
        this.#api.removeNow(podInfo, current);
      await this.#logs?.removePod({ namespace, pod: name, uid: pod.metadata.uid ?? '' });
      return;
    }
    if (run === undefined) {
      // Another node's pod, or one the scheduler cannot place here now (node-agent.ts).
      if (isBound(pod) ? (pod.spec as JsonObject).nodeName !== NODE_NAME : !this.#node.admit(pod))
        return;
      run = await this.#start(pod);
    }
    if (run === undefined) return;
    this.#addEphemeral(run, pod);
    await this.#startContainers(run);
  }

  /** Ephemeral containers added to the spec since the last sync join the run, to be started. */
  #addEphemeral(run: PodRun, pod: KubeObject): void {
    const spec = isObject(pod.spec) ? pod.spec : {};
    for (const container of objects(spec.ephemeralContainers)) {
      if (run.containers.some((c) => c.name === container.name)) continue;
      run.containers.push(newContainerRun(container, 0, true));
    }
  }

  /** Binds the pod, assigns its host ports and publishes them, and creates its private folder. */
  async #start(pod: KubeObject): Promise<PodRun | undefined> {
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const spec = isObject(pod.spec) ? pod.spec : {};
    const ports: Record<string, number> = {};
    for (const container of objects(spec.containers)) {
      for (const port of objects(container.ports)) {
        if (typeof port.containerPort !== 'number') continue;
        const ref = {
          containerPort: port.containerPort,
          ...(typeof port.name === 'string' ? { name: port.name } : {}),
        };
        ports[portKey(ref)] = await this.#ports.portFor({ namespace, name }, ref);
      }
    }
    const current = this.#api.peek(podInfo, namespace, name);
    if (this.#stopped || current === undefined || current.metadata.uid !== pod.metadata.uid)
      return undefined;
    const bound = clone(current);
    (bound.spec as JsonObject).nodeName = NODE_NAME;
    bound.metadata.annotations = {
      ...bound.metadata.annotations,
      [HOST_PORTS_ANNOTATION]: JSON.stringify(ports),
    };
    const written = this.#api.write(podInfo, bound);
    if (spec.nodeName !== NODE_NAME) this.#events?.scheduled(written);
    const folder = join(
      this.#dir,
      'pods',
      `${namespace}_${name}_${(pod.metadata.uid ?? '').slice(0, 8)}`,
    );
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await mkdir(join(this.#dir, 'logs'), { recursive: true, mode: 0o700 });
    const backoff = this.#settings.restartBackoffMs ?? 500;
    const run: PodRun = {
      key: objectKey(namespace, name),
      uid: pod.metadata.uid ?? '',
      namespace,
      name,
      folder,
      ports,
      containers: objects(spec.containers).map((container) =>
        newContainerRun(container, backoff, false),
      ),
      volumes: undefined,
      claimFolders: [],
      forcedReady: undefined,
      terminating: false,
      probing: false,
      probeTimer: undefined,
      preparing: undefined,
      refreshTimer: undefined,
      startTime: this.#clock.now(),
      deadline: undefined,
    };
    this.#runs.set(run.key, run);
    this.#writeStatus(run);
    this.#scheduleProbe(run);
    return run;
  }

  /** True once the pod is being torn down or the kubelet has stopped (re-read after awaits). */
  #isGone(run: PodRun): boolean {
    return run.terminating || this.#stopped;
  }

  /**
   * Writes the pod's volumes (rewrites them if written before) and, for a ServiceAccount, its
   * kubeconfig into its folder.
   */
  async #prepareFolder(run: PodRun, pod: KubeObject, sources: EnvSources): Promise<void> {
    if (run.volumes === undefined) {
      const written = await writeVolumes({ pod, folder: run.folder, sources });
      run.volumes = new Map([...written, ...(await this.#mountClaims(run, pod))]);
    } else {
      for (const failure of await refreshVolumes({ pod, folder: run.folder, sources }))
        this.#events?.failedMount(pod, failure.volume, failure.message);
    }
    const spec = isObject(pod.spec) ? pod.spec : {};
    if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') {
      const account = { namespace: run.namespace, name: spec.serviceAccountName };
      await writeFile(join(run.folder, 'kubeconfig'), this.#kubeconfigFor(account), {
        mode: 0o600,
      });
    }
  }

  /**
   * Mounts the pod's claims (their folders outlive the pod). On a failure, what was mounted for
   * this attempt is released again and the EnvError retries the start later.
   */
  async #mountClaims(run: PodRun, pod: KubeObject): Promise<Map<string, string>> {
    const spec = isObject(pod.spec) ? pod.spec : {};
    const mounted = new Map<string, string>();
    try {
      for (const volume of objects(spec.volumes)) {
        const source = isObject(volume.persistentVolumeClaim) ? volume.persistentVolumeClaim : {};
        if (typeof source.claimName !== 'string') continue;
        const folder = await this.#claims.mount(run.namespace, source.claimName);
        run.claimFolders.push(folder);
        mounted.set(String(volume.name), folder);
      }
    } catch (error: unknown) {
      for (const folder of run.claimFolders.splice(0)) this.#claims.release(folder);
      throw error;
    }
    return mounted;
  }

  /** Starts every container that is waiting to be created; a missing reference retries later. */
  async #startContainers(run: PodRun): Promise<void> {
    const pending = run.containers.filter(
      (c) =>
        c.child === undefined &&
        c.restartTimer === undefined &&
        c.state.type === 'waiting' &&
        c.state.reason !== 'CrashLoopBackOff' &&
        c.state.reason !== 'ErrImagePull',
    );
    if (pending.length === 0 || run.terminating) return;
    const pod = this.#api.peek(podInfo, run.namespace, run.name);
    if (pod === undefined) return;
    const sources = this.#sources(run.namespace);
    try {
      const preparing = this.#prepareFolder(run, pod, sources);
      run.preparing = preparing;
      await preparing.finally(() => {
        if (run.preparing === preparing) run.preparing = undefined;
      });
      // The pod may have been deleted (or the kubelet stopped) while its files were written.
      if (this.#isGone(run)) return;
      for (const container of pending) this.#spawn(run, pod, container);
    } catch (error: unknown) {
      if (!(error instanceof EnvError)) throw error;
      // A volume that cannot be set up holds the containers in ContainerCreating with a
      // FailedMount Event (kubelet.go syncPod: WaitForAttachAndMount fails before any container
      // starts); a reference of the env, in CreateContainerConfigError (kuberuntime).
      if (error instanceof MountError) this.#events?.failedMount(pod, error.volume, error.message);
      for (const container of pending)
        container.state =
          error instanceof MountError
            ? { type: 'waiting', reason: 'ContainerCreating' }
            : { type: 'waiting', reason: 'CreateContainerConfigError', message: error.message };
      this.#queue.addAfter(run.key, this.#settings.restartBackoffMs ?? 500);
    }
    this.#writeStatus(run);
  }

  #environment(
    run: PodRun,
    pod: KubeObject,
    container: ContainerRun,
    mounts: readonly Mount[],
  ): Record<string, string> {
    const entry = imageEntry(this.#settings.images, String(container.spec.image));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? run.folder,
      ...this.#settings.env,
      ...entry?.env,
    };
    const resolved = resolveEnv({
      pod,
      container: container.spec,
      sources: this.#sources(run.namespace),
      podIP: LOOPBACK,
    });
    for (const [name, value] of Object.entries(resolved))
      env[name] = rewriteMountPath(value, mounts);
    for (const port of objects(container.spec.ports)) {
      if (typeof port.name !== 'string') continue;
      const hostPort = run.ports[port.name];
      if (hostPort !== undefined) env[portEnvName(port.name)] = String(hostPort);
    }
    env.HOST = LOOPBACK;
    const spec = isObject(pod.spec) ? pod.spec : {};
    if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') {
      env.KUBECONFIG = join(run.folder, 'kubeconfig');
      env.KUBERNETES_NAMESPACE = run.namespace;
    }
    return env;
  }

  #spawn(run: PodRun, pod: KubeObject, container: ContainerRun): void {
    const entry = imageEntry(this.#settings.images, String(container.spec.image));
    if (entry === undefined) {
      container.state = {
        type: 'waiting',
        reason: 'ErrImagePull',
        message: `image ${String(container.spec.image)} is not in the emulator's image table`,
      };
      this.#events?.pullFailed(pod, container.name, String(container.spec.image));
      return;
    }
    const mounts = mountsOf(container.spec, run.volumes ?? new Map());
    const env = this.#environment(run, pod, container, mounts);
    const own = [...strings(container.spec.command), ...strings(container.spec.args)].map((arg) =>
      rewriteMountPath(expand(arg, env), mounts),
    );
    const child = startChild({
      command: entry.command,
      args: [...(entry.args ?? []), ...own],
      env,
      cwd: run.folder,
      logPath: this.logPath(run.namespace, run.name),
      ...this.#containerLog(run, container),
    });
    container.child = child;
    this.#events?.started(pod, container.name, String(container.spec.image));
    container.startedAt = this.#clock.now();
    container.state = { type: 'running', startedAt: container.startedAt };
    container.ready = false;
    container.probeFailures = 0;
    // A (re)started container is probed at the fast period again, not after a Ready pod's.
    if (run.probeTimer !== undefined) this.#scheduleProbe(run);
    void child.exited.then(({ code, signal }) =>
      this.#exited(run, container, signal === null ? code : 128 + (signal === 'SIGKILL' ? 9 : 15)),
    );
    const postStart = hookOf(container.spec, 'postStart');
    if (postStart !== undefined) void this.#postStart(run, pod, container, postStart);
  }

  /**
   * postStart runs beside the new container; until it is done the container is not ready, and a
   * failure is a `FailedPostStartHook` Warning and the container is killed (then restarted by
   * its restart policy), as kuberuntime's startContainer does. Bounded to 10 minutes here.
   */
  async #postStart(
    run: PodRun,
    pod: KubeObject,
    container: ContainerRun,
    handler: JsonObject,
  ): Promise<void> {
    const child = container.child;
    container.postStarting = true;
    const deadline = new Deadline(this.#clock, this.#clock.now() + 600_000);
    const outcome = await runHook(
      handler,
      this.#hookRunners(run, pod, container),
      deadline,
      this.#clock,
    );
    deadline.dispose();
    container.postStarting = false;
    if (outcome.kind === 'done' || container.child !== child || run.terminating) return;
    this.#events?.hookFailed(
      pod,
      container.name,
      'PostStart',
      outcome.kind === 'failed' ? outcome.message : 'PostStartHook timed out',
    );
    child?.signal('SIGKILL');
  }

  /** How this container's hooks run: its env and mounts, its image's binaries, its ports. */
  #hookRunners(run: PodRun, pod: KubeObject, container: ContainerRun): HookRunners {
    return {
      exec: (command) => {
        const entry = imageEntry(this.#settings.images, String(container.spec.image));
        const [first = '', ...rest] = command;
        const binary = entry?.binaries?.[first] ?? entry?.binaries?.[basename(first)];
        const mounts = mountsOf(container.spec, run.volumes ?? new Map());
        const args = rest.map((arg) => rewriteMountPath(arg, mounts));
        const child = startChild({
          command: binary?.command ?? rewriteMountPath(first, mounts),
          args: [...(binary?.args ?? []), ...args],
          env: this.#environment(run, pod, container, mounts),
          cwd: run.folder,
          logPath: this.hookLogPath(run.namespace, run.name),
        });
        return {
          exited: child.exited.then(({ code, signal }) =>
            signal === null ? code : 128 + (signal === 'SIGKILL' ? 9 : 15),
          ),
          kill: () => child.signal('SIGKILL'),
        };
      },
      httpTarget: (port, host) => {
        const mapped = this.#probePort(run, container, port);
        return mapped === undefined ? undefined : { host: host ?? LOOPBACK, port: mapped };
      },
    };
  }

  /** The log of the container run about to start (its instance number is its restart count). */
  #containerLog(run: PodRun, container: ContainerRun): { output?: LogWriter } {
    const output = this.#logs?.open({
      namespace: run.namespace,
      pod: run.name,
      uid: run.uid,
      container: container.name,
      instance: container.restartCount,
    });
    return output === undefined ? {} : { output };
  }

  #exited(run: PodRun, container: ContainerRun, exitCode: number): void {
    container.child = undefined;
    container.ready = false;
    const now = this.#clock.now();
    const terminated: ContainerState = {
      type: 'terminated',
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      startedAt: container.startedAt,
      finishedAt: now,
    };
    if (run.terminating || this.#stopped) {
      container.state = terminated;
      return;
    }
    const pod = this.#api.peek(podInfo, run.namespace, run.name);
    const policy = isObject(pod?.spec) ? pod.spec.restartPolicy : 'Always';
    const restart =
      !container.ephemeral &&
      (policy === 'Always' || policy === undefined || (policy === 'OnFailure' && exitCode !== 0));
    if (!container.ephemeral) container.lastState = terminated;
    if (!restart) container.state = terminated;
    else {
      const initial = this.#settings.restartBackoffMs ?? 500;
      if (now - container.startedAt > 10_000) container.backoffMs = initial;
      container.restartCount++;
      if (pod !== undefined) this.#events?.backOff(pod, container.name);
      container.state = {
        type: 'waiting',
        reason: 'CrashLoopBackOff',
        message: `back-off ${container.backoffMs}ms restarting failed container=${container.name} pod=${run.name}`,
      };
      const delay = container.backoffMs;
      container.backoffMs = Math.min(
        container.backoffMs * 2,
        this.#settings.maxRestartBackoffMs ?? 10_000,
      );
      container.restartTimer = this.#clock.setTimeout(() => {
        container.restartTimer = undefined;
        this.#chain(run.key, () => this.#restart(run, container));
      }, delay);
    }
    this.#writeStatus(run);
  }

  /**
   * Starts a container again after its backoff. Its volumes are rewritten first, so a process
   * that crashed on a key missing from the Secret finds the key once it is back (a real kubelet
   * has rewritten them by then if its last sync came after the change; see
   * `volumeRefreshDelayMs`), without the pod being deleted.
   */
  async #restart(run: PodRun, container: ContainerRun): Promise<void> {
    if (this.#isGone(run)) return;
    const pod = this.#api.peek(podInfo, run.namespace, run.name);
    if (pod === undefined || pod.metadata.uid !== run.uid) return;
    await this.#refreshVolumes(run, pod);
    if (this.#isGone(run)) return;
    const current = this.#api.peek(podInfo, run.namespace, run.name);
    if (current === undefined || current.metadata.uid !== run.uid) return;
    try {
      this.#spawn(run, current, container);
    } catch (error: unknown) {
      // A reference that went missing (or a start failure): wait and let a sync retry it.
      const message = error instanceof Error ? error.message : String(error);
      container.state = { type: 'waiting', reason: 'CreateContainerConfigError', message };
      this.#queue.addAfter(run.key, this.#settings.restartBackoffMs ?? 500);
    }
    this.#writeStatus(run);
  }

  /** A Secret or ConfigMap was written: the running pods that mount it are rewritten soon. */
  #sourceChanged(resource: 'secrets' | 'configmaps', object: KubeObject): void {
    if (this.#stopped) return;
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    for (const run of this.#runs.values()) {
      if (run.namespace !== namespace || run.volumes === undefined || run.terminating) continue;
      const pod = this.#api.peek(podInfo, run.namespace, run.name);
      if (pod === undefined || pod.metadata.uid !== run.uid) continue;
      if (mountsObject(pod, resource, name)) this.#refreshLater(run);
    }
  }

  /** One rewrite per delay, whatever the number of changes in it: it reads their last state. */
  #refreshLater(run: PodRun): void {
    if (run.refreshTimer !== undefined) return;
    run.refreshTimer = this.#clock.setTimeout(() => {
      run.refreshTimer = undefined;
      this.#chain(run.key, async () => {
        const pod = this.#api.peek(podInfo, run.namespace, run.name);
        if (pod !== undefined && pod.metadata.uid === run.uid) await this.#refreshVolumes(run, pod);
      });
    }, this.#settings.volumeRefreshDelayMs ?? 1000);
  }

  /**
   * Rewrites the configMap and secret volumes of a running pod (pod-volumes.ts `refreshVolumes`).
   * A volume that cannot be set up keeps its files and gets a FailedMount Event; a write that
   * fails is tried again after the delay. Runs in the pod's chain, and teardown waits for it.
   */
  async #refreshVolumes(run: PodRun, pod: KubeObject): Promise<void> {
    if (this.#isGone(run) || run.volumes === undefined) return;
    const writing = refreshVolumes({
      pod,
      folder: run.folder,
      sources: this.#sources(run.namespace),
    });
    run.preparing = writing;
    try {
      for (const failure of await writing)
        this.#events?.failedMount(pod, failure.volume, failure.message);
    } catch {
      if (!this.#isGone(run)) this.#refreshLater(run);
    } finally {
      if (run.preparing === writing) run.preparing = undefined;
    }
  }

  #scheduleProbe(run: PodRun): void {
    if (run.terminating || this.#stopped) return;
    // One timer per pod: a call while one is pending replaces it.
    run.probeTimer?.();
    run.probeTimer = this.#clock.setTimeout(() => {
      void this.#probeAll(run).finally(() => this.#scheduleProbe(run));
    }, this.#probeDelayMs(run));
  }

  /**
   * Until every container is Ready, probes run every `readinessPeriodMs` (200 ms), faster than a
   * real kubelet, so that a pod is Ready soon after it can serve. Once Ready, every
   * `periodSeconds` of the probes, as the real kubelet does (pkg/kubelet/prober/worker.go: one
   * probe per period): at 200 ms an idle devnet's five pods cost the emulator and the nodes about
   * 0.03 cores for nothing. A container that exits is seen at once, without a probe.
   */
  #probeDelayMs(run: PodRun): number {
    const fast = this.#settings.readinessPeriodMs ?? 200;
    if (!run.containers.every((c) => c.ready)) return fast;
    const periods = run.containers.flatMap((c) => {
      const probeSpec = readinessProbeOf(c);
      return probeSpec === undefined ? [] : [probePeriodMs(probeSpec)];
    });
    return periods.length === 0 ? fast : Math.max(fast, Math.min(...periods));
  }

  async #probeAll(run: PodRun): Promise<void> {
    if (run.probing || run.terminating) return;
    run.probing = true;
    let changed = false;
    try {
      for (const container of run.containers) {
        if (container.ephemeral) continue;
        const before = container.ready;
        container.ready =
          container.child !== undefined && (await this.#probeContainer(run, container));
        if (before !== container.ready) changed = true;
      }
    } finally {
      run.probing = false;
    }
    if (changed) this.#writeStatus(run);
  }

  async #probeContainer(run: PodRun, container: ContainerRun): Promise<boolean> {
    if (container.postStarting) return false;
    const probeSpec = readinessProbeOf(container);
    const httpGet =
      probeSpec !== undefined && isObject(probeSpec.httpGet) ? probeSpec.httpGet : undefined;
    if (httpGet === undefined) return true;
    const port = this.#probePort(run, container, httpGet.port);
    if (port === undefined) return false;
    const path = typeof httpGet.path === 'string' ? httpGet.path : '/';
    const outcome = await probe(port, path, 1000);
    if (outcome === true) {
      container.probeFailures = 0;
      return true;
    }
    container.probeFailures++;
    this.#unhealthy(run, container, outcome, probeSpec);
    const threshold =
      typeof probeSpec?.failureThreshold === 'number' ? probeSpec.failureThreshold : 3;
    return container.ready && container.probeFailures < threshold;
  }

  /** An Unhealthy Event, at most once per probe period (the real kubelet probes every period). */
  #unhealthy(
    run: PodRun,
    container: ContainerRun,
    why: string,
    probeSpec: JsonObject | undefined,
  ): void {
    const periodMs = probePeriodMs(probeSpec);
    const now = this.#clock.now();
    if (container.child === undefined || now - container.lastUnhealthyAt < periodMs) return;
    container.lastUnhealthyAt = now;
    const pod = this.#api.peek(podInfo, run.namespace, run.name);
    if (pod !== undefined) this.#events?.unhealthy(pod, container.name, why);
  }

  /** The host port a probe's port (a name or a container port number) maps to. */
  #probePort(run: PodRun, container: ContainerRun, port: unknown): number | undefined {
    if (typeof port === 'string' && !/^\d+$/.test(port)) return run.ports[port];
    const number = Number(port);
    const declared = objects(container.spec.ports).find((p) => p.containerPort === number);
    if (declared === undefined) return Number.isFinite(number) ? number : undefined;
    return run.ports[typeof declared.name === 'string' ? declared.name : String(number)];
  }

  #writeStatus(run: PodRun): void {
    if (this.#stopped) return;
    const pod = this.#api.peek(podInfo, run.namespace, run.name);
    if (
      pod === undefined ||
      pod.metadata.uid !== run.uid ||
      pod.metadata.deletionTimestamp !== undefined
    )
      return;
    const spec = isObject(pod.spec) ? pod.spec : {};
    const regular = run.containers.filter((c) => !c.ephemeral);
    const containers = reportsOf(regular, (c) => run.forcedReady ?? c.ready);
    const everStarted = regular.every((c) => c.state.type !== 'waiting' || c.restartCount > 0);
    const allDone = regular.every((c) => c.state.type === 'terminated');
    const failed = regular.some((c) => c.state.type === 'terminated' && c.state.exitCode !== 0);
    const phase =
      allDone && spec.restartPolicy !== 'Always'
        ? failed
          ? 'Failed'
          : 'Succeeded'
        : everStarted
          ? 'Running'
          : 'Pending';
    const next = clone(pod);
    next.status = podStatus(pod, {
      phase,
      scheduled: true,
      containers,
      ephemeralContainers: reportsOf(
        run.containers.filter((c) => c.ephemeral),
        () => false,
      ),
      podIP: LOOPBACK,
      hostIP: LOOPBACK,
      startTime: run.startTime,
      now: this.#clock.now(),
    });
    this.#api.write(podInfo, next, 'status');
  }

  /**
   * Terminates a deleted pod as the kubelet does (kubelet-lifecycle.ts): every container at once
   * runs its preStop hook within the grace period, then gets SIGTERM, then SIGKILL when the grace
   * period is over (at least 2 s after its hook). Writes the containers' final states, then
   * releases the pod's claims and removes its private folder.
   */
  async #terminatePod(run: PodRun, pod: KubeObject): Promise<void> {
    run.terminating = true;
    run.probeTimer?.();
    run.refreshTimer?.();
    run.refreshTimer = undefined;
    await run.preparing?.catch(() => undefined);
    const deadline = new Deadline(this.#clock, graceDeadline(pod, this.#clock.now()));
    run.deadline = deadline;
    for (const container of run.containers) {
      container.restartTimer?.();
      container.restartTimer = undefined;
    }
    try {
      await Promise.all(
        run.containers.map((container) => this.#killContainer(run, pod, container, deadline)),
      );
    } finally {
      deadline.dispose();
    }
    this.#writeFinalStatus(run);
    for (const folder of run.claimFolders.splice(0)) this.#claims.release(folder);
    await rm(run.folder, { recursive: true, force: true, maxRetries: 3 });
  }

  /** kuberuntime's killContainer for one running container. */
  async #killContainer(
    run: PodRun,
    pod: KubeObject,
    container: ContainerRun,
    deadline: Deadline,
  ): Promise<void> {
    const child = container.child;
    if (child === undefined) return;
    this.#events?.killing(pod, container.name);
    const preStop = hookOf(container.spec, 'preStop');
    if (preStop !== undefined && deadline.at > this.#clock.now()) {
      const outcome = await runHook(
        preStop,
        this.#hookRunners(run, pod, container),
        deadline,
        this.#clock,
      );
      // As executePreStopHook: no hook output in the event, where secrets could leak.
      if (outcome.kind === 'failed')
        this.#events?.hookFailed(pod, container.name, 'PreStop', 'PreStopHook failed');
    }
    const minimumUntil = this.#clock.now() + MINIMUM_GRACE_MS;
    child.signal('SIGTERM');
    const graceOver = deadline
      .reached()
      .then(() => sleep(this.#clock, Math.max(0, minimumUntil - this.#clock.now())));
    const outcome = await Promise.race([
      child.exited.then(() => 'exited' as const),
      graceOver.then(() => 'killed' as const),
    ]);
    if (outcome === 'killed') child.signal('SIGKILL');
    await child.exited;
  }

  /** A terminated pod's last status: every container terminated; phase Succeeded or Failed. */
  #writeFinalStatus(run: PodRun): void {
    if (this.#stopped) return;
    const pod = this.#api.peek(podInfo, run.namespace, run.name);
    if (pod === undefined || pod.metadata.uid !== run.uid) return;
    const regular = run.containers.filter((c) => !c.ephemeral);
    const containers = reportsOf(regular, () => false);
    const failed = regular.some((c) => c.state.type !== 'terminated' || c.state.exitCode !== 0);
    const next = clone(pod);
    next.status = podStatus(pod, {
      phase: failed ? 'Failed' : 'Succeeded',
      scheduled: true,
      containers,
      ephemeralContainers: reportsOf(
        run.containers.filter((c) => c.ephemeral),
        () => false,
      ),
      podIP: LOOPBACK,
      hostIP: LOOPBACK,
      startTime: run.startTime,
      now: this.#clock.now(),
    });
    this.#api.write(podInfo, next, 'status');
  }

  /** Stops a pod's processes: SIGTERM, SIGKILL after `graceMs`; then removes its private folder. */
  async #teardown(run: PodRun, graceMs: number): Promise<void> {
    run.terminating = true;
    run.probeTimer?.();
    run.refreshTimer?.();
    run.refreshTimer = undefined;
    await run.preparing?.catch(() => undefined);
    for (const container of run.containers) {
      container.restartTimer?.();
      container.restartTimer = undefined;
      if (container.child !== undefined) {
        const pod = this.#api.peek(podInfo, run.namespace, run.name);
        if (pod !== undefined && !this.#stopped) this.#events?.killing(pod, container.name);
      }
      container.child?.signal('SIGTERM');
    }
    const children = run.containers.flatMap((c) => (c.child === undefined ? [] : [c.child]));
    const all = Promise.all(children.map((child) => child.exited));
    let cancelTimer: Cancel = () => undefined;
    const graceOver = new Promise<'timeout'>((resolve) => {
      cancelTimer = this.#clock.setTimeout(() => resolve('timeout'), graceMs);
    });
    const outcome = await Promise.race([all, graceOver]);
    cancelTimer();
    if (outcome === 'timeout') {
      for (const child of children) child.signal('SIGKILL');
      await all;
    }
    for (const folder of run.claimFolders.splice(0)) this.#claims.release(folder);
    await rm(run.folder, { recursive: true, force: true, maxRetries: 3 });
  }
}
