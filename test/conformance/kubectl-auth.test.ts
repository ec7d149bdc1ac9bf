// kubectl auth can-i (--as, --list), create token and auth whoami against the emulator's RBAC.
// kubectl 1.27-1.31 send these bodies as JSON; 1.32 and 1.33 as protobuf (the k8s\0 envelope),
// which the review and token routes decode with the emulator's protobuf codec.
import { RbacAuthorizationV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startCluster, withVersions, type Cluster } from './ops-support.ts';
import { forKubectl } from '../support/kubectl-gate.ts';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ https: true, rbac: true, kubelet: false });
  const kc = new KubeConfig();
  kc.loadFromOptions(cluster.emulator.kubeconfigFor());
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await cluster.core.createNamespacedServiceAccount({
    namespace: 'default',
    body: { metadata: { name: 'manager' } },
  });
  await rbac.createNamespacedRole({
    namespace: 'default',
    body: {
      metadata: { name: 'pod-reader' },
      rules: [
        { apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: 'default',
    body: {
      metadata: { name: 'manager' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'manager', namespace: 'default' }],
    },
  });
});

afterAll(() => cluster.stop());

const as = ['--as', 'system:serviceaccount:default:manager'];

describe('kubectl auth and tokens', () => {
  forKubectl(withVersions([27, 28, 31, 32, 33]), 'no kubectl of 1.{27, 28, 31, 32, 33}')(
    'kubectl $version: can-i, --list, create token',
    async (binary) => {
      expect((await cluster.kubectl(binary, ['auth', 'can-i', 'delete', 'secrets'])).stdout).toBe(
        'yes\n',
      );
      expect(
        (
          await cluster.kubectl(binary, [
            'auth',
            'can-i',
            'get',
            'pods',
            '--subresource=log',
            ...as,
          ])
        ).stdout,
      ).toBe('yes\n');
      expect(
        await cluster.kubectl(binary, ['auth', 'can-i', 'list', 'secrets', ...as]),
      ).toMatchObject({
        code: 1,
        stdout: 'no\n',
      });
      const list = await cluster.kubectl(binary, ['auth', 'can-i', '--list', ...as]);
      expect(list.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
      expect(list.stdout).toMatch(
        /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m,
      );
      const token = await cluster.kubectl(binary, ['create', 'token', 'manager', '--duration=20m']);
      expect(token.code).toBe(0);
      const pods = await cluster.kubectl(binary, ['get', 'pods', `--token=${token.stdout.trim()}`]);
      expect(pods.code).toBe(0);
      const secrets = await cluster.kubectl(binary, [
        'get',
        'secrets',
        `--token=${token.stdout.trim()}`,
      ]);
      expect(secrets.stderr).toContain('cannot list resource "secrets"');
      if (binary.minor >= 28) {
        const whoami = await cluster.kubectl(binary, [
          'auth',
          'whoami',
          `--token=${token.stdout.trim()}`,
        ]);
        expect(whoami.stdout).toMatch(/Username\s+system:serviceaccount:default:manager/);
      }
    },
  );
});
