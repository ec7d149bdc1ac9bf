// Conformance check 16: a client-node 2.x informer on a resource with no changes lives through its
// own client-side aborts (client-node's Watch ends a watch that was quiet for `requestTimeoutMs`,
// 30 s by default: `dist/watch.js`, `resetTimer`), re-watching from its last RV without a relist,
// an error or a lost object. The abort's period is the Watch's public `requestTimeoutMs`, set here
// to 2 s so that three watches take seconds, not a minute; INFORMER_SOAK_TIMEOUT_MS=30000 runs it
// with client-node's default (about 65 s).
import { ListWatch, Watch, type V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startHarness } from './harness.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';

const CLIENT_TIMEOUT_MS = Number(process.env.INFORMER_SOAK_TIMEOUT_MS ?? 2_000);
const PATH = '/api/v1/namespaces/default/configmaps';

describe('informer soak', () => {
  it(
    `keeps a consistent cache across its ${CLIENT_TIMEOUT_MS} ms client aborts, re-watching once per abort from its last RV (check 16)`,
    { timeout: CLIENT_TIMEOUT_MS * 3 + 30_000 },
    async () => {
      const h = await startHarness({ kubelet: false });
      await h.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'a' } },
      });
      const watch = new Watch(h.kc);
      // Declared `private` in client-node 2.x's types, read by every watch() call (dist/watch.js).
      // Were it renamed, the 30 s default would apply and the wait below would time out.
      Object.assign(watch, { requestTimeoutMs: CLIENT_TIMEOUT_MS });
      const informer = new ListWatch<V1ConfigMap>(
        PATH,
        watch,
        () => h.core.listNamespacedConfigMap({ namespace: 'default' }),
        false,
      );
      let errors = 0;
      let deletes = 0;
      informer.on('error', () => errors++);
      informer.on('delete', () => deletes++);
      const watches = () =>
        h.emulator.requestLog.filter((r) => r.path === PATH && r.query.includes('watch=true'));
      await informer.start();
      try {
        const opened = Date.now();
        // Two aborts: the third watch opens after the second abort.
        await waitFor(
          () => (watches().length >= 3 ? true : pending(`${watches().length} watches opened`)),
          { what: 'the informer to re-watch twice', timeoutMs: CLIENT_TIMEOUT_MS * 3 + 15_000 },
        );
        const seen = watches();
        // Each re-watch waited out a whole quiet period: no tight loop, no early abort.
        for (let i = 1; i < seen.length; i++)
          expect(seen[i]!.at - seen[i - 1]!.at).toBeGreaterThanOrEqual(CLIENT_TIMEOUT_MS * 0.9);
        expect(Date.now() - opened).toBeGreaterThanOrEqual(CLIENT_TIMEOUT_MS * 1.8);
        expect(seen.slice(1).every((r) => /resourceVersion=\d+/.test(r.query))).toBe(true);
        const lists = h.emulator.requestLog.filter(
          (r) => r.method === 'GET' && r.path === PATH && !r.query.includes('watch=true'),
        );
        expect(lists).toHaveLength(1);
        expect(errors).toBe(0);
        expect(deletes).toBe(0);
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
