// kubectl debug against a process-kubelet pod: kubectl (pkg/cmd/debug/debug.go
// debugByEphemeralContainer) patches the pod's `ephemeralcontainers` subresource with a strategic
// merge patch; the apiserver keeps only spec.ephemeralContainers of it
// (pkg/registry/core/pod/strategy.go dropNonEphemeralContainerUpdates) and refuses a change to an
// existing one (pkg/apis/core/validation/validation.go ValidatePodEphemeralContainersUpdate); the
// kubelet starts it once, never restarts it, and reports it in status.ephemeralContainerStatuses.
// Here the container runs its command as a process in the pod's environment, as every container
// of the process kubelet does (`busybox` maps to /usr/bin/env: `sh -c 'echo hi'` runs this
// machine's sh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eachKubectl } from '../support/kubectl-gate.ts';
import { waitFor } from '../../src/harness/wait.ts';
import {
  fixtureImages,
  podReady,
  pythonMissing,
  startCluster,
  withVersions,
  type Cluster,
} from './ops-support.ts';

let cluster: Cluster;
const binaries = withVersions([27, 33]);

beforeAll(async () => {
  cluster = await startCluster({
    kubelet: {
      mode: 'process',
      images: { ...fixtureImages, busybox: { command: '/usr/bin/env' } },
      readinessPeriodMs: 50,
    },
  });
  for (const name of ['py', ...binaries.map((b) => `box-${b.minor}`)]) {
    await cluster.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: {
          containers: [
            {
              name: 'main',
              image: 'echo',
              ports: [
                { name: 'http', containerPort: 8080 },
                { name: 'echo', containerPort: 7000 },
              ],
            },
          ],
        },
      },
    });
    await podReady(cluster, name);
  }
});

afterAll(async () => {
  await cluster.stop();
});

const DEBUG = ['--image=busybox', '--container=debugger', '--attach=false'];

describe('kubectl debug (ephemeral containers)', () => {
  eachKubectl(binaries, 'no kubectl of 1.{27, 33}')(
    'kubectl $version: adds a debug container that runs, is reported, and logs; a second of the same name changes nothing, the name of a regular container is refused',
    async (binary) => {
      const pod = `box-${binary.minor}`;
      const debug = await cluster.kubectl(binary, [
        'debug',
        pod,
        ...DEBUG,
        '--',
        'sh',
        '-c',
        'echo hi',
      ]);
      expect(debug.stderr).not.toMatch(/error/i);
      expect(debug.code).toBe(0);
      const jsonpath = async (path: string): Promise<string> =>
        (await cluster.kubectl(binary, ['get', 'pod', pod, '-o', `jsonpath=${path}`])).stdout;
      expect(
        await jsonpath('{.spec.ephemeralContainers[0].name} {.spec.ephemeralContainers[0].image}'),
      ).toBe('debugger busybox');
      expect(await jsonpath('{.spec.ephemeralContainers[0].command}')).toBe(
        '["sh","-c","echo hi"]',
      );
      // The kubelet ran it: terminated with exit code 0 (Completed), never restarted.
      await waitFor(
        async () =>
          (await jsonpath('{.status.ephemeralContainerStatuses[0].state.terminated.reason}')) ===
          'Completed',
        { what: 'the debug container completed', timeoutMs: 20_000 },
      );
      expect(
        await jsonpath(
          '{.status.ephemeralContainerStatuses[0].name} {.status.ephemeralContainerStatuses[0].state.terminated.exitCode} {.status.ephemeralContainerStatuses[0].restartCount}',
        ),
      ).toBe('debugger 0 0');
      // The pod itself is untouched: still Running and Ready, its one regular container never
      // restarted.
      expect(
        await jsonpath(
          '{.status.phase} {.status.containerStatuses[*].name} {.status.containerStatuses[0].restartCount} {.status.conditions[?(@.type=="Ready")].status}',
        ),
      ).toBe('Running main 0 True');
      const logs = await cluster.kubectl(binary, ['logs', pod, '-c', 'debugger']);
      expect(logs.stderr).toBe('');
      expect(logs.stdout).toBe('hi\n');
      // The subresource reads as the Pod (EphemeralContainersREST.Get).
      const raw = await cluster.kubectl(binary, [
        'get',
        '--raw',
        `/api/v1/namespaces/default/pods/${pod}/ephemeralcontainers`,
      ]);
      expect(JSON.parse(raw.stdout)).toMatchObject({
        kind: 'Pod',
        spec: { ephemeralContainers: [{ name: 'debugger' }] },
      });
      // The same name again is no refusal: kubectl's two-way patch lists both entries under the
      // one merge key, and the strategic merge merges each into the first entry of that name
      // (apimachinery strategicpatch/patch.go mergeSliceWithoutSpecialElements), so the second
      // undoes the first; the pod is unchanged, the answer is 200, kubectl exits 0 and the old
      // container stays. Checked here because a real cluster does the same.
      const again = await cluster.kubectl(binary, [
        'debug',
        pod,
        ...DEBUG,
        '--',
        'sh',
        '-c',
        'echo again',
      ]);
      expect(again.code).toBe(0);
      expect(await jsonpath('{.spec.ephemeralContainers[*].command}')).toBe(
        '["sh","-c","echo hi"]',
      );
      // A name a regular container has: the apiserver's Duplicate, as kubectl prints it
      // (validation.go validateEphemeralContainers: unique across all containers).
      const clash = await cluster.kubectl(binary, [
        'debug',
        pod,
        '--image=busybox',
        '--container=main',
        '--attach=false',
        '--',
        'true',
      ]);
      expect(clash.code).toBe(1);
      expect(clash.stderr).toContain(
        `Pod "${pod}" is invalid: spec.ephemeralContainers[1].name: Duplicate value: "main"`,
      );
      expect(await jsonpath('{.spec.ephemeralContainers[*].name}')).toBe('debugger');
    },
  );
});

