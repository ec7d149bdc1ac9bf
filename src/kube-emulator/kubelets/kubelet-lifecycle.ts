// Container lifecycle as the kubelet runs it (Kubernetes pkg/kubelet/kuberuntime/
// kuberuntime_container.go, killContainer and executePreStopHook; pkg/kubelet/lifecycle/
// handlers.go): a pod being deleted has its grace period (the delete's gracePeriodSeconds, else
// the pod's terminationGracePeriodSeconds) from when the kubelet sees it. Each container's preStop
// hook runs first, bounded by that grace period, while the container keeps running; a hook that
// fails is a `FailedPreStopHook` Warning and termination goes on. Then SIGTERM, and SIGKILL when
// the grace period is over — but never less than 2 s after the hook
// (minimumGracePeriodInSeconds). A later delete with a shorter grace period moves the deadline
// earlier. Hooks: `exec` (a process), `httpGet` (2xx/3xx is success) and `sleep`.
import type { Cancel, Clock } from '../clock.ts';
import { isObject, objects, type JsonObject } from '../json.ts';
import type { KubeObject } from '../types.ts';

// node:http(s) through process.getBuiltinModule, not an ESM import: eslint.config.js says why.
const { request: httpRequest } = process.getBuiltinModule('node:http');
const { request: httpsRequest } = process.getBuiltinModule('node:https');

/** kuberuntime's minimumGracePeriodInSeconds: a container always gets this long after SIGTERM. */
export const MINIMUM_GRACE_MS = 2_000;

export type HookName = 'preStop' | 'postStart';

/** The container's `lifecycle.<name>` handler, if it has one. */
export function hookOf(container: JsonObject, name: HookName): JsonObject | undefined {
  const lifecycle = isObject(container.lifecycle) ? container.lifecycle : undefined;
  const handler = lifecycle?.[name];
  return isObject(handler) ? handler : undefined;
}

/**
 * When a deleted pod's grace period ends (ms since the epoch), counted from `now`, when the
 * kubelet sees the deletion: its `deletionGracePeriodSeconds` (the delete's gracePeriodSeconds,
 * else the spec's terminationGracePeriodSeconds, else 30), as killContainer counts it — not the
 * deletion timestamp, which is rounded down to the second.
 */
export function graceDeadline(pod: KubeObject, now: number): number {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const seconds =
    pod.metadata.deletionGracePeriodSeconds ??
    (typeof spec.terminationGracePeriodSeconds === 'number'
      ? spec.terminationGracePeriodSeconds
      : 30);
  return now + seconds * 1000;
}

/** A point in time that can only move earlier; `reached()` resolves once it has passed. */
export class Deadline {
  readonly #clock: Clock;
  #at: number;
  readonly #waiters = new Set<{ resolve: () => void; cancel: Cancel }>();

  constructor(clock: Clock, at: number) {
    this.#clock = clock;
    this.#at = at;
  }

  get at(): number {
    return this.#at;
  }

