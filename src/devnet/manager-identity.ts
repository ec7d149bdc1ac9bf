// The manager's identity on the devnet, as on a cluster: the ServiceAccount, Role and RoleBinding
// of k8s/base/cluster-manager/ (read from those files, not copied, so that a rule missing there is
// a 403 here too), applied to the devnet's namespace, and a kubeconfig with that account's token.
// The devnet's emulator enforces RBAC, so the manager can do exactly what the Role allows.
import { readFile } from 'node:fs/promises';
import { ApiException, type KubernetesObjectApi } from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { Emulator } from '../kube-emulator/index.ts';

/** The manifests of the manager's identity in k8s/base, applied as they are written there. */
export const MANAGER_IDENTITY_FILES = [
  'service-account.yaml',
  'role.yaml',
  'role-binding.yaml',
] as const;

const BASE = new URL('../../k8s/base/cluster-manager/', import.meta.url);

/** Thrown when k8s/base is not beside src/ (the devnet runs from a checkout of the repository). */
export class ManagerIdentityMissing extends Error {
  override readonly name = 'ManagerIdentityMissing';
}

/** The ServiceAccount name k8s/base gives the manager (service-account.yaml). */
export async function readManagerIdentity(): Promise<{
  account: string;
  manifests: Record<string, unknown>[];
}> {
  const manifests: Record<string, unknown>[] = [];
  for (const file of MANAGER_IDENTITY_FILES) {
    const url = new URL(file, BASE);
    let text: string;
    try {
      text = await readFile(url, 'utf8');
    } catch (error) {
      throw new ManagerIdentityMissing(
        `the devnet applies the manager's RBAC from ${url.pathname}, which cannot be read (${error instanceof Error ? error.message : String(error)}); run the devnet from a checkout of the repository`,
      );
    }
    manifests.push(parse(text) as Record<string, unknown>);
  }
  const account = manifests.find((manifest) => manifest.kind === 'ServiceAccount');
  const name = (account?.metadata as { name?: unknown } | undefined)?.name;
  if (typeof name !== 'string')
    throw new ManagerIdentityMissing('k8s/base/cluster-manager has no ServiceAccount');
  return { account: name, manifests };
}

/**
 * Creates `manifest`, or replaces the object of its name if there is one (a resumed devnet keeps
 * its objects: the Role of this run's k8s/base is the one enforced, as `kubectl apply` would).
 */
async function createOrReplace(
  objects: KubernetesObjectApi,
  manifest: Record<string, unknown>,
): Promise<void> {
  try {
    await objects.create(manifest as never);
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
    const existing: { metadata?: object } = await objects.read(manifest as never);
    await objects.replace({
      ...manifest,
      metadata: { ...(existing.metadata ?? {}), ...(manifest.metadata as object) },
    } as never);
  }
}

/**
 * Creates the manager's ServiceAccount, Role and RoleBinding in `namespace` (as `kubectl apply
 * -n namespace` of k8s/base would) and writes a kubeconfig at `path` with that account's token;
 * returns the path.
 */
export async function applyManagerIdentity(options: {
  objects: KubernetesObjectApi;
  emulator: Emulator;
  namespace: string;
  path: string;
}): Promise<string> {
  const { account, manifests } = await readManagerIdentity();
  for (const manifest of manifests) {
    const metadata = { ...(manifest.metadata as Record<string, unknown>) };
    metadata.namespace = options.namespace;
    await createOrReplace(options.objects, { ...manifest, metadata });
  }
  return options.emulator.writeKubeconfig(options.path, {
    namespace: options.namespace,
    token: options.emulator.issueToken(options.namespace, account),
  });
}