describe('a running debug container', () => {
  eachKubectl(withVersions([33]), 'no kubectl 1.33')(
    'kubectl $version: reports it running, execs in it, and leaves it alone when it exits non-zero',
    async (binary) => {
      const pod = `box-${binary.minor}`;
      const debug = await cluster.kubectl(binary, [
        'debug',
        pod,
        '--image=busybox',
        '--container=sleeper',
        '--attach=false',
        '--',
        'sh',
        '-c',
        'while [ ! -f stop ]; do sleep 0.1; done; exit 3',
      ]);
      expect(debug.code).toBe(0);
      const state = async (): Promise<string> =>
        (
          await cluster.kubectl(binary, [
            'get',
            'pod',
            pod,
            '-o',
            'jsonpath={.status.ephemeralContainerStatuses[?(@.name=="sleeper")].state}',
          ])
        ).stdout;
      await waitFor(async () => (await state()).includes('"running"'), {
        what: 'the sleeper running',
        timeoutMs: 20_000,
      });
      const exec = await cluster.kubectl(binary, [
        'exec',
        pod,
        '-c',
        'sleeper',
        '--',
        'sh',
        '-c',
        'echo in-$HOSTNAME-${KUBERNETES_NAMESPACE:-none}',
      ]);
      expect(exec.stderr).toBe('');
      expect(exec.stdout.startsWith('in-')).toBe(true);
      // The pod stays Ready: an ephemeral container is no part of readiness.
      const ready = await cluster.kubectl(binary, [
        'get',
        'pod',
        pod,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ]);
      expect(ready.stdout).toBe('True');
      // It exits 3 (the pod's folder is its working directory, as for every container): never
      // restarted though the pod's restartPolicy is Always; the pod stays Running and Ready.
      const stop = await cluster.kubectl(binary, [
        'exec',
        pod,
        '-c',
        'sleeper',
        '--',
        'touch',
        'stop',
      ]);
      expect(stop.code).toBe(0);
      await waitFor(async () => (await state()).includes('"terminated"'), {
        what: 'the sleeper terminated',
        timeoutMs: 20_000,
      });
      expect(JSON.parse(await state())).toMatchObject({
        terminated: { exitCode: 3, reason: 'Error' },
      });
      const after = await cluster.kubectl(binary, [
        'get',
        'pod',
        pod,
        '-o',
        'jsonpath={.status.ephemeralContainerStatuses[?(@.name=="sleeper")].restartCount} {.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.status.containerStatuses[0].restartCount}',
      ]);
      expect(after.stdout).toBe('0 Running True 0');
    },
  );
});

