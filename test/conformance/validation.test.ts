// Issue 31, validation and immutability: what a real 1.32 apiserver refuses, refused here with its
// message (src/kube-emulator/admission/rules.ts names the source of each rule), through kubectl
// (oldest and newest), the Python client and raw HTTP. Also the storage layer's refusals
// (storage-rules.ts), ListOptions validation and watch-list (api-server/list-options.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eachKubectl } from '../support/kubectl-gate.ts';
import { available, pythonReason, startCluster, type Cluster } from './support.ts';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(() => cluster.stop());

/** A raw HTTP request to the emulator (admin: it runs without a token). */
async function http(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const response = await fetch(`${cluster.emulator.url}${path}`, {
    method,
    headers: { 'content-type': contentType, accept: 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // a watch stream: lines of JSON
  }
  return { status: response.status, body: parsed, text };
}

const NS = '/api/v1/namespaces/default';

function pod(name: string, containers: { name: string; image: string }[]): unknown {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers } };
}

describe('validation and immutability', () => {
  eachKubectl(available([27, 33]), 'no kubectl of 1.{27, 33}')(
    'kubectl $version prints the 422 of label keys, immutable Secrets and ConfigMaps, Secret type, cluster IPs, pod updates',
    async (binary) => {
      const k = (args: string[], input?: string) =>
        cluster.kubectl(binary, args, input === undefined ? {} : { input });
      const v = binary.minor;
      const badLabel = await k(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `labels-${v}`, labels: { '-bad': 'x' } },
        }),
      );
      expect(badLabel.stderr).toContain(
        `The ConfigMap "labels-${v}" is invalid: metadata.labels: Invalid value: "-bad": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      );
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `frozen-${v}` },
        immutable: true,
        stringData: { a: 'b' },
      };
      expect((await k(['apply', '-f', '-'], JSON.stringify(secret))).code).toBe(0);
      const changed = await k(['patch', 'secret', `frozen-${v}`, '-p', '{"stringData":{"a":"c"}}']);
      expect(changed.stderr).toContain(
        `Secret "frozen-${v}" is invalid: data: Forbidden: field is immutable when \`immutable\` is set`,
      );
      const thawed = await k(['patch', 'secret', `frozen-${v}`, '-p', '{"immutable":false}']);
      expect(thawed.stderr).toContain(
        'immutable: Forbidden: field is immutable when `immutable` is set',
      );
      const retyped = await k([
        'patch',
        'secret',
        `frozen-${v}`,
        '-p',
        '{"type":"kubernetes.io/basic-auth"}',
      ]);
      expect(retyped.stderr).toContain(
        'type: Invalid value: "kubernetes.io/basic-auth": field is immutable',
      );
      expect((await k(['create', 'configmap', `cm-${v}`, '--from-literal=a=b'])).code).toBe(0);
      expect((await k(['patch', 'cm', `cm-${v}`, '-p', '{"immutable":true}'])).code).toBe(0);
      const cm = await k(['patch', 'cm', `cm-${v}`, '-p', '{"data":{"a":"z"}}']);
      expect(cm.stderr).toContain('data: Forbidden: field is immutable when `immutable` is set');
      expect((await k(['create', 'service', 'clusterip', `svc-${v}`, '--tcp=80:8080'])).code).toBe(
        0,
      );
      const ip = await k([
        'patch',
        'svc',
        `svc-${v}`,
        '-p',
        '{"spec":{"clusterIP":"10.96.250.250"}}',
      ]);
      expect(ip.stderr).toContain(
        `The Service "svc-${v}" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.250.250"}: may not change once set`,
      );
      expect(
        (
          await k(
            ['apply', '-f', '-'],
            JSON.stringify(pod(`p-${v}`, [{ name: 'c', image: 'a:1' }])),
          )
        ).code,
      ).toBe(0);
      expect((await k(['set', 'image', `pod/p-${v}`, 'c=a:2'])).code).toBe(0);
      const spec = await k(['patch', 'pod', `p-${v}`, '-p', '{"spec":{"restartPolicy":"Never"}}']);
      expect(spec.stderr).toContain(
        `The Pod "p-${v}" is invalid: spec: Forbidden: pod updates may not change fields other than \`spec.containers[*].image\`,\`spec.initContainers[*].image\`,\`spec.activeDeadlineSeconds\`,\`spec.tolerations\` (only additions to existing tolerations),\`spec.terminationGracePeriodSeconds\` (allow it to be set to 1 if it was previously negative)`,
      );
    },
  );

  it('refuses duplicate container names, bad ports and a Deployment strategy that cannot roll (raw HTTP)', async () => {
    const duplicate = await http(
      'POST',
      `${NS}/pods`,
      pod('twins', [
        { name: 'c', image: 'a' },
        { name: 'c', image: 'b' },
      ]),
    );
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.message).toBe(
      'Pod "twins" is invalid: spec.containers[1].name: Duplicate value: "c"',
    );
    const deployment = (strategy: unknown) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        strategy,
        template: {
          metadata: { labels: { a: 'b' } },
          spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 70000 }] }] },
        },
      },
    });
    const recreate = await http(
      'POST',
      '/apis/apps/v1/namespaces/default/deployments',
      deployment({ type: 'Recreate', rollingUpdate: { maxSurge: 1 } }),
    );
    expect(recreate.status).toBe(422);
    expect(recreate.body.message).toBe(
      'Deployment.apps "d" is invalid: [spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\']',
    );
    const stuck = await http(
      'POST',
      '/apis/apps/v1/namespaces/default/deployments',
      deployment({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } }),
    );
    expect(JSON.stringify(stuck.body)).toContain(
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0%: may not be 0 when `maxSurge` is 0',
    );
  });

  it('limits Secrets and ConfigMaps to 1 MiB, annotations to 256 KiB, and checks their keys (raw HTTP)', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 1).toString('base64');
    const secret = await http('POST', `${NS}/secrets`, {
      metadata: { name: 'big' },
      data: { blob: big },
    });
    expect(secret.status).toBe(422);
    expect(secret.body.message).toBe(
      'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes',
    );
    const cm = await http('POST', `${NS}/configmaps`, {
      metadata: { name: 'big' },
      data: { 'bad key': 'x', blob: 'y'.repeat(1024 * 1024) },
    });
    expect(cm.body.message).toBe(
      `ConfigMap "big" is invalid: [data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+'), : Too long: may not be more than 1048576 bytes]`,
    );
    const annotated = await http('POST', `${NS}/configmaps`, {
      metadata: { name: 'noted', annotations: { note: 'n'.repeat(256 * 1024) } },
    });
    expect(annotated.body.message).toBe(
      'ConfigMap "noted" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes',
    );
    const tls = await http('POST', `${NS}/secrets`, {
      metadata: { name: 'tls' },
      type: 'kubernetes.io/tls',
      data: {},
    });
    expect(tls.body.message).toBe(
      'Secret "tls" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]',
    );
  });

  it('answers a create with a resourceVersion 500, an update with another uid 409, a Lease update without one 422 (raw HTTP)', async () => {
    const created = await http('POST', `${NS}/configmaps`, {
      metadata: { name: 'versioned', resourceVersion: '12' },
    });
    expect(created.status).toBe(500);
    expect(created.body.message).toBe('resourceVersion should not be set on objects to be created');
    expect(created.body.reason).toBeUndefined();
    const made = await http('POST', `${NS}/configmaps`, { metadata: { name: 'owned' } });
    const uid = (made.body.metadata as { uid: string }).uid;
    const other = await http('PUT', `${NS}/configmaps/owned`, {
      metadata: { name: 'owned', uid: 'not-the-uid' },
    });
    expect(other.status).toBe(409);
    expect(other.body.message).toBe(
      `Operation cannot be fulfilled on configmaps "owned": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/owned, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${uid}`,
    );
    const gone = await http('DELETE', `${NS}/configmaps/owned`, {
      preconditions: { uid: 'x' },
    });
    expect(gone.status).toBe(409);
    expect(gone.body.message).toBe(
      `Operation cannot be fulfilled on ConfigMap "owned": the UID in the precondition (x) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
    );
    const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    await http('POST', leases, { metadata: { name: 'lock' }, spec: { holderIdentity: 'a' } });
    const blind = await http('PUT', `${leases}/lock`, {
      metadata: { name: 'lock' },
      spec: { holderIdentity: 'b' },
    });
    expect(blind.status).toBe(422);
    expect(blind.body.message).toBe(
      'leases.coordination.k8s.io "lock" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
  });

  it('validates ListOptions (422) and serves watch-list: the state as ADDED, then the initial-events-end bookmark (raw HTTP)', async () => {
    const noVersion = await http('GET', `${NS}/configmaps?resourceVersionMatch=Exact`);
    expect(noVersion.status).toBe(422);
    expect(noVersion.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const listInitial = await http('GET', `${NS}/configmaps?sendInitialEvents=true`);
    expect(listInitial.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
    );
    const watchMatch = await http('GET', `${NS}/configmaps?watch=1&resourceVersionMatch=Exact`);
    expect(watchMatch.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
    );
    await http('POST', `${NS}/configmaps`, { metadata: { name: 'listed', labels: { wl: 'y' } } });
    const rv = (
      (await http('GET', `${NS}/configmaps`)).body.metadata as { resourceVersion: string }
    ).resourceVersion;
    const lines = (text: string) =>
      text
        .trim()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { type: string; object: Record<string, unknown> });
    const list = await http(
      'GET',
      `${NS}/configmaps?watch=1&labelSelector=wl%3Dy&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=1`,
    );
    const events = lines(list.text);
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['ADDED', 'BOOKMARK']);
    expect((events[1]?.object.metadata as { annotations: unknown }).annotations).toEqual({
      'k8s.io/initial-events-end': 'true',
    });
    const none = await http(
      'GET',
      `${NS}/configmaps?watch=1&labelSelector=wl%3Dy&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`,
    );
    expect(lines(none.text).filter((e) => e.type === 'ADDED')).toEqual([]);
  });

  it.skipIf(pythonReason !== '')(
    'the Python client gets the 422 of a duplicate container and of an immutable ConfigMap',
    async () => {
      const result = await cluster.python(`
import json, sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
try:
    core.create_namespaced_pod('default', {'metadata': {'name': 'py'}, 'spec': {'containers': [{'name': 'c', 'image': 'a'}, {'name': 'c', 'image': 'a'}]}})
except client.exceptions.ApiException as e:
    print(e.status, json.loads(e.body)['details']['causes'][0]['field'])
core.create_namespaced_config_map('default', {'metadata': {'name': 'pyc'}, 'data': {'a': 'b'}, 'immutable': True})
try:
    core.patch_namespaced_config_map('pyc', 'default', {'data': {'a': 'c'}})
except client.exceptions.ApiException as e:
    print(e.status, json.loads(e.body)['message'])
`);
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe(
        '422 spec.containers[1].name\n422 ConfigMap "pyc" is invalid: data: Forbidden: field is immutable when `immutable` is set\n',
      );
    },
  );
});
