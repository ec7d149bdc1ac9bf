// Nodes, Endpoints and EndpointSlices with the oldest and newest kubectl and the Python client:
// the kubelet's registered Node (pkg/kubelet/kubelet_node_status.go initialNode, nodestatus
// setters.go) shown by `get nodes` and `describe node`; the Endpoints controller
// (pkg/controller/endpoint/endpoints_controller.go syncService) and the EndpointSlice controller
// (staging/src/k8s.io/endpointslice/reconciler.go, utils.go podToEndpoint) following the pods a
// Service selects as they become ready, not ready, and go.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { eachKubectl } from '../support/kubectl-gate.ts';
import { available, pythonReason, startCluster, type Cluster } from './support.ts';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ kubelet: { mode: 'simulated' } });
});

afterAll(() => cluster.stop());

const pod = (name: string, app: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app } },
  spec: {
    containers: [{ name: 'main', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }],
  },
});

const service = (name: string, app: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, labels: { tier: 'web' } },
  spec: { selector: { app }, ports: [{ name: 'web', port: 80, targetPort: 'http' }] },
});

describe('nodes', () => {
  eachKubectl(available([27, 33]), 'no kubectl of 1.{27, 33}')(
    "kubectl $version: get nodes and describe node show the kubelet's Ready node",
    async (binary) => {
      const nodes = await cluster.kubectl(binary, ['get', 'nodes']);
      expect(nodes.stderr).toBe('');
      expect(nodes.stdout).toMatch(
        /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\nkube-emulator\s+Ready\s+<none>\s+\S+\s+v1\.\d+/,
      );
      const wide = await cluster.kubectl(binary, ['get', 'nodes', '-o', 'wide']);
      expect(wide.stdout).toMatch(
        /INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME/,
      );
      expect(wide.stdout).toContain('10.0.0.1');
      const describe_ = await cluster.kubectl(binary, ['describe', 'node', 'kube-emulator']);
      expect(describe_.code).toBe(0);
      for (const section of [
        'Conditions:',
        'Addresses:',
        'Capacity:',
        'Allocatable:',
        'System Info:',
        'Non-terminated Pods:',
        'Allocated resources:',
      ])
        expect(describe_.stdout).toContain(section);
      expect(describe_.stdout).toMatch(/Ready\s+True\s.*KubeletReady/);
      expect(describe_.stdout).toMatch(/Lease:\s*\n\s+HolderIdentity:\s+kube-emulator/);
    },
  );
});

describe('endpoints and endpointslices', () => {
  it('follow the selected pods as they become ready, not ready and go', async () => {
    const ns = 'default';
    await cluster.core.createNamespacedService({ namespace: ns, body: service('web', 'web') });
    await cluster.core.createNamespacedPod({ namespace: ns, body: pod('web-a', 'web') });
    await cluster.core.createNamespacedPod({ namespace: ns, body: pod('web-b', 'web') });
    await cluster.core.createNamespacedPod({ namespace: ns, body: pod('other', 'other') });
    const endpoints = () => cluster.core.readNamespacedEndpoints({ namespace: ns, name: 'web' });
    const names = (list: { targetRef?: { name?: string } }[] | undefined) =>
      (list ?? []).map((a) => a.targetRef?.name).sort();
    await waitFor(async () => names((await endpoints()).subsets?.[0]?.addresses).length === 2, {
      timeoutMs: 10_000,
      what: 'two ready addresses',
    });
    const ready = await endpoints();
    expect(ready.metadata?.labels).toEqual({ tier: 'web' });
    expect(ready.subsets).toHaveLength(1);
    expect(names(ready.subsets?.[0]?.addresses)).toEqual(['web-a', 'web-b']);
    expect(ready.subsets?.[0]?.ports).toEqual([{ name: 'web', port: 8080, protocol: 'TCP' }]);
    expect(ready.subsets?.[0]?.addresses?.[0]?.nodeName).toBe('kube-emulator');

    cluster.emulator.kubelet.setReady(ns, 'web-b', false);
    await waitFor(
      async () => names((await endpoints()).subsets?.[0]?.notReadyAddresses).length === 1,
      {
        timeoutMs: 10_000,
        what: 'web-b not ready',
      },
    );
    const half = await endpoints();
    expect(names(half.subsets?.[0]?.addresses)).toEqual(['web-a']);
    expect(names(half.subsets?.[0]?.notReadyAddresses)).toEqual(['web-b']);

    await cluster.core.deleteNamespacedPod({ namespace: ns, name: 'web-a', gracePeriodSeconds: 0 });
    await waitFor(async () => (await endpoints()).subsets?.[0]?.addresses === undefined, {
      timeoutMs: 10_000,
      what: 'web-a gone',
    });
    expect(names((await endpoints()).subsets?.[0]?.notReadyAddresses)).toEqual(['web-b']);
  });

  eachKubectl(available([27, 33]), 'no kubectl of 1.{27, 33}')(
    'kubectl $version: get endpoints,endpointslices',
    async (binary) => {
      const name = `svc-${binary.minor}`;
      const input = JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [service(name, name), pod(`${name}-0`, name)],
      });
      expect((await cluster.kubectl(binary, ['apply', '-f', '-'], { input })).code).toBe(0);
      await waitFor(
        async () =>
          (await cluster.kubectl(binary, ['get', 'endpoints', name])).stdout.includes(':8080'),
        { timeoutMs: 10_000, what: 'endpoints' },
      );
      const got = await cluster.kubectl(binary, ['get', 'endpoints,endpointslices']);
      expect(got.stderr).toBe('');
      expect(got.stdout).toMatch(/^NAME\s+ENDPOINTS\s+AGE\n/);
      expect(got.stdout).toMatch(
        new RegExp(`\\nendpoints/${name}\\s+10\\.\\d+\\.\\d+\\.\\d+:8080\\s`),
      );
      expect(got.stdout).toMatch(/\n\nNAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE\n/);
      expect(got.stdout).toMatch(
        new RegExp(
          `\\nendpointslice.discovery.k8s.io/${name}-[a-z0-9]{5}\\s+IPv4\\s+8080\\s+10\\.`,
        ),
      );
      // The slice is the Service's (the garbage collector deletes it with the Service).
      const slice = await cluster.kubectl(binary, [
        'get',
        'endpointslices',
        '-l',
        `kubernetes.io/service-name=${name}`,
        '-o',
        'jsonpath={.items[0].metadata.ownerReferences[0].kind} {.items[0].endpoints[0].conditions.ready} {.items[0].metadata.labels.endpointslice\\.kubernetes\\.io/managed-by}',
      ]);
      expect(slice.stdout).toBe('Service true endpointslice-controller.k8s.io');
    },
  );

  it.skipIf(pythonReason !== '')('python client reads both', async () => {
    const run = await cluster.python(`
import sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
eps = client.CoreV1Api().read_namespaced_endpoints('web', 'default')
print(sorted(a.target_ref.name for a in (eps.subsets[0].not_ready_addresses or [])))
sl = client.DiscoveryV1Api().list_namespaced_endpoint_slice('default', label_selector='kubernetes.io/service-name=web')
print([(e.target_ref.name, e.conditions.ready, e.conditions.serving) for e in sl.items[0].endpoints])
`);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe("['web-b']\n[('web-b', False, False)]\n");
  });
});
