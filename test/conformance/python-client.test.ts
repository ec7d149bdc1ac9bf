// The official Python client (Debian's python3-kubernetes): its watches send `watch=True`, which
// must stream (apimachinery's bool conversion); lists, creates, and a dry run refused for an
// unsupported value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonReason, startCluster, type Cluster } from './support.ts';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster.stop();
});

const prelude = `
import json, sys, threading, time
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
`;

describe.skipIf(pythonReason !== '')('the Python client', () => {
  it('streams a watch (watch=True) and sees objects created while it runs', async () => {
    const result = await cluster.python(
      `${prelude}
def create_later():
    time.sleep(0.5)
    core.create_namespaced_config_map('default', {'metadata': {'name': 'late', 'labels': {'watched': 'yes'}}, 'data': {'k': 'v'}})
core.create_namespaced_config_map('default', {'metadata': {'name': 'early', 'labels': {'watched': 'yes'}}})
threading.Thread(target=create_later).start()
seen = []
w = watch.Watch()
for event in w.stream(core.list_namespaced_config_map, 'default', label_selector='watched=yes', timeout_seconds=20):
    seen.append((event['type'], event['object'].metadata.name))
    if event['object'].metadata.name == 'late':
        w.stop()
print(json.dumps(seen))
`,
    );
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual([
      ['ADDED', 'early'],
      ['ADDED', 'late'],
    ]);
    const watches = cluster.emulator.requestLog.filter((request) =>
      request.query.includes('watch=True'),
    );
    expect(watches.length).toBeGreaterThan(0);
  });

  it('gets 422 for dry_run="Foo" and creates nothing; dry_run="All" validates without storing', async () => {
    const result = await cluster.python(
      `${prelude}
for value in ['Foo', 'All']:
    try:
        core.create_namespaced_config_map('default', {'metadata': {'name': 'dry'}}, dry_run=value)
        print(value, 'created')
    except client.exceptions.ApiException as e:
        print(value, e.status, json.loads(e.body)['message'])
print('stored', [c.metadata.name for c in core.list_namespaced_config_map('default').items if c.metadata.name == 'dry'])
`,
    );
    expect(result.stdout.split('\n')).toEqual([
      'Foo 422 CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Foo"}: supported values: "All"',
      'All created',
      'stored []',
      '',
    ]);
  });
});
