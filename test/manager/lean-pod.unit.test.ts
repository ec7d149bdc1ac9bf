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
  } = {},
): V1Pod {
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
      containers: [
        {
          name: 'node',
          image: 'localnet-node:dev',
          ports: [
            { name: 'rpc', containerPort: 50832, protocol: 'TCP' },
            { name: 'p2p', containerPort: 42069, protocol: 'TCP' },
          ],
          env: [{ name: 'A', value: 'b' }],
          resources: {},
          terminationMessagePath: '/dev/termination-log',
        },
        { name: 'sidecar', image: 'busybox' },
      ],
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
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: new Date() },
        {
          type: 'Ready',
          status: patch.ready === false ? 'False' : 'True',
          lastTransitionTime: new Date(),
        },
      ],
      containerStatuses: [
        {
          name: 'node',
          ready: patch.ready !== false,
          restartCount: patch.restarts ?? 0,
          image: 'localnet-node:dev',
          imageID: 'sha256:1',
          state: { running: { startedAt: new Date() } },
        },
      ],
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
        },
      ],
    });
    expect(Object.keys(lean)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  });

  it('takes a pod with no spec or status (a DELETED tombstone), or a spec without containers', () => {
    expect(leanPod({ metadata: { name: 'x' } })).toEqual({ metadata: { name: 'x' } });
    expect(leanPod({ spec: {} as NonNullable<V1Pod['spec']> })).toEqual({
      spec: { containers: [] },
    });
  });
});