describe.skipIf(pythonMissing !== '')('the Python client on pods/ephemeralcontainers', () => {
  it('reads the subresource, adds a container with a patch, and gets 422 for a change or a duplicate name', async () => {
    const result = await cluster.python(`
import json, sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
def show(label, call):
    try:
        pod = call()
        print(label, 'ok', [c.name for c in pod.spec.ephemeral_containers or []])
    except client.exceptions.ApiException as e:
        print(label, e.status, json.loads(e.body)['message'].split('\\n')[0])
show('read', lambda: core.read_namespaced_pod_ephemeralcontainers('py', 'default'))
show('add', lambda: core.patch_namespaced_pod_ephemeralcontainers('py', 'default',
    {'spec': {'ephemeralContainers': [{'name': 'dbg', 'image': 'busybox', 'command': ['sh', '-c', 'echo py']}]}}))
show('change', lambda: core.patch_namespaced_pod_ephemeralcontainers('py', 'default',
    [{'op': 'replace', 'path': '/spec/ephemeralContainers/0/image', 'value': 'other'}]))
show('remove', lambda: core.patch_namespaced_pod_ephemeralcontainers('py', 'default',
    [{'op': 'remove', 'path': '/spec/ephemeralContainers/0'}]))
show('clash', lambda: core.patch_namespaced_pod_ephemeralcontainers('py', 'default',
    [{'op': 'add', 'path': '/spec/ephemeralContainers/-', 'value': {'name': 'main', 'image': 'busybox'}}]))
show('ports', lambda: core.patch_namespaced_pod_ephemeralcontainers('py', 'default',
    [{'op': 'add', 'path': '/spec/ephemeralContainers/-', 'value': {'name': 'p', 'image': 'busybox', 'ports': [{'containerPort': 80}]}}]))
show('labels', lambda: core.patch_namespaced_pod_ephemeralcontainers('py', 'default',
    {'metadata': {'labels': {'sneaked': 'in'}}, 'spec': {'containers': [{'name': 'main', 'image': 'talker'}]}}))
current = core.read_namespaced_pod_ephemeralcontainers('py', 'default')
current.spec.ephemeral_containers.append(client.V1EphemeralContainer(name='put', image='busybox', command=['true']))
show('put', lambda: core.replace_namespaced_pod_ephemeralcontainers('py', 'default', current))
show('create', lambda: core.create_namespaced_pod('default', {'metadata': {'name': 'born-debugged'},
    'spec': {'containers': [{'name': 'main', 'image': 'echo'}], 'ephemeralContainers': [{'name': 'd', 'image': 'busybox'}]}}))
pod = core.read_namespaced_pod('py', 'default')
print('kept', pod.metadata.labels, pod.spec.containers[0].image)
`);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual([
      'read ok []',
      "add ok ['dbg']",
      'change 422 Pod "py" is invalid: spec.ephemeralContainers[dbg]: Forbidden: existing ephemeral containers "dbg" may not be changed',
      'remove 422 Pod "py" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed',
      'clash 422 Pod "py" is invalid: spec.ephemeralContainers[1].name: Duplicate value: "main"',
      'ports 422 Pod "py" is invalid: spec.ephemeralContainers[1].ports: Forbidden: cannot be set for an Ephemeral Container',
      // Only spec.ephemeralContainers of the body counts (dropNonEphemeralContainerUpdates).
      "labels ok ['dbg']",
      "put ok ['dbg', 'put']",
      // ValidatePodCreate: only the subresource adds them.
      'create 422 Pod "born-debugged" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create',
      'kept None echo',
      '',
    ]);
  });
});
