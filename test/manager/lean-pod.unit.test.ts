// The informer cache keeps a lean pod (src/manager/discovery/lean-pod.ts): every reading of a pod
// gives the same answer on the lean pod as on the full one, and what is dropped is dropped.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { leanPod } from '../../src/manager/discovery/lean-pod.ts';
import {
  isPodReady,
  resolvePort,
  toPodView,
  type PodViewContext,
} from '../../src/manager/discovery/pod-view.ts';
import { Annotations } from '../../src/manager/model.ts';

/** A pod as a real API server sends it: the whole spec, managedFields, every status field. */
function fullPod(
  patch: {
    ready?: boolean;
    terminating?: boolean;
    restarts?: number;
    annotations?: Record<string, string>;
    podIP?: string | null;
    /** The node container's state: running since `started` (default), or waiting. */
    state?: 'running' | 'waiting';
    /** Times as a watch sends them (RFC 3339 text) rather than as a list's Dates. */
    textTimes?: boolean;
    /** The node's RPC port is declared on the second container (the first is a sidecar). */
    sidecarFirst?: boolean;
  } = {},
): V1Pod {
  const time = (iso: string): Date => (patch.textTimes === true ? iso : new Date(iso)) as Date;
  const node = {
    name: 'node',
    image: 'localnet-node:dev',
    ports: [
      { name: 'rpc', containerPort: 50832, protocol: 'TCP' },
      { name: 'p2p', containerPort: 42069, protocol: 'TCP' },
    ],
    env: [{ name: 'A', value: 'b' }],
    resources: {},
    terminationMessagePath: '/dev/termination-log',
  };
  const sidecar = { name: 'sidecar', image: 'busybox' };
  const nodeStatus = {
    name: 'node',
    ready: patch.ready !== false,
    restartCount: patch.restarts ?? 0,
    image: 'localnet-node:dev',
    imageID: 'sha256:1',
    state:
      patch.state === 'waiting'
        ? { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } }
        : { running: { startedAt: time('2026-12-02T09:01:07Z') } },
    lastState: {
      terminated: {
        exitCode: 1,
        reason: 'Error',
        startedAt: time('2026-12-02T09:00:30Z'),
        finishedAt: time('2026-12-02T09:01:00Z'),
      },
    },
  };
  const sidecarStatus = {
    name: 'sidecar',
    ready: true,
    restartCount: 0,
    image: 'busybox',
    imageID: 'sha256:2',
    state: { running: { startedAt: time('2026-12-02T09:00:05Z') } },
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'validator-3',
      namespace: 'devnet',
      uid: 'uid-3',
      resourceVersion: '42',
      creationTimestamp: new Date('2026-12-02T09:00:00Z'),
      ...(patch.terminating === true
        ? { deletionTimestamp: new Date('2026-12-02T09:05:00Z') }
        : {}),
      labels: { 'pokt.network/purpose': 'validator', 'apps.kubernetes.io/pod-index': '3' },
      annotations: patch.annotations ?? {},
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: 'validator',
          uid: 'sts',
          controller: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': {} } },
        },
      ],
    },
    spec: {
      containers: patch.sidecarFirst === true ? [sidecar, node] : [node, sidecar],
      hostname: 'validator-3',
      subdomain: 'validators',
      nodeName: 'node-a',
      tolerations: [{ key: 'k', operator: 'Exists' }],
    },
    status: {
      phase: 'Running',
      ...(patch.podIP === null ? {} : { podIP: patch.podIP ?? '10.1.0.3' }),
      hostIP: '10.0.0.1',
      qosClass: 'BestEffort',
      startTime: time('2026-12-02T09:00:02Z'),
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: new Date() },
        {
          type: 'Ready',
          status: patch.ready === false ? 'False' : 'True',
          lastTransitionTime: new Date(),
        },
      ],
      containerStatuses: patch.sidecarFirst === true ? [sidecarStatus, nodeStatus] : [nodeStatus],
    },
  };
}

const TEMPLATES = [
  'http://{pod}.{service}.{namespace}.svc:{port:rpc}',
  '{podIP}:{port:50832}/{statefulset}/{ordinal}/{id}',
  'http://{pod}:{port:p2p}',
  '{port:missing}',
];

function context(template: string): PodViewContext {
  return {
    namespace: 'devnet',
    statefulSet: { name: 'validator', serviceName: 'validators' } as PodViewContext['statefulSet'],
    ordinal: 3,
    id: '004',
    serviceUrlTemplate: template,
    nodeRpcPortName: 'rpc',
    readySince: 1000,
  };
}

