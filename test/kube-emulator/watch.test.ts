// Conformance checks 11 to 15: informer transitions, replay, 410 Expired, bookmarks, timeouts.

import { spawn } from 'node:child_process';
import {
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Pod,
} from '@kubernetes/client-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import { KUBECTL, startHarness } from './harness.ts';
import { rawWatch } from './watch-client.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('watch', () => {
  it('an informer with app=v sees add, update on a status change, delete when the label goes and add when it returns (check 11)', async () => {
    const h = await startHarness({ kubelet: false });
    const seen: string[] = [];
    const informer = makeInformer(
      h.kc,
      '/api/v1/namespaces/default/pods',
      () => h.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=v' }),
      'app=v',
    );
    onTestFinished(() => informer.stop());
    for (const verb of ['add', 'update', 'delete'] as const)
      informer.on(verb, (pod: V1Pod) => seen.push(`${verb} ${pod.metadata?.name ?? ''}`));
    await informer.start();
    await h.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'p', labels: { app: 'v' } },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      },
    });
    await h.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'other', labels: { app: 'w' } },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      },
    });
    await waitFor(() => seen.length === 1);
    await h.core.patchNamespacedPodStatus(
      { name: 'p', namespace: 'default', body: { status: { phase: 'Running' } } },
      merge,
    );
    await waitFor(() => seen.length === 2);
    await h.core.patchNamespacedPod(
      { name: 'p', namespace: 'default', body: { metadata: { labels: { app: null } } } },
      merge,
    );
    await waitFor(() => seen.length === 3);
    await h.core.patchNamespacedPod(
      { name: 'p', namespace: 'default', body: { metadata: { labels: { app: 'v' } } } },
      merge,
    );
    await waitFor(() => seen.length === 4);
    expect(seen).toEqual(['add p', 'update p', 'delete p', 'add p']);
  });

  it('replays nothing from the list RV, exactly the missed events from an older RV, and the current state as ADDED with no RV (check 12)', async () => {
    const harness = await startHarness({ kubelet: false });
    const { core, emulator } = harness;
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'a' } },
    });
    const listed = await core.listNamespacedConfigMap({ namespace: 'default' });
    const listRv = listed.metadata?.resourceVersion ?? '';
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'b' } },
    });
    await core.patchNamespacedConfigMap(
      { name: 'a', namespace: 'default', body: { data: { k: 'v' } } },
      merge,
    );
    await core.deleteNamespacedConfigMap({ name: 'b', namespace: 'default' });
    const path = '/api/v1/namespaces/default/configmaps';
    const fromOld = await rawWatch(emulator.url, path, { resourceVersion: listRv });
    const current = await core.listNamespacedConfigMap({ namespace: 'default' });
    const fromNow = await rawWatch(emulator.url, path, {
      resourceVersion: current.metadata?.resourceVersion ?? '',
    });
    const unset = await rawWatch(emulator.url, path, {});
    onTestFinished(() => [fromOld, fromNow, unset].forEach((w) => w.stop()));
    await waitFor(() => fromOld.events.length === 3 && unset.events.length === 2);
    expect(fromOld.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`)).toEqual([
      'ADDED b',
      'MODIFIED a',
      'DELETED b',
    ]);
    const rvs = fromOld.events.map((e) => Number(e.object.metadata?.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
    expect(unset.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`)).toEqual([
      'ADDED a',
      'ADDED kube-root-ca.crt', // every namespace holds it, as on a real cluster
    ]);
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'c' } },
    });
    await waitFor(() => fromNow.events.length === 1);
    expect(fromNow.events[0]).toMatchObject({
      type: 'ADDED',
      object: { kind: 'ConfigMap', metadata: { name: 'c' } },
    });
  });

  it('answers a watch from an RV older than the history with ERROR 410 and the end of the stream; an informer relists without spurious deletes (check 13)', async () => {
    const h = await startHarness({ kubelet: false, historySize: 5 });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'quiet', labels: { app: 'quiet' } } },
    });
    const listed = await h.core.listNamespacedConfigMap({ namespace: 'default' });
    let connects = 0;
    const deletes: string[] = [];
    const informer = makeInformer(
      h.kc,
      '/api/v1/namespaces/default/configmaps',
      () => h.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app=quiet' }),
      'app=quiet',
    );
    onTestFinished(() => informer.stop());
    informer.on('connect', () => connects++);
    informer.on('delete', (cm: V1ConfigMap) => deletes.push(cm.metadata?.name ?? ''));
    await informer.start();
    await waitFor(() => h.emulator.openWatches === 1);
    for (let i = 0; i < 10; i++)
      await h.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: `noise-${i}` } },
      });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'quiet-2', labels: { app: 'quiet' } } },
    });
    const old = await rawWatch(h.emulator.url, '/api/v1/namespaces/default/configmaps', {
      resourceVersion: listed.metadata?.resourceVersion ?? '',
    });
    await old.ended;
    expect(old.events).toHaveLength(1);
    expect(old.events[0]).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired' },
    });
    // Make the informer re-watch from its own (now expired) RV.
    await h.core.deleteNamespacedConfigMap({ name: 'quiet-2', namespace: 'default' });
    h.emulator.faults.endWatches();
    for (let i = 10; i < 16; i++)
      await h.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: `noise-${i}` } },
      });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'quiet-3', labels: { app: 'quiet' } } },
    });
    await waitFor(() => connects >= 2 && informer.get('quiet-3', 'default') !== undefined, {
      what: 'the relist',
    });
    const expired = h.emulator.requestLog.filter((r) => r.query.includes('watch=true'));
    expect(expired.length).toBeGreaterThanOrEqual(3);
    expect(deletes.filter((name) => name === 'quiet')).toEqual([]);
    const store = (
      await h.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app=quiet' })
    ).items
      .map((c) => c.metadata?.name)
      .sort();
    expect(
      informer
        .list('default')
        .map((c) => c.metadata?.name)
        .sort(),
    ).toEqual(store);
  });

  it('sends a BOOKMARK with only an RV when asked, and a re-watch from it works (check 14)', async () => {
    const harness = await startHarness({ kubelet: false, bookmarkIntervalMs: 100 });
    const { core, emulator } = harness;
    const path = '/api/v1/namespaces/default/secrets';
    const listed = await core.listNamespacedSecret({ namespace: 'default' });
    const watch = await rawWatch(emulator.url, path, {
      resourceVersion: listed.metadata?.resourceVersion ?? '',
      allowWatchBookmarks: 'true',
      fieldSelector: 'metadata.name=s',
    });
    onTestFinished(() => watch.stop());
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'moves-the-rv' } },
    });
    const bookmark = await waitFor(() => watch.events.find((e) => e.type === 'BOOKMARK'), {
      what: 'a bookmark',
    });
    expect(Object.keys(bookmark.object.metadata ?? {})).toEqual(['resourceVersion']);
    expect(bookmark.object.kind).toBe('Secret');
    const rv = bookmark.object.metadata?.resourceVersion ?? '';
    expect(Number(rv)).toBeGreaterThan(Number(listed.metadata?.resourceVersion));
    const again = await rawWatch(emulator.url, path, {
      resourceVersion: rv,
      fieldSelector: 'metadata.name=s',
    });
    onTestFinished(() => again.stop());
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' } } });
    await waitFor(() => again.events.length === 1);
    expect(again.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 's' } } });
    const plain = await rawWatch(emulator.url, path, { resourceVersion: rv });
    onTestFinished(() => plain.stop());
    await waitFor(() => plain.events.length === 1);
    expect(plain.events.every((e) => e.type !== 'BOOKMARK')).toBe(true);
  });

  it.skipIf(noKubectl)(
    'ends a watch with timeoutSeconds=2 cleanly after about two seconds, and kubectl get -w exits 0 when its stream ends (check 15)',
    async () => {
      const h = await startHarness({ kubelet: false });
      const watch = await rawWatch(h.emulator.url, '/api/v1/namespaces/default/pods', {
        timeoutSeconds: '2',
      });
      const openFor = await watch.ended;
      expect(openFor).toBeGreaterThanOrEqual(1900);
      expect(openFor).toBeLessThan(4000);
      const kubectl = spawn(
        KUBECTL,
        [
          `--kubeconfig=${h.kubeconfigPath}`,
          `--cache-dir=${h.emulator.dir}/kubectl-cache`,
          'get',
          'pods',
          '-w',
          '-o',
          'name',
        ],
        {
          stdio: 'ignore',
        },
      );
      const exited = new Promise<number | null>((resolve) =>
        kubectl.once('exit', (code) => resolve(code)),
      );
      onTestFinished(() => {
        kubectl.kill('SIGKILL');
      });
      await waitFor(
        () =>
          h.emulator.requestLog.some(
            (r) => r.query.includes('watch=true') && r.userAgent.startsWith('kubectl'),
          ),
        { what: 'kubectl to watch' },
      );
      await waitFor(() => h.emulator.openWatches === 1);
      h.emulator.faults.endWatches();
      expect(await exited).toBe(0);
    },
  );

  it('holds events back while paused and delivers them in order on resume', async () => {
    const harness = await startHarness({ kubelet: false });
    const { core, emulator } = harness;
    const watch = await rawWatch(emulator.url, '/api/v1/namespaces/default/configmaps', {
      resourceVersion: String(emulator.store.resourceVersion),
    });
    onTestFinished(() => watch.stop());
    emulator.faults.pauseEvents();
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'one' } },
    });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'two' } },
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(watch.events).toEqual([]);
    emulator.faults.resumeEvents();
    await waitFor(() => watch.events.length === 2);
    expect(watch.events.map((e) => e.object.metadata?.name)).toEqual(['one', 'two']);
  });
});
