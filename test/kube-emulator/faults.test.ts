// Conformance checks 17 and 18: watch resets, injected 500s and 429s, and an apiserver restart
// with a resourceVersion jump, as a sidecar's restarting informer lives through them.

import { describe, expect, it, onTestFinished } from 'vitest';
import { startHarness, statusOf, type Harness } from './harness.ts';
import { restartingInformer, type RestartingInformer } from './restarting-informer.ts';
import { waitFor } from '../../src/harness/wait.ts';

async function storeNames(h: Harness): Promise<string[]> {
  return (await h.core.listNamespacedConfigMap({ namespace: 'default' })).items
    .map((c) => c.metadata?.name ?? '')
    .sort();
}

async function converged(h: Harness, i: RestartingInformer): Promise<void> {
  const expected = await storeNames(h);
  await waitFor(() => JSON.stringify(i.names()) === JSON.stringify(expected), {
    what: `the cache to equal ${expected.join(',')}`,
  });
}

describe('faults', () => {
  it('resets every watch socket: the informer errors, is restarted with backoff, and its cache converges; again with a 500 on the next list (check 17)', async () => {
    const h = await startHarness({ kubelet: false });
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'a' } },
    });
    const i = await restartingInformer(h.kc, h.core);
    onTestFinished(() => i.stop());
    await waitFor(() => h.emulator.openWatches === 1);
    h.emulator.faults.resetWatches();
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'b' } },
    });
    await waitFor(() => i.errors >= 1, { what: 'the informer to report the reset' });
    await converged(h, i);
    await waitFor(() => h.emulator.openWatches === 1);
    h.emulator.faults.failNext(1, 500);
    h.emulator.faults.resetWatches();
    await h.core
      .createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' } } })
      .catch(statusOf);
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'd' } },
    });
    await waitFor(() => i.errors >= 2);
    await converged(h, i);
    expect(i.names()).toContain('d');
  });

  it('answers the next requests with 429 and a Retry-After header', async () => {
    const harness = await startHarness({ kubelet: false });
    harness.emulator.faults.failNext(2, 429);
    const first = await fetch(`${harness.emulator.url}/api/v1/namespaces/default/pods`);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(await first.json()).toMatchObject({ reason: 'TooManyRequests', code: 429 });
    expect((await fetch(`${harness.emulator.url}/api/v1/namespaces/default/pods`)).status).toBe(
      429,
    );
    expect((await fetch(`${harness.emulator.url}/api/v1/namespaces/default/pods`)).status).toBe(
      200,
    );
  });

  it('after a restart with an RV jump the informer recovers through a 410 and a relist, with no duplicate adds (check 18)', async () => {
    const h = await startHarness({ kubelet: false });
    for (const name of ['a', 'b'])
      await h.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name } },
      });
    const i = await restartingInformer(h.kc, h.core);
    onTestFinished(() => i.stop());
    await converged(h, i);
    const rvBefore = h.emulator.store.resourceVersion;
    await waitFor(() => h.emulator.openWatches === 1);
    h.emulator.faults.restart({ rvJump: 5_000_000, connections: 'end' });
    expect(h.emulator.store.resourceVersion).toBeGreaterThanOrEqual(rvBefore + 5_000_000);
    await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'c' } },
    });
    await waitFor(() => i.connects >= 2, { what: 'a relist' });
    await converged(h, i);
    const rewatch = h.emulator.requestLog.find(
      (r) => r.query.includes('watch=true') && r.query.includes(`resourceVersion=${rvBefore}`),
    );
    expect(rewatch).toBeDefined();
    // Every namespace holds kube-root-ca.crt, as on a real cluster.
    expect([...i.adds].sort()).toEqual(['a', 'b', 'c', 'kube-root-ca.crt']);
  });

  it('adds latency to every API request and expires the next watch on demand', async () => {
    const harness = await startHarness({ kubelet: false });
    const { emulator } = harness;
    emulator.faults.setLatency(150);
    const started = Date.now();
    await fetch(`${emulator.url}/api/v1/namespaces`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    emulator.faults.setLatency(0);
    emulator.faults.expireNextWatch();
    const response = await fetch(`${emulator.url}/api/v1/namespaces/default/pods?watch=true`);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({
      type: 'ERROR',
      object: { code: 410, reason: 'Expired' },
    });
  });

  it('exposes the switches over HTTP under /_emulator/', async () => {
    const harness = await startHarness({ kubelet: false });
    const { url } = harness.emulator;
    const control = await fetch(`${url}/_emulator/faults/fail-next`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ count: 1, code: 500 }),
    });
    expect(control.status).toBe(200);
    const failed = await fetch(`${url}/api/v1/namespaces`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ reason: 'InternalError' });
    expect((await fetch(`${url}/api/v1/namespaces`)).status).toBe(200);
    const log = (await (await fetch(`${url}/_emulator/requests`)).json()) as { path: string }[];
    expect(log.some((r) => r.path === '/api/v1/namespaces')).toBe(true);
  });
});
