// Every namespace gets the `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap, put
// back when deleted (the ConfigMap's data when changed), as the controller manager does.
import { X509Certificate } from 'node:crypto';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { isGone, startHarness } from './harness.ts';

describe('namespace defaults', () => {
  it('gives a new namespace its default ServiceAccount and the CA ConfigMap, and puts them back', async () => {
    const h = await startHarness({ https: true, kubelet: false });
    await h.core.createNamespace({ body: { metadata: { name: 'team' } } });
    const account = await waitFor(
      () =>
        h.core
          .readNamespacedServiceAccount({ name: 'default', namespace: 'team' })
          .catch(() => undefined),
      { what: 'the default ServiceAccount' },
    );
    const ca = await waitFor(
      () =>
        h.core
          .readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: 'team' })
          .catch(() => undefined),
      { what: 'kube-root-ca.crt' },
    );
    // It is the CA that verifies the emulator's serving certificate.
    expect(ca.data?.['ca.crt']).toBe(h.emulator.caCert);
    expect(new X509Certificate(ca.data?.['ca.crt'] ?? '').ca).toBe(true);
    await h.core.deleteNamespacedServiceAccount({ name: 'default', namespace: 'team' });
    const recreated = await waitFor(
      () =>
        h.core
          .readNamespacedServiceAccount({ name: 'default', namespace: 'team' })
          .catch(() => undefined),
      { what: 'the default ServiceAccount again' },
    );
    expect(recreated.metadata?.uid).not.toBe(account.metadata?.uid);
    await h.core.patchNamespacedConfigMap(
      { name: 'kube-root-ca.crt', namespace: 'team', body: { data: { 'ca.crt': 'tampered' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor(
      async () =>
        (await h.core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: 'team' }))
          .data?.['ca.crt'] === h.emulator.caCert,
      { what: 'the CA restored' },
    );
    // The namespaces that exist at start have them too.
    for (const namespace of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      await waitFor(
        () =>
          h.core
            .readNamespacedServiceAccount({ name: 'default', namespace })
            .catch(() => undefined),
        { what: `the default ServiceAccount of ${namespace}` },
      );
    }
    // Deleting the namespace deletes them with it, and nothing recreates them.
    await h.core.deleteNamespace({ name: 'team' });
    await waitFor(() => isGone(() => h.core.readNamespace({ name: 'team' })), {
      what: 'the namespace gone',
    });
    expect(
      (await h.core.listServiceAccountForAllNamespaces()).items.filter(
        (sa) => sa.metadata?.namespace === 'team',
      ),
    ).toEqual([]);
  });
});
