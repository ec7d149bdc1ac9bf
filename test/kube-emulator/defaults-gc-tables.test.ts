// The apiserver's defaults for pods, volumes and Services; no new finalizer on an object being
// deleted; the garbage collector's rule for a missing owner; `kubectl get` tables of every kind.
import { RbacAuthorizationV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';
import { failure, isGone, startHarness, statefulSet } from './harness.ts';

describe('defaults', () => {
  it('fills a pod, its volumes and probes, a template and a Service as the apiserver does', async () => {
    const h = await startHarness({ kubelet: false });
    const pod = await h.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'p' },
        spec: {
          containers: [
            {
              name: 'c',
              image: 'x:1',
              readinessProbe: { httpGet: { port: 80 } },
              env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            },
          ],
          volumes: [
            { name: 's', secret: { secretName: 'keys' } },
            { name: 'm', configMap: { name: 'cfg' } },
          ],
        },
      },
    });
    expect(pod.spec).toMatchObject({
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
      serviceAccountName: 'default',
      serviceAccount: 'default',
      enableServiceLinks: true,
      priority: 0,
      preemptionPolicy: 'PreemptLowerPriority',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      volumes: [
        { name: 's', secret: { secretName: 'keys', defaultMode: 420 } },
        { name: 'm', configMap: { name: 'cfg', defaultMode: 420 } },
      ],
    });
    expect(pod.spec?.containers[0]).toMatchObject({
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      readinessProbe: {
        httpGet: { port: 80, path: '/', scheme: 'HTTP' },
        timeoutSeconds: 1,
        periodSeconds: 10,
        successThreshold: 1,
        failureThreshold: 3,
      },
      env: [
        { name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } },
      ],
    });
    // A workload's template gets the defaults of a pod spec, not the admission plugins' fields.
    const set = await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 0 }),
    });
    expect(set.spec?.template.spec?.dnsPolicy).toBe('ClusterFirst');
    expect(set.spec?.template.spec?.serviceAccountName).toBeUndefined();
    expect(set.spec?.template.spec?.tolerations).toBeUndefined();
    const service = await h.core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name: 'svc' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
      },
    });
    expect(service.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
    });
    expect(service.spec?.clusterIPs).toEqual([service.spec?.clusterIP]);
    const nodePort = await h.core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'np' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } },
    });
    expect(nodePort.spec?.externalTrafficPolicy).toBe('Cluster');
    expect(nodePort.spec?.ports?.[0]?.nodePort).toBeGreaterThanOrEqual(30000);
    expect(nodePort.spec?.ports?.[0]?.nodePort).toBeLessThanOrEqual(32767);
    const headless = await h.core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'hl' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } },
    });
    expect(headless.spec?.clusterIPs).toEqual(['None']);
  });
});

describe('finalizers and owners', () => {
  it('refuses a new finalizer on an object being deleted, with the apiserver message', async () => {
    const h = await startHarness({ kubelet: false });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'held', finalizers: ['example.com/a'] } },
    });
    await h.core.deleteNamespacedConfigMap({ name: 'held', namespace: 'default' });
    const refused = await failure(
      h.core.patchNamespacedConfigMap({
        name: 'held',
        namespace: 'default',
        body: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/b' }],
      }),
    );
    expect(refused).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message:
        'ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}',
    });
    // Removing the one it has is allowed, and the object goes.
    await h.core.patchNamespacedConfigMap({
      name: 'held',
      namespace: 'default',
      body: [{ op: 'remove', path: '/metadata/finalizers/0' }],
    });
    expect(
      await isGone(() => h.core.readNamespacedConfigMap({ name: 'held', namespace: 'default' })),
    ).toBe(true);
  });

  it('collects an object whose owners are absent, drops a dangling reference beside a live owner, leaves unknown kinds', async () => {
    const h = await startHarness({ kubelet: false });
    const live = await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'owner' } },
    });
    const ref = (kind: string, apiVersion: string, name: string, uid: string) => ({
      apiVersion,
      kind,
      name,
      uid,
    });
    const create = (name: string, ownerReferences: ReturnType<typeof ref>[]) =>
      h.core.createNamespacedSecret({
        namespace: 'default',
        body: { metadata: { name, ownerReferences } },
      });
    await create('orphan', [
      ref('StatefulSet', 'apps/v1', 'ghost', '00000000-0000-0000-0000-000000000001'),
    ]);
    await create('stale-uid', [
      ref('ConfigMap', 'v1', 'owner', '00000000-0000-0000-0000-000000000002'),
    ]);
    await create('mixed', [
      ref('ConfigMap', 'v1', 'owner', live.metadata?.uid ?? ''),
      ref('StatefulSet', 'apps/v1', 'ghost', '00000000-0000-0000-0000-000000000003'),
    ]);
    await create('unknown-kind', [
      ref('Widget', 'example.com/v1', 'w', '00000000-0000-0000-0000-000000000004'),
    ]);
    const read = (name: string) => h.core.readNamespacedSecret({ name, namespace: 'default' });
    await waitFor(() => isGone(() => read('orphan')), { what: 'the orphan collected' });
    await waitFor(() => isGone(() => read('stale-uid')), {
      what: 'the stale-uid dependent collected',
    });
    await waitFor(async () => (await read('mixed')).metadata?.ownerReferences?.length === 1, {
      what: 'the dangling reference dropped',
    });
    expect((await read('mixed')).metadata?.ownerReferences?.[0]?.name).toBe('owner');
    expect((await read('unknown-kind')).metadata?.name).toBe('unknown-kind');
  });
});

