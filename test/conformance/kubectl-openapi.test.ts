// OpenAPI and field validation with the kubectl versions that differ: 1.27 and 1.28 download
// /openapi/v2 as gnostic protobuf before apply, create, edit and diff (and validate on the client
// unless the server's OpenAPI v3 says it validates), 1.29 on read only v3. A typo is refused
// under Strict (kubectl's default), warned about under Warn, dropped under Ignore; explain
// shows the upstream descriptions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available, newest, startCluster, type Cluster } from './support.ts';

const binaries = [
  ...available([27, 28]),
  ...(newest !== undefined && newest.minor > 28 ? [newest] : []),
];

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster.stop();
});

const configMap = (name: string, extra = '', value = 'v'): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}data:\n  k: ${value}\n`;

describe.skipIf(binaries.length === 0)('OpenAPI, explain and field validation', () => {
  it.each(binaries.map((binary) => [binary.version, binary] as const))(
    'kubectl %s: explain, apply (create, then update), diff and edit without --validate=false; a typo refused under strict',
    async (_, binary) => {
      const name = `cm-${binary.minor}`;
      const explain = await cluster.kubectl(binary, ['explain', 'statefulset.spec.replicas']);
      expect(explain.stderr).toBe('');
      expect(explain.stdout).toContain(
        'replicas is the desired number of replicas of the given Template',
      );
      const typo = await cluster.kubectl(binary, ['apply', '-f', '-'], {
        input: configMap(name, '  lables: {a: b}\n'),
      });
      expect(typo.code).toBe(1);
      expect(typo.stderr).toContain('strict decoding error: unknown field "metadata.lables"');
      expect(cluster.emulator.store.get('/configmaps', 'default', name)).toBeUndefined();
      const created = await cluster.kubectl(binary, ['apply', '-f', '-'], {
        input: configMap(name),
      });
      expect(created.stderr).toBe('');
      expect(created.stdout).toContain(`configmap/${name} created`);
      const updated = await cluster.kubectl(binary, ['apply', '-f', '-'], {
        input: configMap(name, '', 'v2'),
      });
      expect(updated.stdout).toContain(`configmap/${name} configured`);
      const diff = await cluster.kubectl(binary, ['diff', '-f', '-'], {
        input: configMap(name, '', 'v3'),
      });
      expect(diff.code, diff.stderr).toBe(1); // 1: differences found
      expect(diff.stdout).toContain('+  k: v3');
      const editor = await cluster.script(
        `edit-${binary.minor}.sh`,
        `sed -i 's/k: v2/k: edited/' "$1"`,
      );
      const edit = await cluster.kubectl(binary, ['edit', `configmap/${name}`], {
        env: { KUBE_EDITOR: editor },
      });
      expect(edit.stderr).toBe('');
      expect(edit.stdout).toContain(`configmap/${name} edited`);
      const stored = cluster.emulator.store.get('/configmaps', 'default', name);
      expect(stored?.data).toEqual({ k: 'edited' });
    },
  );

  it.skipIf(newest === undefined)(
    'warns about and drops an unknown field under --validate=warn, drops it silently under false',
    async () => {
      if (newest === undefined) return;
      const warned = await cluster.kubectl(newest, ['create', '--validate=warn', '-f', '-'], {
        input: configMap('warned', '  lables: {a: b}\n'),
      });
      expect(warned.code).toBe(0);
      expect(warned.stderr).toContain('Warning: unknown field "metadata.lables"');
      const quiet = await cluster.kubectl(newest, ['create', '--validate=false', '-f', '-'], {
        input: configMap('quiet', '  lables: {a: b}\n'),
      });
      expect(quiet.code).toBe(0);
      expect(quiet.stderr).toBe('');
      for (const name of ['warned', 'quiet']) {
        expect(
          cluster.emulator.store.get('/configmaps', 'default', name)?.metadata,
        ).not.toHaveProperty('lables');
      }
    },
  );
});
