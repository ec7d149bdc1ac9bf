// The node the fake kubelets run on, as a kubelet and the scheduler keep it: the kubelet registers
// its Node (pkg/kubelet/kubelet_node_status.go initialNode: the well-known labels, the attach/detach
// and TTL annotations; nodestatus/setters.go: capacity and allocatable of this machine, the four
// conditions with their reasons and messages, addresses, daemon endpoints, nodeInfo) and renews its
// Lease in kube-node-lease (pkg/kubelet/nodelease: 40 s, renewed every 10 s, owned by the Node).
// Binding is the scheduler's job, done here: a pod that names no node is bound to this one unless
// the node is cordoned (`spec.unschedulable`, the NodeUnschedulable plugin) or has a NoSchedule or
// NoExecute taint the pod does not tolerate (TaintToleration); then it stays Pending with the
// scheduler's PodScheduled=False condition and FailedScheduling Event, and is bound once that
// changes. Cordoning also adds the `node.kubernetes.io/unschedulable:NoSchedule` taint
// (TaintNodesByCondition in pkg/controller/nodelifecycle).
import { readFileSync, statfsSync } from 'node:fs';
import { arch, availableParallelism, platform, release, totalmem } from 'node:os';
import type { Cancel, Clock } from '../clock.ts';
import { microTime, rfc3339 } from '../clock.ts';
import type { EventRecorder } from '../event-recorder.ts';
import { clone, isObject, objects, type JsonObject } from '../json.ts';
import { kindOf, nodeInfo, podInfo } from '../kinds.ts';
import type { ResourceApi } from '../resource-api.ts';
import type { KubeObject } from '../types.ts';
import { NODE_NAME } from './kubelet.ts';

const leases = kindOf('coordination.k8s.io', 'leases');
const LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's defaults: a 40 s Lease renewed at a quarter of it. */
const LEASE_SECONDS = 40;
const RENEW_MS = 10_000;
const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

function firstLine(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').split('\n')[0]?.trim();
  } catch {
    return undefined;
  }
}

function osImage(): string {
  try {
    const match = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    return match?.[1] ?? 'Linux';
  } catch {
    return 'Linux';
  }
}

/** Go's GOARCH for Node's process.arch. */
function goArch(): string {
  const names: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386' };
  return names[arch()] ?? arch();
}

/** Capacity and allocatable of this machine (setters.go MachineInfo; the default eviction thresholds). */
function resources(dir: string): { capacity: JsonObject; allocatable: JsonObject } {
  const memoryKi = Math.floor(totalmem() / 1024);
  let storageBytes: number;
  try {
    const fs = statfsSync(dir);
    storageBytes = fs.blocks * fs.bsize;
  } catch {
    storageBytes = 0;
  }
  const cpu = String(availableParallelism());
  const capacity = {
    cpu,
    'ephemeral-storage': `${Math.floor(storageBytes / 1024)}Ki`,
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: `${memoryKi}Ki`,
    pods: '110',
  };
  // Allocatable = capacity − the hard eviction thresholds (memory.available<100Mi,
  // nodefs.available<10%): no kube or system reservation is configured.
  const allocatable = {
    cpu,
    'ephemeral-storage': String(Math.floor(storageBytes * 0.9)),
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: `${Math.max(0, memoryKi - 100 * 1024)}Ki`,
    pods: '110',
  };
  return { capacity, allocatable };
}

