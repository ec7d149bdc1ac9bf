// Conformance checks 2, 7, 8, 9, 25 and 26: object metadata, optimistic concurrency, Status
// errors, generateName, the status subresource and Secret stringData.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isGone, startHarness, statefulSet, statusOf } from './harness.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

describe('API semantics', () => {
  it.skipIf(noKubectl)(
    'creates a namespace and a StatefulSet with kubectl create, with uid, creationTimestamp, a numeric RV and generation 1 (check 2)',
    async () => {
      const harness = await startHarness();
      const dir = harness.emulator.dir;
      await writeFile(
        join(dir, 'ns.json'),
        JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }),
      );
      const manifest = statefulSet({ name: 'web', replicas: 1 });
      manifest.metadata.namespace = 'apps';
      await writeFile(join(dir, 'sts.json'), JSON.stringify(manifest));
      expect((await harness.kubectl(['create', '-f', join(dir, 'ns.json')])).code).toBe(0);
      const created = await harness.kubectl([
        'create',
        '--validate=false',
        '-f',
        join(dir, 'sts.json'),
      ]);
      expect(created.stdout).toContain('statefulset.apps/web created');
      const got = await harness.kubectl(['get', 'sts', 'web', '-n', 'apps', '-o', 'json']);
      const sts = JSON.parse(got.stdout) as { metadata: Record<string, unknown> };
      expect(sts.metadata.uid).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      expect(sts.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(sts.metadata.resourceVersion).toMatch(/^\d+$/);
      expect(sts.metadata.generation).toBe(1);
    },
  );

  it('lets exactly one of two concurrent Lease replaces with the same RV win; the other gets 409 Conflict (check 7)', async () => {
    const harness = await startHarness();
    const { coordination } = harness;
    const lease = await coordination.createNamespacedLease({
      namespace: 'default',
      body: {
        metadata: { name: 'leader' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15 },
      },
    });
    const attempt = (holder: string) =>
      coordination.replaceNamespacedLease({
        name: 'leader',
        namespace: 'default',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: holder, renewTime: new Date() } },
      });
    const results = await Promise.allSettled([attempt('b'), attempt('c')]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const status = statusOf((lost[0] as PromiseRejectedResult).reason);
    expect(status).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(status.message).toContain('leases.coordination.k8s.io "leader"');
    const stored = await coordination.readNamespacedLease({ name: 'leader', namespace: 'default' });
    expect(stored.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(stored.spec?.holderIdentity).toMatch(/^[bc]$/);
  });

  it('answers AlreadyExists, NotFound, a bad label selector and an unsupported field selector with the real Status (check 8)', async () => {
    const harness = await startHarness();
    const { core } = harness;
    const body = { metadata: { name: 's' }, stringData: { a: 'b' } };
    await core.createNamespacedSecret({ namespace: 'default', body });
    const exists = await core
      .createNamespacedSecret({ namespace: 'default', body })
      .catch(statusOf);
    expect(exists).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'secrets "s" already exists',
    });
    const missing = await harness.apps
      .readNamespacedStatefulSet({ name: 'nope', namespace: 'default' })
      .catch(statusOf);
    expect(missing).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'statefulsets.apps "nope" not found',
      details: { name: 'nope', group: 'apps', kind: 'statefulsets' },
    });
    const badLabels = await core
      .listNamespacedPod({ namespace: 'default', labelSelector: 'app in (a' })
      .catch(statusOf);
    expect(badLabels).toMatchObject({ code: 400, reason: 'BadRequest' });
    const badField = await core
      .listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.colour=red' })
      .catch(statusOf);
    expect(badField).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'field label not supported: spec.colour',
    });
    const invalid = await core
      .createNamespacedConfigMap({ namespace: 'default', body: { metadata: {} } })
      .catch(statusOf);
    expect(invalid).toMatchObject({ code: 422, reason: 'Invalid' });
    const badName = await core
      .createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Bad_Name' } } })
      .catch(statusOf);
    expect(badName).toMatchObject({ code: 422, reason: 'Invalid', details: { kind: 'ConfigMap' } });
    const response = await fetch(`${harness.emulator.url}/api/v1/namespaces/default/configmaps/x`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'text/plain' },
      body: '{}',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ reason: 'UnsupportedMediaType' });
  });

  it('names objects from generateName with five characters of the apimachinery alphabet (check 9)', async () => {
    const harness = await startHarness();
    for (let i = 0; i < 5; i++) {
      const created = await harness.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { generateName: 'x-' } },
      });
      expect(created.metadata?.name).toMatch(/^x-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    }
  });

  it.skipIf(noKubectl)(
    'ignores status in a main-resource PUT but applies a --subresource=status patch (check 25)',
    async () => {
      const harness = await startHarness({ kubelet: false });
      const { core } = harness;
      const pod = await core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      });
      const replaced = await core.replaceNamespacedPod({
        name: 'p',
        namespace: 'default',
        body: {
          ...pod,
          metadata: { ...pod.metadata, labels: { a: 'b' } },
          status: { phase: 'Running' },
        },
      });
      expect(replaced.metadata?.labels).toEqual({ a: 'b' });
      expect(replaced.status?.phase).toBe('Pending');
      const patched = await harness.kubectl([
        'patch',
        'pod',
        'p',
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"phase":"Running"}}',
        '-o',
        'json',
      ]);
      expect(patched.code).toBe(0);
      expect((JSON.parse(patched.stdout) as V1Pod).status?.phase).toBe('Running');
      const read = await core.readNamespacedPod({ name: 'p', namespace: 'default' });
      expect(read.status?.phase).toBe('Running');
      expect(read.metadata?.labels).toEqual({ a: 'b' });
    },
  );

  it('folds Secret stringData into base64 data and never returns stringData (check 26)', async () => {
    const harness = await startHarness();
    const created = await harness.core.createNamespacedSecret({
      namespace: 'default',
      body: {
        metadata: { name: 'keys' },
        stringData: { '001': 'deadbeef' },
        data: { other: Buffer.from('x').toString('base64') },
      },
    });
    expect(created.stringData).toBeUndefined();
    const read = await harness.core.readNamespacedSecret({ name: 'keys', namespace: 'default' });
    expect(read.type).toBe('Opaque');
    expect(read.stringData).toBeUndefined();
    expect(Buffer.from(read.data?.['001'] ?? '', 'base64').toString()).toBe('deadbeef');
    expect(Buffer.from(read.data?.other ?? '', 'base64').toString()).toBe('x');
    const bad = await harness.core
      .createNamespacedSecret({
        namespace: 'default',
        body: { metadata: { name: 'bad' }, data: { k: '%%%' } },
      })
      .catch(statusOf);
    expect(bad).toMatchObject({ code: 422, reason: 'Invalid' });
  });

  it('keeps one global resourceVersion, skips no-op writes, and pages lists with limit/continue', async () => {
    const harness = await startHarness();
    const { core } = harness;
    const a = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'a' }, data: { k: '1' } },
    });
    const b = await core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'b' } },
    });
    expect(Number(b.metadata?.resourceVersion)).toBeGreaterThan(
      Number(a.metadata?.resourceVersion),
    );
    const same = await core.replaceNamespacedConfigMap({
      name: 'a',
      namespace: 'default',
      body: a,
    });
    expect(same.metadata?.resourceVersion).toBe(a.metadata?.resourceVersion);
    for (const name of ['c', 'd', 'e'])
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });
    const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
    expect(first.items.map((i) => i.metadata?.name)).toEqual(['a', 'c']);
    const second = await core.listNamespacedConfigMap({
      namespace: 'default',
      limit: 2,
      _continue: first.metadata?._continue ?? '',
    });
    expect(second.items.map((i) => i.metadata?.name)).toEqual(['d', 'e']);
    // The last page: the namespace's kube-root-ca.crt, and no further token.
    const third = await core.listNamespacedConfigMap({
      namespace: 'default',
      limit: 2,
      _continue: second.metadata?._continue ?? '',
    });
    expect(third.items.map((i) => i.metadata?.name)).toEqual(['kube-root-ca.crt']);
    expect(third.metadata?._continue).toBeUndefined();
    const merged = await core.patchNamespacedConfigMap(
      { name: 'a', namespace: 'default', body: { data: { k: '2' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(merged.data).toEqual({ k: '2' });
    const stale = await core
      .patchNamespacedConfigMap(
        {
          name: 'a',
          namespace: 'default',
          body: { metadata: { resourceVersion: a.metadata?.resourceVersion }, data: { k: '3' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
      .catch(statusOf);
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
  });

  it('deletes pods gracefully: deletionTimestamp first, removal when the kubelet is done', async () => {
    const harness = await startHarness({
      kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0, terminationMs: 300 },
    });
    const { core } = harness;
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    await waitFor(
      async () =>
        (await core.readNamespacedPod({ name: 'p', namespace: 'default' })).status?.phase ===
        'Running',
    );
    const deleted = await core.deleteNamespacedPod({ name: 'p', namespace: 'default' });
    expect(deleted.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(deleted.metadata?.deletionGracePeriodSeconds).toBe(30);
    await waitFor(() => isGone(() => core.readNamespacedPod({ name: 'p', namespace: 'default' })), {
      what: 'the pod to go',
    });
  });
});
