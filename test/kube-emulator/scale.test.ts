// Conformance checks 5 and 6: the scale subresource through client-node and kubectl.

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startHarness, statefulSet, statusOf } from './harness.ts';
import { noKubectl } from '../support/kubectl-gate.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';

describe('scale subresource', () => {
  it('rejects a merge body sent as JSON Patch (client-node default) with 400 and accepts it as a merge patch (check 5)', async () => {
    const harness = await startHarness({ kubelet: false });
    const { apps } = harness;
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 1 }),
    });
    const wrong = await apps
      .patchNamespacedStatefulSetScale({
        name: 'web',
        namespace: 'default',
        body: { spec: { replicas: 5 } },
      })
      .catch(statusOf);
    expect(wrong).toMatchObject({ code: 400, reason: 'BadRequest' });
    const jsonPatchRequest = harness.emulator.requestLog.find((r) => r.method === 'PATCH');
    expect(jsonPatchRequest?.path).toBe('/apis/apps/v1/namespaces/default/statefulsets/web/scale');
    const scale = await apps.patchNamespacedStatefulSetScale(
      { name: 'web', namespace: 'default', body: { spec: { replicas: 5 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(scale.spec?.replicas).toBe(5);
    expect(scale.status?.selector).toBe('app=web');
    const sts = await apps.readNamespacedStatefulSet({ name: 'web', namespace: 'default' });
    expect(sts.spec?.replicas).toBe(5);
    expect(sts.metadata?.generation).toBe(2);
    const negative = await apps
      .patchNamespacedStatefulSetScale(
        { name: 'web', namespace: 'default', body: { spec: { replicas: -1 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
      .catch(statusOf);
    expect(negative).toMatchObject({ code: 422, reason: 'Invalid' });
  });

  it.skipIf(noKubectl)(
    'fails kubectl scale --current-replicas with a wrong value and succeeds with the right one (check 6)',
    async () => {
      const harness = await startHarness({ kubelet: false });
      await harness.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name: 'web', replicas: 3 }),
      });
      const wrong = await harness.kubectl([
        'scale',
        'sts',
        'web',
        '--current-replicas=2',
        '--replicas=4',
      ]);
      expect(wrong.code).not.toBe(0);
      // kubectl checks the precondition against the Scale it read; the PUT it then sends carries
      // that Scale's resourceVersion, so a concurrent change gets 409 (see the next test).
      expect(wrong.stderr).toContain('Expected replicas to be 2, was 3');
      expect(
        (await harness.apps.readNamespacedStatefulSetScale({ name: 'web', namespace: 'default' }))
          .spec?.replicas,
      ).toBe(3);
      const right = await harness.kubectl([
        'scale',
        'sts',
        'web',
        '--current-replicas=3',
        '--replicas=4',
      ]);
      expect(right.code).toBe(0);
      const put = harness.emulator.requestLog.filter(
        (r) => r.method === 'PUT' && r.path.endsWith('/statefulsets/web/scale'),
      );
      expect(put).toHaveLength(1);
      const scale = await harness.apps.readNamespacedStatefulSetScale({
        name: 'web',
        namespace: 'default',
      });
      expect(scale.spec?.replicas).toBe(4);
    },
  );

  it('answers a Scale PUT with a stale resourceVersion with 409 Conflict', async () => {
    const harness = await startHarness({ kubelet: false });
    const { apps } = harness;
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 1 }),
    });
    const scale = await apps.readNamespacedStatefulSetScale({ name: 'web', namespace: 'default' });
    await apps.replaceNamespacedStatefulSetScale({
      name: 'web',
      namespace: 'default',
      body: { ...scale, spec: { replicas: 2 } },
    });
    const stale = await apps
      .replaceNamespacedStatefulSetScale({
        name: 'web',
        namespace: 'default',
        body: { ...scale, spec: { replicas: 3 } },
      })
      .catch(statusOf);
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
  });
});

describe('stopping the controllers', () => {
  it('after stopControllers, a scale-up creates no pod (a devnet stops them first, so a stop under load does not go on creating pods)', async () => {
    const harness = await startHarness({ kubelet: false });
    const { apps, core, emulator } = harness;
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 1, podManagementPolicy: 'Parallel' }),
    });
    const pods = async () =>
      (await core.listNamespacedPod({ namespace: 'default' })).items.map((p) => p.metadata?.name);
    await waitFor(async () => ((await pods()).length === 1 ? true : pending('no pod yet')), {
      what: 'the first pod',
    });
    emulator.stopControllers();
    await apps.patchNamespacedStatefulSetScale(
      { name: 'web', namespace: 'default', body: { spec: { replicas: 3 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // A running controller creates web-1 within milliseconds (the first pod took as long).
    await expect(
      waitFor(async () => ((await pods()).length > 1 ? true : pending('one pod')), {
        timeoutMs: 1_500,
        what: 'a second pod',
      }),
    ).rejects.toThrow(/timed out/);
    expect(await pods()).toEqual(['web-0']);
  });
});
