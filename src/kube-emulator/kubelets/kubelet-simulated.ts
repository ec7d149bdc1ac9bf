// The simulated kubelet: pods go Pending → Running → Ready after set delays; tests flip
// readiness, crash containers and slow terminations down. A deleted pod terminates as a kubelet
// does (kubelet-lifecycle.ts): preStop hooks within the grace period (sleep, and httpGet to an
// explicit host, really run; exec and httpGet to the pod's own IP, which does not exist here,
// take no time), then the containers take `terminationMs` to stop, and are killed (exit 137) if
// that outlasts the grace period (at least 2 s after the hooks). Their final states are written
// before the pod is removed.
import type { Cancel, Clock } from '../clock.ts';
import { clone, isObject, objects, type JsonObject } from '../json.ts';
import { isBound, NODE_NAME, type KubeletBase } from './kubelet.ts';
import type { NodeAgent } from './node-agent.ts';
import {
  Deadline,
  graceDeadline,
  hookOf,
  MINIMUM_GRACE_MS,
  runHook,
  type HookRunners,
} from './kubelet-lifecycle.ts';
import { containerNames, podStatus, type ContainerReport } from './pod-status.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { PodEvents } from './pod-events.ts';
import type { SimulatedLogs } from './simulated-logs.ts';
import type { KubeObject } from '../types.ts';
import { WorkQueue, objectKey, splitKey } from '../work-queue.ts';
import { podInfo } from '../kinds.ts';

export interface SimulatedKubeletOptions {
  mode: 'simulated';
  /** Delay from creation to Running (default 20 ms). */
  pendingMs?: number;
  /** Delay from Running to Ready (default 20 ms). */
  readyMs?: number;
  /** How long containers take to stop after SIGTERM; killed at the end of the grace period (default 20 ms). */
  terminationMs?: number;
}

type Stage = 'scheduled' | 'running' | 'ready';

interface PodState {
  uid: string;
  stage: Stage;
  startedAt: number;
  podIP: string;
  /** Readiness forced by a test. */
  forcedReady: boolean | undefined;
  crashing: boolean;
  restarts: number;
  timer: Cancel | undefined;
  removing: boolean;
  /** While terminating: the end of the grace period (a shorter delete moves it earlier). */
  deadline: Deadline | undefined;
}

export class SimulatedKubelet implements KubeletBase {
  readonly #api: ResourceApi;
  readonly #clock: Clock;
  readonly #pendingMs: number;
  readonly #readyMs: number;
  #terminationMs: number;
  readonly #terminationByPod = new Map<string, number>();
  readonly #pods = new Map<string, PodState>();
  readonly #queue: WorkQueue;
  readonly #unsubscribe: () => void;
  readonly #logs: SimulatedLogs | undefined;
  readonly #events: PodEvents | undefined;
  readonly #node: NodeAgent;
  #nextIp = 2;

  constructor(options: {
    api: ResourceApi;
    clock: Clock;
    settings: SimulatedKubeletOptions;
    /** A plausible log per container for `pods/log` (simulated-logs.ts). */
    logs?: SimulatedLogs;
    /** The scheduler's and kubelet's Events (pod-events.ts). */
    events?: PodEvents;
    /** The node this kubelet runs (and the scheduler binds pods to). */
    node: NodeAgent;
  }) {
    this.#api = options.api;
    this.#node = options.node;
    this.#logs = options.logs;
    this.#events = options.events;
    this.#clock = options.clock;
    this.#pendingMs = options.settings.pendingMs ?? 20;
    this.#readyMs = options.settings.readyMs ?? 20;
    this.#terminationMs = options.settings.terminationMs ?? 20;
    this.#queue = new WorkQueue({ handle: (key) => this.#sync(key), clock: this.#clock });
    this.#unsubscribe = this.#api.store.subscribe((event) => {
      if (event.storage !== podInfo.storage) return;
      this.#queue.add(
        objectKey(event.object.metadata.namespace ?? '', event.object.metadata.name ?? ''),
      );
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

