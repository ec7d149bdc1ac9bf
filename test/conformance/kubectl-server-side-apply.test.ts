// Server-side apply as kubectl drives it: managedFields, a conflict after `kubectl scale`
// (the scale subresource owns spec.replicas) with the apiserver's message, --force-conflicts,
// and removal of what a manifest stops setting. No kubectl version changes this: the oldest and
// the newest run it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newest, startCluster, versions, type Cluster } from './support.ts';

const binaries = [...new Set([versions[0], newest])].filter((binary) => binary !== undefined);

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster.stop();
});

function statefulSet(name: string, replicas: number, containers: string[], labels: string): string {
  return [
    'apiVersion: apps/v1',
    'kind: StatefulSet',
    'metadata:',
    `  name: ${name}`,
    `  labels: {${labels}}`,
    'spec:',
    `  replicas: ${replicas}`,
    `  serviceName: ${name}`,
    `  selector: {matchLabels: {app: ${name}}}`,
    '  template:',
    `    metadata: {labels: {app: ${name}}}`,
    '    spec:',
    '      containers:',
    ...containers.map((container) => `      - {name: ${container}, image: "${container}:1"}`),
    '',
  ].join('\n');
}

describe.skipIf(binaries.length === 0)('kubectl apply --server-side', () => {
  it.each(binaries.map((binary) => [binary.version, binary] as const))(
    'kubectl %s: apply, scale, a conflict on .spec.replicas, --force-conflicts, and fields dropped from the manifest removed',
    async (_, binary) => {
      const name = `web-${binary.minor}`;
      const first = await cluster.kubectl(binary, ['apply', '--server-side', '-f', '-'], {
        input: statefulSet(name, 2, ['main', 'side'], 'team: a, tier: b'),
      });
      expect(first.stderr).toBe('');
      expect(first.stdout).toContain(`statefulset.apps/${name} serverside-applied`);
      const scaled = await cluster.kubectl(binary, [
        'scale',
        `statefulset/${name}`,
        '--replicas=3',
      ]);
      expect(scaled.code).toBe(0);
      const conflict = await cluster.kubectl(binary, ['apply', '--server-side', '-f', '-'], {
        input: statefulSet(name, 5, ['main'], 'team: a'),
      });
      expect(conflict.code).toBe(1);
      expect(conflict.stderr).toMatch(
        /Apply failed with 1 conflict: conflict with "kubectl[^"]*" with subresource "scale" using apps\/v1: \.spec\.replicas/,
      );
      const forced = await cluster.kubectl(
        binary,
        ['apply', '--server-side', '--force-conflicts', '-f', '-'],
        {
          input: statefulSet(name, 5, ['main'], 'team: a'),
        },
      );
      expect(forced.stderr).toBe('');
      const stored = cluster.emulator.store.get('apps/statefulsets', 'default', name);
      const spec = stored?.spec as {
        replicas: number;
        template: { spec: { containers: { name: string }[] } };
      };
      expect(spec.replicas).toBe(5);
      expect(spec.template.spec.containers.map((container) => container.name)).toEqual(['main']);
      expect(stored?.metadata.labels).toEqual({ team: 'a' });
      const shown = await cluster.kubectl(binary, [
        'get',
        `statefulset/${name}`,
        '-o',
        'json',
        '--show-managed-fields',
      ]);
      const managed = (
        JSON.parse(shown.stdout) as {
          metadata: { managedFields: { manager: string; operation: string }[] };
        }
      ).metadata.managedFields;
      expect(managed.map((entry) => `${entry.manager} ${entry.operation}`)).toEqual([
        'kubectl Apply',
      ]);
    },
  );
});