  /** A later delete with a shorter grace period: the deadline moves earlier, never later. */
  moveEarlier(at: number): void {
    if (at >= this.#at) return;
    this.#at = at;
    for (const waiter of [...this.#waiters]) {
      waiter.cancel();
      this.#arm(waiter.resolve, waiter);
    }
  }

  reached(): Promise<void> {
    return new Promise((resolve) => {
      const waiter = { resolve, cancel: (() => undefined) as Cancel };
      this.#arm(resolve, waiter);
    });
  }

  #arm(resolve: () => void, waiter: { resolve: () => void; cancel: Cancel }): void {
    this.#waiters.add(waiter);
    waiter.cancel = this.#clock.setTimeout(
      () => {
        this.#waiters.delete(waiter);
        resolve();
      },
      Math.max(0, this.#at - this.#clock.now()),
    );
  }

  /** Cancels every pending timer (the pod is gone). */
  dispose(): void {
    for (const waiter of this.#waiters) waiter.cancel();
    this.#waiters.clear();
  }
}

/** A started exec hook: its exit, and a way to stop it when its container goes. */
export interface HookProcess {
  exited: Promise<number>;
  kill(): void;
}

/** How a kubelet runs each kind of handler for one container. */
export interface HookRunners {
  /** Starts `command` as the container would run it (its env, its image's binaries). */
  exec(command: readonly string[]): HookProcess;
  /** The `host:port` an httpGet handler's port (a name or a number) and host go to. */
  httpTarget(port: unknown, host: string | undefined): { host: string; port: number } | undefined;
}

export type HookOutcome =
  | { kind: 'done' }
  | { kind: 'failed'; message: string }
  /** The deadline came first (the hook may still run; the caller stops it with the container). */
  | { kind: 'cut' };

/**
 * Runs one handler until it finishes or `deadline` passes. Never throws: a handler that cannot
 * run is a failure with a message (handlers.go's messages, without exec output: the kubelet does
 * not put it in events, where secrets could leak).
 */
export async function runHook(
  handler: JsonObject,
  runners: HookRunners,
  deadline: Deadline,
  clock: Clock,
): Promise<HookOutcome> {
  let stop: () => void = () => undefined;
  const work = ((): Promise<HookOutcome> => {
    if (isObject(handler.exec)) {
      const command = Array.isArray(handler.exec.command) ? handler.exec.command.map(String) : [];
      if (command.length === 0) return Promise.resolve(failed('exec hook without a command'));
      const started = runners.exec(command);
      stop = () => started.kill();
      return started.exited.then((code) =>
        code === 0 ? done() : failed(`command ${JSON.stringify(command)} exited with ${code}`),
      );
    }
    if (isObject(handler.httpGet)) {
      const controller = new AbortController();
      stop = () => controller.abort();
      return httpHook(handler.httpGet, runners, controller.signal);
    }
    if (isObject(handler.sleep)) {
      const seconds = typeof handler.sleep.seconds === 'number' ? handler.sleep.seconds : 0;
      return new Promise((resolve) => {
        const cancel = clock.setTimeout(() => resolve(done()), seconds * 1000);
        stop = () => {
          cancel();
          resolve(done());
        };
      });
    }
    return Promise.resolve(failed('invalid handler'));
  })();
  const outcome = await Promise.race([work, deadline.reached().then(() => cut())]);
  if (outcome.kind === 'cut') stop();
  return outcome;
}

const done = (): HookOutcome => ({ kind: 'done' });
const failed = (message: string): HookOutcome => ({ kind: 'failed', message });
const cut = (): HookOutcome => ({ kind: 'cut' });

function httpHook(
  get: JsonObject,
  runners: HookRunners,
  signal: AbortSignal,
): Promise<HookOutcome> {
  const target = runners.httpTarget(
    get.port,
    typeof get.host === 'string' && get.host !== '' ? get.host : undefined,
  );
  if (target === undefined)
    return Promise.resolve(failed(`couldn't find port ${String(get.port)}`));
  const path = typeof get.path === 'string' ? get.path : '/';
  const headers: Record<string, string> = { 'User-Agent': 'kube-lifecycle/1.32' };
  for (const header of objects(get.httpHeaders)) {
    if (typeof header.name === 'string')
      headers[header.name] = typeof header.value === 'string' ? header.value : '';
  }
  const secure = get.scheme === 'HTTPS';
  const send = secure ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(
      {
        host: target.host,
        port: target.port,
        path: path.startsWith('/') ? path : `/${path}`,
        method: 'GET',
        headers,
        agent: false,
        signal,
        // The kubelet does not verify a hook's certificate (InsecureSkipVerify).
        ...(secure ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        resolve(
          status >= 200 && status < 400 ? done() : failed(`HTTP lifecycle hook got ${status}`),
        );
      },
    );
    req.on('error', (error) => resolve(failed(`HTTP lifecycle hook failed: ${error.message}`)));
    req.end();
  });
}
