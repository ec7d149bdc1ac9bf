// kubectl get events / describe, rollout history and undo for Deployments and StatefulSets, and
// get tables, with the oldest and newest kubectl (no version changes these); the Python client
// reads Events through both APIs and pod logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { eachKubectl } from '../support/kubectl-gate.ts';
import {
  fixtureImages,
  pythonMissing,
  startCluster,
  withVersions,
  type Cluster,
} from './ops-support.ts';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({
    kubelet: {
      mode: 'process',
      images: fixtureImages,
      readinessPeriodMs: 50,
      restartBackoffMs: 100,
    },
  });
});

afterAll(() => cluster.stop());

const manifest = (kind: 'Deployment' | 'StatefulSet', name: string, image: string): string =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace: 'default' },
    spec: {
      replicas: 2,
      ...(kind === 'StatefulSet' ? { serviceName: name, podManagementPolicy: 'Parallel' } : {}),
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image, env: [{ name: 'INTERVAL_MS', value: '500' }] }],
        },
      },
    },
  });

describe('rollouts, events and tables', () => {
  eachKubectl(withVersions([27, 33]), 'no kubectl of 1.{27, 33}')(
    'kubectl $version: rollout history and undo, events, describe, get -o wide',
    async (binary) => {
      const kubectl = (args: string[], input?: string) => cluster.kubectl(binary, args, input);
      for (const kind of ['Deployment', 'StatefulSet'] as const) {
        const name = `${kind.toLowerCase()}-${binary.minor}`;
        const target = `${kind.toLowerCase()}/${name}`;
        expect(
          (
            await kubectl(
              ['apply', '--validate=false', '-f', '-'],
              manifest(kind, name, 'talker:1'),
            )
          ).code,
        ).toBe(0);
        expect((await kubectl(['rollout', 'status', target, '--timeout=30s'])).code).toBe(0);
        expect(
          (
            await kubectl(
              ['apply', '--validate=false', '-f', '-'],
              manifest(kind, name, 'talker:2'),
            )
          ).code,
        ).toBe(0);
        expect((await kubectl(['rollout', 'status', target, '--timeout=30s'])).code).toBe(0);
        const history = await kubectl(['rollout', 'history', target]);
        expect(history.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n/);
        expect((await kubectl(['rollout', 'undo', target])).stdout).toContain('rolled back');
        expect((await kubectl(['rollout', 'status', target, '--timeout=30s'])).code).toBe(0);
        expect((await kubectl(['rollout', 'history', target])).stdout).toMatch(
          /\n2\s+<none>\n3\s+<none>\n/,
        );
        const image = await kubectl([
          'get',
          target,
          '-o',
          'jsonpath={.spec.template.spec.containers[0].image}',
        ]);
        expect(image.stdout).toBe('talker:1');
      }
      const wide = await kubectl(['get', 'deployments,replicasets,statefulsets', '-o', 'wide']);
      expect(wide.stdout).toMatch(
        /NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR/,
      );
      expect(wide.stdout).toMatch(
        /NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR/,
      );
      expect(wide.stdout).toMatch(/NAME\s+READY\s+AGE\s+CONTAINERS\s+IMAGES\n/);
      const events = await kubectl(['get', 'events']);
      expect(events.stdout).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
      expect(events.stdout).toMatch(
        /ScalingReplicaSet\s+deployment\/deployment-\d+\s+Scaled up replica set/,
      );
      expect(events.stdout).toMatch(/SuccessfulCreate\s+statefulset\/statefulset-\d+\s+create Pod/);
      const pod = `statefulset-${binary.minor}-0`;
      const described = await kubectl(['describe', 'pod', pod]);
      expect(described.stdout).toMatch(
        /Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned default\//,
      );
      expect(described.stdout).toMatch(/Normal\s+Started\s+\S+\s+kubelet\s+Started container main/);
    },
  );

  it.skipIf(pythonMissing !== '')(
    'the Python client reads Events through both APIs and a pod log',
    async () => {
      await cluster.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'py' },
          spec: {
            containers: [
              { name: 'main', image: 'talker', env: [{ name: 'EXIT_AFTER', value: '2' }] },
            ],
          },
        },
      });
      await waitFor(
        async () =>
          ((await cluster.core.readNamespacedPod({ name: 'py', namespace: 'default' })).status
            ?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
        { what: 'a restart of py' },
      );
      const result = await cluster.python(`
import json, sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
core = client.CoreV1Api()
events = client.EventsV1Api()
legacy = [e for e in core.list_namespaced_event('default').items if e.involved_object.name == 'py']
# The client's EventsV1Event model requires eventTime, which legacy (core/v1) Events do not have,
# on a real cluster too: read that list as JSON.
raw = json.loads(events.list_namespaced_event('default', _preload_content=False).data)
modern = [e for e in raw['items'] if e['regarding'].get('name') == 'py']
scheduled = [e for e in modern if e['reason'] == 'Scheduled'][0]
started = [e for e in legacy if e.reason == 'Started'][0]
log = core.read_namespaced_pod_log('py', 'default', previous=True, tail_lines=2)
print(json.dumps({
  'legacy': sorted({e.reason for e in legacy}),
  'modern': sorted({e['reason'] for e in modern}),
  'scheduled': [scheduled['reportingController'], scheduled['action'], scheduled['note']],
  'started': [started.source.component, started.involved_object.field_path],
  'startedCount': started.count,
  'log': log,
}))
`);
      expect(result.stderr).toBe('');
      const seen = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(seen.legacy).toEqual(
        expect.arrayContaining(['BackOff', 'Created', 'Pulled', 'Scheduled', 'Started']),
      );
      expect(seen.modern).toEqual(seen.legacy);
      expect(seen.scheduled).toEqual([
        'default-scheduler',
        'Binding',
        'Successfully assigned default/py to kube-emulator',
      ]);
      expect(seen.started).toEqual(['kubelet', 'spec.containers{main}']);
      // One Event per distinct message: the restarts counted on it.
      expect(seen.startedCount).toBeGreaterThanOrEqual(2);
      expect(seen.log).toBe('line 2\nno newline at the end');
    },
  );
});
