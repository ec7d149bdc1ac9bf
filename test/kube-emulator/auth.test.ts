// Conformance check 28 (in-cluster config over HTTPS with a CA and a token file), bearer tokens,
// and RBAC for ServiceAccount tokens.

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import { failure, startHarness, statefulSet, statusOf } from './harness.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

function setEnv(name: string, value: string): void {
  const previous = process.env[name];
  process.env[name] = value;
  onTestFinished(() => {
    if (previous === undefined) Reflect.deleteProperty(process.env, name);
    else process.env[name] = previous;
  });
}

describe('HTTPS and tokens', () => {
  it('serves loadFromCluster(pathPrefix) over HTTPS with a CA file and a token file, and sees the bearer token (check 28)', async () => {
    const harness = await startHarness({ https: true, token: 'in-cluster-token' });
    const { emulator } = harness;
    expect(emulator.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const prefix = join(emulator.dir, 'root');
    const folder = join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'token'), 'in-cluster-token');
    await writeFile(join(folder, 'ca.crt'), emulator.caCert ?? '');
    await writeFile(join(folder, 'namespace'), 'default');
    setEnv('KUBERNETES_SERVICE_HOST', '127.0.0.1');
    setEnv('KUBERNETES_SERVICE_PORT', new URL(emulator.url).port);
    const kc = new KubeConfig();
    kc.loadFromCluster(prefix);
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('default');
    const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' });
    expect(pods.kind).toBe('PodList');
    const request = emulator.requestLog.find((r) => r.path === '/api/v1/namespaces/default/pods');
    expect(request?.authorization).toBe('Bearer in-cluster-token');
  });

  it.skipIf(noKubectl)(
    'requires the token over HTTPS (401 without it) and lets kubectl in with the written kubeconfig',
    async () => {
      const harness = await startHarness({ https: true });
      const { emulator } = harness;
      const kc = new KubeConfig();
      kc.loadFromOptions({ ...emulator.kubeconfigFor(), users: [{ name: 'admin' }] });
      // client-node keeps no body for a 401; the code is what it reports.
      const denied = await kc
        .makeApiClient(CoreV1Api)
        .listNamespace()
        .catch((error: unknown) => (error as { code?: number }).code);
      expect(denied).toBe(401);
      const listed = await harness.kubectl(['get', 'namespaces', '-o', 'name']);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain('namespace/default');
    },
  );
});

describe('RBAC', () => {
  it('checks a ServiceAccount token against the Roles bound to it: verbs, subresources and resourceNames', async () => {
    const h = await startHarness({ rbac: true, kubelet: false });
    await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 1 }),
    });
    await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'other', replicas: 1 }),
    });
    await h.core.createNamespacedServiceAccount({
      namespace: 'default',
      body: { metadata: { name: 'manager' } },
    });
    const rbac = `${h.emulator.url}/apis/rbac.authorization.k8s.io/v1/namespaces/default`;
    const post = (path: string, body: unknown) =>
      fetch(`${rbac}/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(
      (
        await post('roles', {
          metadata: { name: 'manager' },
          rules: [
            { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
            {
              apiGroups: ['apps'],
              resources: ['statefulsets/scale'],
              resourceNames: ['web'],
              verbs: ['get', 'patch'],
            },
          ],
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await post('rolebindings', {
          metadata: { name: 'manager' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'manager' },
          subjects: [{ kind: 'ServiceAccount', name: 'manager', namespace: 'default' }],
        })
      ).status,
    ).toBe(201);
    const kc = new KubeConfig();
    kc.loadFromOptions(h.emulator.kubeconfigFor({ namespace: 'default', name: 'manager' }));
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    expect((await core.listNamespacedPod({ namespace: 'default' })).kind).toBe('PodList');
    const create = await failure(
      core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      }),
    );
    expect(create).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(create.message).toBe(
      'pods is forbidden: User "system:serviceaccount:default:manager" cannot create resource "pods" in API group "" in the namespace "default"',
    );
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const scaled = await apps.patchNamespacedStatefulSetScale(
      { name: 'web', namespace: 'default', body: { spec: { replicas: 2 } } },
      merge,
    );
    expect(scaled.spec?.replicas).toBe(2);
    const otherScale = await apps
      .patchNamespacedStatefulSetScale(
        { name: 'other', namespace: 'default', body: { spec: { replicas: 2 } } },
        merge,
      )
      .catch(statusOf);
    expect(otherScale).toMatchObject({ code: 403 });
    expect(
      await apps.readNamespacedStatefulSet({ name: 'web', namespace: 'default' }).catch(statusOf),
    ).toMatchObject({ code: 403 });
    expect(
      await core.listNamespacedPod({ namespace: 'kube-system' }).catch(statusOf),
    ).toMatchObject({ code: 403 });
    expect(await core.listPodForAllNamespaces().catch(statusOf)).toMatchObject({ code: 403 });
    // The admin (any other token, auth being off) is not restricted.
    expect(
      (await h.apps.readNamespacedStatefulSet({ name: 'web', namespace: 'default' })).spec
        ?.replicas,
    ).toBe(2);
  });

  it('authorizes a list or watch limited by metadata.name against the resourceNames of a Role', async () => {
    const h = await startHarness({ rbac: true, kubelet: false });
    for (const name of ['keys', 'other']) {
      await h.core.createNamespacedSecret({
        namespace: 'default',
        body: { metadata: { name }, stringData: { a: 'b' } },
      });
    }
    await h.core.createNamespacedServiceAccount({
      namespace: 'default',
      body: { metadata: { name: 'reader' } },
    });
    const rbac = `${h.emulator.url}/apis/rbac.authorization.k8s.io/v1/namespaces/default`;
    const post = (path: string, body: unknown) =>
      fetch(`${rbac}/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    await post('roles', {
      metadata: { name: 'reader' },
      rules: [
        {
          apiGroups: [''],
          resources: ['secrets'],
          resourceNames: ['keys'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    });
    await post('rolebindings', {
      metadata: { name: 'reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'default' }],
    });
    const kc = new KubeConfig();
    kc.loadFromOptions(h.emulator.kubeconfigFor({ namespace: 'default', name: 'reader' }));
    const core = kc.makeApiClient(CoreV1Api);
    const listed = await core.listNamespacedSecret({
      namespace: 'default',
      fieldSelector: 'metadata.name=keys',
    });
    expect(listed.items.map((s) => s.metadata?.name)).toEqual(['keys']);
    expect(
      await core
        .listNamespacedSecret({ namespace: 'default', fieldSelector: 'metadata.name=other' })
        .catch(statusOf),
    ).toMatchObject({ code: 403 });
    expect(await core.listNamespacedSecret({ namespace: 'default' }).catch(statusOf)).toMatchObject(
      { code: 403 },
    );
    const watch = await fetch(
      `${h.emulator.url}/api/v1/namespaces/default/secrets?watch=true&fieldSelector=metadata.name%3Dkeys&timeoutSeconds=1`,
      {
        headers: { authorization: `Bearer ${h.emulator.issueToken('default', 'reader')}` },
      },
    );
    expect(watch.status).toBe(200);
    expect(await watch.text()).toContain('"name":"keys"');
  });
});
