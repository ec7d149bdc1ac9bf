// What both fake kubelets offer tests, and the pod bookkeeping they share.
import type { ExecTarget } from './images.ts';
import type { KubeObject } from '../types.ts';

/** The node every pod is bound to. */
export const NODE_NAME = 'kube-emulator';

/** Test controls of the fake kubelet (both modes). */
export interface KubeletControl {
  /** Forces a pod's readiness (true also ends a crash loop). Sticky until called again. */
  setReady(namespace: string, pod: string, ready: boolean): void;
  /** Simulated: one container restart into CrashLoopBackOff (Ready False). Process: kills the process (SIGKILL), which then restarts with backoff. */
  crash(namespace: string, pod: string): void;
  /** Process mode: sends `signal` (default SIGTERM) to the pod's processes. */
  kill(namespace: string, pod: string, signal?: NodeJS.Signals): void;
  /** How long pods take to terminate after deletion (capped by their grace period); per pod when given. */
  setTerminationDelay(ms: number, pod?: { namespace: string; name: string }): void;
  /** Process mode: the file the pod's processes write stdout and stderr to. */
  logPath(namespace: string, pod: string): string;
}

export interface KubeletBase extends KubeletControl {
  stop(): Promise<void>;
  /** The process kubelet's containers, for `kubectl exec` (pod-exec.ts). */
  execTarget?(namespace: string, pod: string, container: string): ExecTarget | string;
}

/** Whether a pod names a node (the scheduler, node-agent.ts, or its author bound it). */
export function isBound(pod: KubeObject): boolean {
  const spec = pod.spec as Record<string, unknown> | undefined;
  return typeof spec?.nodeName === 'string' && spec.nodeName !== '';
}

/** How long (ms) a deleted pod may take, given the kubelet's delay and the pod's grace period. */
export function terminationMs(pod: KubeObject, delayMs: number): number {
  const grace = pod.metadata.deletionGracePeriodSeconds ?? 30;
  return Math.min(delayMs, grace * 1000);
}
