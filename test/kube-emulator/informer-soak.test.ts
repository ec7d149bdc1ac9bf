// Conformance check 16: a client-node 2.x informer open for over 60 s with no changes lives
// through its own 30 s client aborts, re-watching from its last RV. Slow by nature (65 s), so
// it sits alone in this file and runs beside the others.

import { makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startHarness } from './harness.ts';
import { waitFor } from '../../src/harness/wait.ts';

describe('informer soak', () => {
  it(
    'keeps a consistent cache across the 30 s client aborts, re-watching about every 30 s (check 16)',
    { timeout: 90_000 },
    async () => {
      const h = await startHarness({ kubelet: false });
      await h.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'a' } },
      });
      const informer = makeInformer(h.kc, '/api/v1/namespaces/default/configmaps', () =>
        h.core.listNamespacedConfigMap({ namespace: 'default' }),
      );
      let errors = 0;
      let deletes = 0;
      informer.on('error', () => errors++);
      informer.on('delete', () => deletes++);
      await informer.start();
      try {
        const opened = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 62_000)); // the subject of the test is the passage of time
        const watches = h.emulator.requestLog.filter(
          (r) =>
            r.path === '/api/v1/namespaces/default/configmaps' && r.query.includes('watch=true'),
        );
        expect(watches.length).toBeGreaterThanOrEqual(3);
        expect(watches.length).toBeLessThanOrEqual(4);
        for (let i = 1; i < watches.length; i++)
          expect(watches[i]!.at - watches[i - 1]!.at).toBeGreaterThanOrEqual(29_000);
        expect(watches.slice(1).every((r) => /resourceVersion=\d+/.test(r.query))).toBe(true);
        const lists = h.emulator.requestLog.filter(
          (r) =>
            r.method === 'GET' &&
            r.path === '/api/v1/namespaces/default/configmaps' &&
            !r.query.includes('watch=true'),
        );
        expect(lists).toHaveLength(1);
        expect(errors).toBe(0);
        expect(deletes).toBe(0);
        expect(Date.now() - opened).toBeGreaterThan(60_000);
        await h.core.createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: 'b' } },
        });
        await waitFor(() => informer.get('b', 'default') !== undefined);
        expect(
          informer
            .list('default')
            .map((c: V1ConfigMap) => c.metadata?.name)
            .sort(),
        ).toEqual(['a', 'b', 'kube-root-ca.crt']);
      } finally {
        await informer.stop();
      }
    },
  );
});