const PODS: [string, V1Pod][] = [
  ['ready', fullPod()],
  ['not ready', fullPod({ ready: false })],
  ['terminating', fullPod({ terminating: true })],
  ['restarted', fullPod({ restarts: 2 })],
  [
    'held and draining',
    fullPod({ annotations: { [Annotations.hold]: 'true', [Annotations.draining]: 'true' } }),
  ],
  [
    'with host ports',
    fullPod({ annotations: { [Annotations.hostPorts]: '{"rpc":31001,"p2p":31002}' } }),
  ],
  ['without an IP', fullPod({ podIP: null })],
  ['its node container waiting (not running)', fullPod({ state: 'waiting' })],
  ['times as a watch sends them (text)', fullPod({ textTimes: true })],
  ['a sidecar before the node container', fullPod({ sidecarFirst: true })],
];

describe('leanPod', () => {
  it.each(PODS)('reads as the full pod does (%s)', (_name, pod) => {
    const lean = leanPod(pod);
    expect(isPodReady(lean)).toBe(isPodReady(pod));
    for (const port of ['rpc', 'p2p', '50832', 'missing'])
      expect(resolvePort(lean, port)).toEqual(resolvePort(pod, port));
    for (const template of TEMPLATES)
      expect(toPodView(lean, context(template))).toEqual(toPodView(pod, context(template)));
  });

  it("reads when the validator's node started: the pod's start or its container's run, whichever is earlier", () => {
    const view = (pod: V1Pod) => toPodView(leanPod(pod), context(TEMPLATES[0] ?? ''));
    // The pod started at 09:00:02 (a key file is written then); its node container runs since
    // 09:01:07 (an environment is read then): the earlier counts.
    expect(view(fullPod()).startedAt).toBe(Date.parse('2026-12-02T09:00:02Z'));
    expect(view(fullPod({ textTimes: true })).startedAt).toBe(Date.parse('2026-12-02T09:00:02Z'));
    const noStart = fullPod();
    delete noStart.status?.startTime;
    expect(view(noStart).startedAt).toBe(Date.parse('2026-12-02T09:01:07Z'));
    // The container that declares the node's RPC port is the validator's, wherever it is listed;
    // a sidecar's earlier start is not the node's.
    const sidecarFirst = fullPod({ sidecarFirst: true });
    delete sidecarFirst.status?.startTime;
    expect(view(sidecarFirst).startedAt).toBe(Date.parse('2026-12-02T09:01:07Z'));
    // A node container that is not running holds no key.
    expect(view(fullPod({ state: 'waiting' })).startedAt).toBeUndefined();
  });

  it('keeps what names and owns the pod, and drops the rest', () => {
    const pod = fullPod({ annotations: { a: 'b' } });
    const lean = leanPod(pod);
    expect(lean.metadata).toEqual({
      name: 'validator-3',
      namespace: 'devnet',
      uid: 'uid-3',
      resourceVersion: '42',
      creationTimestamp: pod.metadata?.creationTimestamp,
      labels: pod.metadata?.labels,
      annotations: { a: 'b' },
      ownerReferences: pod.metadata?.ownerReferences,
    });
    expect(lean.spec).toEqual({
      containers: [{ name: 'node', ports: pod.spec?.containers[0]?.ports }, { name: 'sidecar' }],
    });
    expect(lean.status).toEqual({
      phase: 'Running',
      podIP: '10.1.0.3',
      startTime: pod.status?.startTime,
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
      containerStatuses: [
        {
          name: 'node',
          ready: true,
          restartCount: 0,
          image: 'localnet-node:dev',
          imageID: 'sha256:1',
          // Of its states, only a running one's start (lastState, waiting, terminated: dropped).
          state: { running: { startedAt: new Date('2026-12-02T09:01:07Z') } },
        },
      ],
    });
    expect(
      leanPod(fullPod({ state: 'waiting' })).status?.containerStatuses?.[0],
    ).not.toHaveProperty('state');
    expect(Object.keys(lean)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  });

  it('takes a pod with no spec or status (a DELETED tombstone), or a spec without containers', () => {
    expect(leanPod({ metadata: { name: 'x' } })).toEqual({ metadata: { name: 'x' } });
    expect(leanPod({ spec: {} as NonNullable<V1Pod['spec']> })).toEqual({
      spec: { containers: [] },
    });
  });
});
