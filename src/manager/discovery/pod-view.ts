// Reading a pod: readiness (and since when), holds and drains, the node's own RPC endpoint, the
// service URL it would stake with, and when its node started (the key it holds is no newer).
import type { V1Pod } from '@kubernetes/client-node';
import { Annotations, type PodView, type StatefulSetView, type ValidatorId } from '../model.ts';
import { kubeTimeMs } from './kube-time.ts';

export interface PodViewContext {
  namespace: string;
  statefulSet: StatefulSetView | undefined;
  ordinal: number | undefined;
  id: ValidatorId | undefined;
  serviceUrlTemplate: string;
  nodeRpcPortName: string;
  /** Manager-clock ms when this pod (uid) was first seen Ready in its current Ready spell. */
  readySince: number | undefined;
  /** This uid lost readiness since it was first seen Ready (see `PodView.flapped`). */
  lostReady?: boolean;
}

/** True when the pod is Running, not terminating, and its Ready condition is True. */
export function isPodReady(pod: V1Pod): boolean {
  if (pod.metadata?.deletionTimestamp !== undefined) return false;
  if (pod.status?.phase !== 'Running') return false;
  return pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

function hostPorts(pod: V1Pod): Record<string, number> | undefined {
  const raw = pod.metadata?.annotations?.[Annotations.hostPorts];
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as unknown;
    return typeof parsed === 'object' && parsed !== null
      ? (parsed as Record<string, number>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resolves a container port by name or number to `host:port`: the loopback port published by the
 * emulator's process kubelet when there is one, else the pod IP and the container port.
 */
export function resolvePort(pod: V1Pod, port: string): { host: string; port: number } | undefined {
  const published = hostPorts(pod);
  const containerPorts = pod.spec?.containers.flatMap((c) => c.ports ?? []) ?? [];
  const match = containerPorts.find((p) => p.name === port || String(p.containerPort) === port);
  const key = match?.name ?? (match === undefined ? port : String(match.containerPort));
  const hostPort = published?.[key];
  const ip = pod.status?.podIP;
  if (typeof hostPort === 'number') return { host: ip ?? '127.0.0.1', port: hostPort };
  if (match === undefined || ip === undefined) return undefined;
  return { host: ip, port: match.containerPort };
}

/** Renders the service-URL template; undefined when a placeholder cannot be filled. */
export function renderServiceUrl(
  template: string,
  pod: V1Pod,
  context: PodViewContext,
): string | undefined {
  const gaps: string[] = [];
  const out = template.replace(
    /\{([a-zA-Z]+)(?::([^}]+))?\}/g,
    (_all, name: string, arg: string | undefined) => {
      let value: string | undefined;
      switch (name) {
        case 'pod':
          value = pod.metadata?.name;
          break;
        case 'service':
          value = context.statefulSet?.serviceName || undefined;
          break;
        case 'namespace':
          value = context.namespace;
          break;
        case 'statefulset':
          value = context.statefulSet?.name;
          break;
        case 'ordinal':
          value = context.ordinal === undefined ? undefined : String(context.ordinal);
          break;
        case 'id':
          value = context.id;
          break;
        case 'podIP':
          value = pod.status?.podIP;
          break;
        case 'port':
          value = arg === undefined ? undefined : resolvePort(pod, arg)?.port.toString();
          break;
        default:
          value = undefined;
      }
      if (value === undefined) gaps.push(name);
      return value ?? '';
    },
  );
  return gaps.length > 0 ? undefined : out;
}

/**
 * The validator's container: the one that declares the node's RPC port (the port `resolvePort`
 * finds the node's own RPC by), else the first one.
 */
export function validatorContainer(pod: V1Pod, nodeRpcPortName: string): string | undefined {
  const containers = pod.spec?.containers ?? [];
  const declares = containers.find((c) =>
    (c.ports ?? []).some(
      (p) => p.name === nodeRpcPortName || String(p.containerPort) === nodeRpcPortName,
    ),
  );
  return (declares ?? containers[0])?.name;
}

/**
 * When the validator's node started, as far as the key it holds goes: the earlier of the pod's
 * start (a key mounted from the Secret as a file is written then, and a kubelet refreshes it only
 * now and then) and its validator container's current run (a key from the environment is read
 * then). Undefined while that container is not running. Whole seconds: Kubernetes writes its
 * times to the second (apimachinery's metav1.Time), so the true start is up to a second later.
 */
export function nodeStartedAt(pod: V1Pod, nodeRpcPortName: string): number | undefined {
  const name = validatorContainer(pod, nodeRpcPortName);
  const status = pod.status?.containerStatuses?.find((c) => c.name === name);
  const running = kubeTimeMs(status?.state?.running?.startedAt);
  if (running === undefined) return undefined;
  const podStart = kubeTimeMs(pod.status?.startTime);
  return podStart === undefined ? running : Math.min(podStart, running);
}

export function toPodView(pod: V1Pod, context: PodViewContext): PodView {
  const ready = isPodReady(pod);
  const annotations = pod.metadata?.annotations ?? {};
  const rpc = resolvePort(pod, context.nodeRpcPortName);
  return {
    name: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? context.namespace,
    uid: pod.metadata?.uid ?? '',
    ready,
    readySince: ready ? context.readySince : undefined,
    flapped:
      context.lostReady === true ||
      (pod.status?.containerStatuses ?? []).some((c) => c.restartCount > 0),
    terminating: pod.metadata?.deletionTimestamp !== undefined,
    deletingAt:
      pod.metadata?.deletionTimestamp === undefined
        ? undefined
        : new Date(pod.metadata.deletionTimestamp).getTime(),
    held: annotations[Annotations.hold] === 'true',
    draining: annotations[Annotations.draining] === 'true',
    nodeRpcUrl:
      rpc === undefined
        ? undefined
        : `http://${rpc.host.includes(':') ? `[${rpc.host}]` : rpc.host}:${rpc.port}`,
    serviceUrl: renderServiceUrl(context.serviceUrlTemplate, pod, context),
    startedAt: nodeStartedAt(pod, context.nodeRpcPortName),
  };
}