  async stop(): Promise<void> {
    this.#unsubscribe();
    this.#queue.stop();
    for (const state of this.#pods.values()) state.timer?.();
    this.#pods.clear();
    this.#logs?.close();
    return Promise.resolve();
  }

  setReady(namespace: string, pod: string, ready: boolean): void {
    const state = this.#state(namespace, pod);
    state.forcedReady = ready;
    if (ready) state.crashing = false;
    this.#writeStatus(namespace, pod);
  }

  crash(namespace: string, pod: string): void {
    const state = this.#state(namespace, pod);
    state.crashing = true;
    state.restarts++;
    const current = this.#api.peek(podInfo, namespace, pod);
    if (current !== undefined)
      for (const container of containerNames(current)) this.#events?.backOff(current, container);
    this.#writeStatus(namespace, pod);
  }

  kill(namespace: string, pod: string): void {
    this.crash(namespace, pod);
  }

  setTerminationDelay(ms: number, pod?: { namespace: string; name: string }): void {
    if (pod === undefined) this.#terminationMs = ms;
    else this.#terminationByPod.set(objectKey(pod.namespace, pod.name), ms);
  }

  logPath(): string {
    throw new Error('the simulated kubelet runs no processes and writes no logs');
  }

  #state(namespace: string, name: string): PodState {
    const state = this.#pods.get(objectKey(namespace, name));
    if (state === undefined) throw new Error(`no pod ${namespace}/${name} on this kubelet`);
    return state;
  }