/** Why the scheduler cannot bind a pod to the node, or undefined when it can. */
export function unschedulableReason(
  node: KubeObject | undefined,
  pod: KubeObject,
): string | undefined {
  if (node === undefined) return '0/0 nodes are available.';
  const spec = isObject(node.spec) ? node.spec : {};
  const podSpec = isObject(pod.spec) ? pod.spec : {};
  const tolerations = objects(podSpec.tolerations);
  const tolerates = (taint: JsonObject): boolean =>
    tolerations.some((toleration) => {
      if (
        toleration.effect !== undefined &&
        toleration.effect !== '' &&
        toleration.effect !== taint.effect
      )
        return false;
      if (toleration.operator === 'Exists')
        return (
          toleration.key === undefined || toleration.key === '' || toleration.key === taint.key
        );
      return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
    });
  const preemption =
    'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
  if (spec.unschedulable === true && !tolerates({ key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule' }))
    return `0/1 nodes are available: 1 node(s) were unschedulable. ${preemption}`;
  const untolerated = objects(spec.taints).find(
    (taint) => (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !tolerates(taint),
  );
  if (untolerated !== undefined) {
    const value =
      typeof untolerated.value === 'string' && untolerated.value !== ''
        ? `: ${untolerated.value}`
        : '';
    return `0/1 nodes are available: 1 node(s) had untolerated taint {${String(untolerated.key)}${value}}. ${preemption}`;
  }
  return undefined;
}

export interface NodeAgentOptions {
  api: ResourceApi;
  clock: Clock;
  events: EventRecorder | undefined;
  /** The node's InternalIP (the pods' hostIP). */
  hostIP: string;
  /** `kube-emulator://<runtime>` in nodeInfo.containerRuntimeVersion. */
  runtime: 'process' | 'simulated';
  /** The folder whose file system the node's ephemeral storage is. */
  dir: string;
  kubeletVersion: string;
}

export class NodeAgent {
  readonly name = NODE_NAME;
  readonly #options: NodeAgentOptions;
  #renew: Cancel | undefined;
  #stopped = false;
  readonly #unsubscribe: () => void;
  readonly #listeners: (() => void)[] = [];
  /** Pods told they cannot be scheduled, with the reason last written (one Event per reason). */
  readonly #refused = new Map<string, string>();

  constructor(options: NodeAgentOptions) {
    this.#options = options;
    this.#register();
    this.#renewLease();
    this.#unsubscribe = options.api.store.subscribe((event) => {
      if (event.storage !== nodeInfo.storage || event.object.metadata.name !== this.name) return;
      if (event.type !== 'DELETED') this.#taintWhenCordoned(event.object);
      for (const listener of this.#listeners) listener();
    });
  }

  /** Called when the Node changes (a cordon lifted: pods waiting to be scheduled try again). */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  stop(): void {
    this.#stopped = true;
    this.#renew?.();
    this.#unsubscribe();
  }

  get node(): KubeObject | undefined {
    return this.#options.api.peek(nodeInfo, '', this.name);
  }

  /**
   * The scheduler's filter for a pod that names no node: true when it may be bound here now;
   * otherwise its PodScheduled=False condition and a FailedScheduling Event are written (once per
   * reason) and it stays Pending until the node changes.
   */
  admit(pod: KubeObject): boolean {
    const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}/${pod.metadata.uid ?? ''}`;
    const reason = unschedulableReason(this.node, pod);
    if (reason === undefined) {
      this.#refused.delete(key);
      return true;
    }
    if (this.#refused.get(key) !== reason) {
      this.#refused.set(key, reason);
      this.#markUnschedulable(pod, reason);
    }
    return false;
  }

  /** Binds a pod that names no node to this one when `admit` lets it; undefined otherwise. */
  schedule(pod: KubeObject): KubeObject | undefined {
    if (!this.admit(pod)) return undefined;
    const next = clone(pod);
    (next.spec as JsonObject).nodeName = this.name;
    return this.#options.api.write(podInfo, next);
  }

  #markUnschedulable(pod: KubeObject, message: string): void {
    const { api, clock, events } = this.#options;
    const next = clone(pod);
    const status = isObject(next.status) ? next.status : {};
    const old = objects(status.conditions).find((c) => c.type === 'PodScheduled');
    next.status = {
      ...status,
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime:
            old?.status === 'False' ? old.lastTransitionTime : rfc3339(clock.now()),
          reason: 'Unschedulable',
          message,
        },
      ],
      qosClass: status.qosClass ?? 'BestEffort',
    };
    api.write(podInfo, next, 'status');
    events?.recordNew({
      object: pod,
      info: podInfo,
      controller: 'default-scheduler',
      instance: `default-scheduler-${this.name}`,
      type: 'Warning',
      reason: 'FailedScheduling',
      action: 'Scheduling',
      note: message,
    });
  }

  #register(): void {
    const { api, clock, hostIP, runtime, dir, kubeletVersion } = this.#options;
    if (this.node !== undefined) return;
    const now = rfc3339(clock.now());
    const condition = (
      type: string,
      status: string,
      reason: string,
      message: string,
    ): JsonObject => ({
      type,
      status,
      lastHeartbeatTime: now,
      lastTransitionTime: now,
      reason,
      message,
    });
    const os = platform();
    const machineID = firstLine('/etc/machine-id') ?? '';
    const created = api.create(nodeInfo, '', {
      metadata: {
        name: this.name,
        labels: {
          'beta.kubernetes.io/arch': goArch(),
          'beta.kubernetes.io/os': os,
          'kubernetes.io/arch': goArch(),
          'kubernetes.io/hostname': this.name,
          'kubernetes.io/os': os,
        },
        annotations: {
          'node.alpha.kubernetes.io/ttl': '0',
          'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        },
      },
      spec: {},
    });
    const next = clone(created);
    next.status = {
      ...resources(dir),
      conditions: [
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        condition(
          'DiskPressure',
          'False',
          'KubeletHasNoDiskPressure',
          'kubelet has no disk pressure',
        ),
        condition(
          'PIDPressure',
          'False',
          'KubeletHasSufficientPID',
          'kubelet has sufficient PID available',
        ),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: hostIP },
        { type: 'Hostname', address: this.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID,
        systemUUID: firstLine('/sys/class/dmi/id/product_uuid') ?? machineID,
        bootID: firstLine('/proc/sys/kernel/random/boot_id') ?? '',
        kernelVersion: release(),
        osImage: osImage(),
        containerRuntimeVersion: `kube-emulator://${runtime}`,
        kubeletVersion,
        kubeProxyVersion: '',
        operatingSystem: os,
        architecture: goArch(),
      },
    };
    const node = api.write(nodeInfo, next, 'status');
    this.#nodeEvents(node);
  }

  /** What a kubelet and the node controller record at registration (kubectl describe node). */
  #nodeEvents(node: KubeObject): void {
    const { events } = this.#options;
    if (events === undefined) return;
    // The kubelet's events name the node by name as its uid (kubectl describe node merges both).
    const byName: KubeObject = { metadata: { name: this.name, uid: this.name } };
    const kubelet = { component: 'kubelet', host: this.name };
    const record = (reason: string, message: string): void =>
      events.record({
        object: byName,
        info: nodeInfo,
        source: kubelet,
        type: 'Normal',
        reason,
        message,
      });
    record('Starting', 'Starting kubelet.');
    for (const status of [
      'NodeHasSufficientMemory',
      'NodeHasNoDiskPressure',
      'NodeHasSufficientPID',
    ])
      record(status, `Node ${this.name} status is now: ${status}`);
    record('NodeAllocatableEnforced', 'Updated Node Allocatable limit across pods');
    record('NodeReady', `Node ${this.name} status is now: NodeReady`);
    events.record({
      object: node,
      info: nodeInfo,
      source: { component: 'node-controller' },
      type: 'Normal',
      reason: 'RegisteredNode',
      message: `Node ${this.name} event: Registered Node ${this.name} in Controller`,
    });
  }

  /** Creates or renews the node's Lease, then again in 10 s. */
  #renewLease(): void {
    if (this.#stopped) return;
    const { api, clock } = this.#options;
    const node = this.node;
    try {
      const lease = api.peek(leases, LEASE_NAMESPACE, this.name);
      const spec = {
        holderIdentity: this.name,
        leaseDurationSeconds: LEASE_SECONDS,
        renewTime: microTime(clock.now()),
      };
      if (lease === undefined && node !== undefined) {
        api.create(leases, LEASE_NAMESPACE, {
          metadata: {
            name: this.name,
            ownerReferences: [
              { apiVersion: 'v1', kind: 'Node', name: this.name, uid: node.metadata.uid ?? '' },
            ],
          },
          spec,
        });
      } else if (lease !== undefined) {
        api.write(leases, {
          ...clone(lease),
          spec: { ...(isObject(lease.spec) ? lease.spec : {}), ...spec },
        });
      }
    } catch {
      // the namespace may be being torn down; the next renewal tries again
    }
    this.#renew = clock.setTimeout(() => this.#renewLease(), RENEW_MS);
  }

  /** TaintNodesByCondition: a cordoned node carries the unschedulable NoSchedule taint. */
  #taintWhenCordoned(node: KubeObject): void {
    if (nodeTaint(node, this.#options.clock.now()) === undefined) return;
    // A store listener may not write synchronously (work-queue.ts): on the next turn.
    setImmediate(() => {
      const current = this.node;
      if (this.#stopped || current === undefined) return;
      const taints = nodeTaint(current, this.#options.clock.now());
      if (taints === undefined) return;
      const next = clone(current);
      const spec = isObject(next.spec) ? next.spec : {};
      if (taints.length === 0) delete spec.taints;
      else spec.taints = taints;
      next.spec = spec;
      try {
        this.#options.api.write(nodeInfo, next);
      } catch {
        // changed or gone meanwhile: its own event brings it here again
      }
    });
  }
}

/** The taints a node should carry for its cordon, or undefined when they are right already. */
function nodeTaint(node: KubeObject, now: number): JsonObject[] | undefined {
  const spec = isObject(node.spec) ? node.spec : {};
  const taints = objects(spec.taints);
  const isCordonTaint = (t: JsonObject): boolean =>
    t.key === UNSCHEDULABLE_TAINT && t.effect === 'NoSchedule';
  const cordoned = spec.unschedulable === true;
  if (taints.some(isCordonTaint) === cordoned) return undefined;
  return cordoned
    ? [...taints, { key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule', timeAdded: rfc3339(now) }]
    : taints.filter((t) => !isCordonTaint(t));
}