describe.skipIf(noKubectl)('kubectl get tables', () => {
  it('shows the apiserver columns for secrets, configmaps, services, accounts, leases, RBAC and events', async () => {
    const h = await startHarness({ kubelet: false });
    await h.core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'keys' }, type: 'Opaque', stringData: { a: '1', b: '2' } },
    });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'cfg' }, data: { x: '1' }, binaryData: { y: 'AA==' } },
    });
    await h.core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name: 'rpc' },
        spec: {
          selector: { app: 'v' },
          ports: [{ port: 50832 }, { port: 42069, protocol: 'UDP' }],
        },
      },
    });
    await h.kc.makeApiClient(CoordinationV1Api).createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'cm-1' } },
    });
    const rbac = h.kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: 'default',
      body: { metadata: { name: 'r' }, rules: [] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'rb' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
        subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }],
      },
    });
    const get = async (...args: string[]) => (await h.kubectl(['get', ...args])).stdout;
    expect(await get('secrets', 'keys')).toMatch(
      /^NAME\s+TYPE\s+DATA\s+AGE\nkeys\s+Opaque\s+2\s+\d+s\n$/,
    );
    expect(await get('configmaps', 'cfg')).toMatch(/^NAME\s+DATA\s+AGE\ncfg\s+2\s+\d+s\n$/);
    expect(await get('services', 'rpc', '-o', 'wide')).toMatch(
      /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR\nrpc\s+ClusterIP\s+10\.96\.\d+\.\d+\s+<none>\s+50832\/TCP,42069\/UDP\s+\d+s\s+app=v\n$/,
    );
    expect(await get('serviceaccounts', 'default')).toMatch(
      /^NAME\s+SECRETS\s+AGE\ndefault\s+0\s+\d+s\n$/,
    );
    expect(await get('leases', 'leader')).toMatch(/^NAME\s+HOLDER\s+AGE\nleader\s+cm-1\s+\d+s\n$/);
    expect(await get('roles', 'r')).toMatch(
      /^NAME\s+CREATED AT\nr\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/,
    );
    expect(await get('rolebindings', 'rb', '-o', 'wide')).toMatch(
      /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS\nrb\s+Role\/r\s+\d+s\s+default\/default\n$/,
    );
    await h.core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'e1' },
        involvedObject: { kind: 'ConfigMap', name: 'cfg', namespace: 'default' },
        reason: 'Checked',
        message: 'all good',
        type: 'Normal',
        count: 3,
        firstTimestamp: new Date(Date.now() - 60_000),
        lastTimestamp: new Date(),
        source: { component: 'tester', host: 'h1' },
      },
    });
    expect(await get('events', '--field-selector', 'reason=Checked')).toMatch(
      /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n\d+s\s+Normal\s+Checked\s+configmap\/cfg\s+all good\n$/,
    );
    expect(await get('events', '--field-selector', 'reason=Checked', '-o', 'wide')).toMatch(
      /SUBOBJECT\s+SOURCE\s+MESSAGE\s+FIRST SEEN\s+COUNT\s+NAME\n.*tester, h1\s+all good\s+(59|60|61)s\s+3\s+e1\n$/,
    );
  });
});
