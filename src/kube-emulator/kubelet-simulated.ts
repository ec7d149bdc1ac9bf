// The simulated kubelet: pods go Pending → Running → Ready after set delays; tests flip
// readiness, crash containers and slow terminations down.
import type { Cancel, Clock } from './clock.ts';
import { clone, objects, type JsonObject } from './json.ts';
import { bindPod, podInfo, podKey, splitKey, terminationMs, type KubeletBase } from './kubelet.ts';
import { containerNames, podStatus, type ContainerReport } from './pod-status.ts';
import type { ResourceApi } from './resource-api.ts';
import type { PodEvents } from './pod-events.ts';
import type { SimulatedLogs } from './simulated-logs.ts';
import type { KubeObject } from './types.ts';
import { WorkQueue } from './work-queue.ts';

export interface SimulatedKubeletOptions {
  mode: 'simulated';
  /** Delay from creation to Running (default 20 ms). */
  pendingMs?: number;
  /** Delay from Running to Ready (default 20 ms). */
  readyMs?: number;
  /** Delay from deletion to removal, capped by the grace period (default 20 ms). */
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
  #nextIp = 2;

  constructor(options: {
    api: ResourceApi;
    clock: Clock;
    settings: SimulatedKubeletOptions;
    /** A plausible log per container for `pods/log` (simulated-logs.ts). */
    logs?: SimulatedLogs;
    /** The scheduler's and kubelet's Events (pod-events.ts). */
    events?: PodEvents;
  }) {
    this.#api = options.api;
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
        podKey(event.object.metadata.namespace ?? '', event.object.metadata.name ?? ''),
      );
    });
    for (const pod of this.#api.store.list(podInfo.storage)) {
      this.#queue.add(podKey(pod.metadata.namespace ?? '', pod.metadata.name ?? ''));
    }
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
    else this.#terminationByPod.set(podKey(pod.namespace, pod.name), ms);
  }

  logPath(): string {
    throw new Error('the simulated kubelet runs no processes and writes no logs');
  }

  #state(namespace: string, name: string): PodState {
    const state = this.#pods.get(podKey(namespace, name));
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
    const bound = spec.nodeName === undefined ? bindPod(this.#api, pod) : pod;
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
    if (state?.removing === true) return;
    state?.timer?.();
    if (state !== undefined && state.stage !== 'scheduled')
      for (const container of containerNames(pod)) this.#events?.killing(pod, container);
    const delay = terminationMs(pod, this.#terminationByPod.get(key) ?? this.#terminationMs);
    this.#logs?.stop(pod);
    const remove = (): void => {
      const current = this.#api.peek(
        podInfo,
        pod.metadata.namespace ?? '',
        pod.metadata.name ?? '',
      );
      if (current !== undefined && current.metadata.uid === pod.metadata.uid)
        this.#api.removeNow(podInfo, current);
      void this.#logs?.remove(pod);
    };
    if (state === undefined) {
      this.#clock.setTimeout(remove, delay);
      return;
    }
    state.removing = true;
    state.timer = this.#clock.setTimeout(remove, delay);
  }

  #writeStatus(namespace: string, name: string): void {
    const state = this.#pods.get(podKey(namespace, name));
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