  #sync(key: string): void {
    const [namespace, name] = splitKey(key);
    const pod = this.#api.peek(podInfo, namespace, name);
    let state = this.#pods.get(key);
    if (pod === undefined || (state !== undefined && state.uid !== pod.metadata.uid)) {
      state?.timer?.();
      if (state !== undefined)
        void this.#logs?.remove({ metadata: { namespace, name, uid: state.uid } });
      this.#pods.delete(key);
      state = undefined;
      if (pod === undefined) return;
    }
    if (pod.metadata.deletionTimestamp !== undefined) return this.#terminate(key, pod, state);
    if (state !== undefined) return;
    const spec = pod.spec as Record<string, unknown>;
    // Another node's pod: no kubelet of this emulator runs it.
    if (isBound(pod) && spec.nodeName !== NODE_NAME) return;
    const bound = isBound(pod) ? pod : this.#node.schedule(pod);
    if (bound === undefined) return;
    if (bound !== pod) this.#events?.scheduled(bound);
    const n = this.#nextIp++;
    const created: PodState = {
      uid: bound.metadata.uid ?? '',
      stage: 'scheduled',
      startedAt: this.#clock.now(),
      podIP: `10.244.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`,
      forcedReady: undefined,
      crashing: false,
      restarts: 0,
      timer: undefined,
      removing: false,
      deadline: undefined,
    };
    this.#pods.set(key, created);
    this.#writeStatus(namespace, name);
    created.timer = this.#clock.setTimeout(() => {
      created.stage = 'running';
      const running = this.#api.peek(podInfo, namespace, name);
      if (running !== undefined) {
        for (const c of objects((running.spec as JsonObject | undefined)?.containers))
          this.#events?.started(running, String(c.name), String(c.image));
      }
      this.#writeStatus(namespace, name);
      created.timer = this.#clock.setTimeout(() => {
        created.stage = 'ready';
        created.timer = undefined;
        this.#writeStatus(namespace, name);
      }, this.#readyMs);
    }, this.#pendingMs);
  }

  #terminate(key: string, pod: KubeObject, state: PodState | undefined): void {
    const now = this.#clock.now();
    if (state?.removing === true) {
      state.deadline?.moveEarlier(graceDeadline(pod, now));
      return;
    }
    state?.timer?.();
    const stopMs = this.#terminationByPod.get(key) ?? this.#terminationMs;
    this.#logs?.stop(pod);
    if (state === undefined) {
      // Not started here (yet): nothing runs, the pod goes after its stop time.
      this.#clock.setTimeout(() => this.#remove(pod), Math.min(stopMs, graceDeadline(pod, 0)));
      return;
    }
    state.removing = true;
    const deadline = new Deadline(this.#clock, graceDeadline(pod, now));
    state.deadline = deadline;
    void this.#stopContainers(pod, stopMs, deadline, state.stage !== 'scheduled').then(
      (exitCode) => {
        deadline.dispose();
        this.#writeFinal(pod, state, exitCode);
        this.#remove(pod);
      },
    );
  }

  /** Hooks, then SIGTERM: resolves with the exit code (0 stopped in time, 137 killed). */
  async #stopContainers(
    pod: KubeObject,
    stopMs: number,
    deadline: Deadline,
    started: boolean,
  ): Promise<number> {
    const spec = isObject(pod.spec) ? pod.spec : {};
    const containers = objects(spec.containers);
    if (started)
      for (const container of containers) this.#events?.killing(pod, String(container.name));
    await Promise.all(
      containers.map(async (container) => {
        const preStop = hookOf(container, 'preStop');
        if (preStop === undefined || deadline.at <= this.#clock.now()) return;
        const get = isObject(preStop.httpGet) ? preStop.httpGet : undefined;
        if (get !== undefined && (typeof get.host !== 'string' || get.host === '')) return;
        const outcome = await runHook(preStop, SIMULATED_RUNNERS, deadline, this.#clock);
        if (outcome.kind === 'failed')
          this.#events?.hookFailed(pod, String(container.name), 'PreStop', 'PreStopHook failed');
      }),
    );
    const minimumUntil = this.#clock.now() + MINIMUM_GRACE_MS;
    let cancelStop: Cancel = () => undefined;
    const stopped = new Promise<number>((resolve) => {
      cancelStop = this.#clock.setTimeout(() => resolve(0), stopMs);
    });
    const killed = deadline.reached().then(
      () =>
        new Promise<number>((resolve) => {
          this.#clock.setTimeout(() => resolve(137), Math.max(0, minimumUntil - this.#clock.now()));
        }),
    );
    const exitCode = await Promise.race([stopped, killed]);
    cancelStop();
    return exitCode;
  }

  /** The containers' last states before the pod goes: Completed (0) or killed (137). */
  #writeFinal(pod: KubeObject, state: PodState, exitCode: number): void {
    const current = this.#api.peek(podInfo, pod.metadata.namespace ?? '', pod.metadata.name ?? '');
    if (current === undefined || current.metadata.uid !== pod.metadata.uid) return;
    const now = this.#clock.now();
    const next = clone(current);
    next.status = podStatus(current, {
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      scheduled: true,
      containers: containerNames(current).map((name) => ({
        name,
        state: {
          type: 'terminated',
          exitCode,
          reason: exitCode === 0 ? 'Completed' : 'Error',
          startedAt: state.startedAt,
          finishedAt: now,
        },
        ready: false,
        restartCount: state.restarts,
      })),
      hostIP: '10.0.0.1',
      podIP: state.podIP,
      startTime: state.startedAt,
      now,
    });
    this.#api.write(podInfo, next, 'status');
  }

  #remove(pod: KubeObject): void {
    const current = this.#api.peek(podInfo, pod.metadata.namespace ?? '', pod.metadata.name ?? '');
    if (current !== undefined && current.metadata.uid === pod.metadata.uid)
      this.#api.removeNow(podInfo, current);
    void this.#logs?.remove(pod);
  }

  #writeStatus(namespace: string, name: string): void {
    const state = this.#pods.get(objectKey(namespace, name));
    const pod = this.#api.peek(podInfo, namespace, name);
    if (state === undefined || pod === undefined || pod.metadata.deletionTimestamp !== undefined)
      return;
    const now = this.#clock.now();
    const running = state.stage !== 'scheduled';
    const ready = !state.crashing && (state.forcedReady ?? state.stage === 'ready');
    const containers: ContainerReport[] = containerNames(pod).map((containerName) => ({
      name: containerName,
      state: !running
        ? { type: 'waiting', reason: 'ContainerCreating' }
        : state.crashing
          ? {
              type: 'waiting',
              reason: 'CrashLoopBackOff',
              message: `back-off restarting failed container ${containerName}`,
            }
          : { type: 'running', startedAt: state.startedAt },
      ready: running && ready,
      restartCount: state.restarts,
      ...(state.restarts > 0
        ? {
            lastState: {
              type: 'terminated',
              exitCode: 1,
              reason: 'Error',
              finishedAt: now,
            } as const,
          }
        : {}),
    }));
    this.#logs?.update(pod, containers);
    const next = clone(pod);
    next.status = podStatus(pod, {
      phase: running ? 'Running' : 'Pending',
      scheduled: true,
      containers,
      hostIP: '10.0.0.1',
      ...(running ? { podIP: state.podIP, startTime: state.startedAt } : {}),
      now,
    });
    this.#api.write(podInfo, next, 'status');
  }
}

/**
 * Hooks without a container: an exec hook has nothing to run in and ends at once; an httpGet
 * hook reaches only an explicit `host` (the pod's own IP is made up).
 */
const SIMULATED_RUNNERS: HookRunners = {
  exec: () => ({ exited: Promise.resolve(0), kill: () => undefined }),
  httpTarget: (port, host) => {
    const number = Number(port);
    return host === undefined || !Number.isInteger(number) ? undefined : { host, port: number };
  },
};
