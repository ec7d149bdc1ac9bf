// What `--resume` does with the cluster the emulator read back from `<dir>/emulator/objects.json`
// (src/kube-emulator/persistence.ts): the objects stay as the last run left them — the
// StatefulSets' replicas and annotations, the claims (same uids: the nodes' data folders), the
// keys Secret — and only what belongs to this run is written: the manager's new token, and the
// manager's URL in the validators' preStop environment should its port have changed. A fresh
// devnet creates every object.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiException,
  type KubernetesObject,
  type KubernetesObjectApi,
} from '@kubernetes/client-node';
import { MANAGER_TOKEN_SECRET, VALIDATOR_STATEFULSET } from './manifests.ts';

type Json = Record<string, unknown>;

/** The file the devnet's emulator keeps its objects in (inside its folder). */
export function objectsFile(emulatorDir: string): string {
  return join(emulatorDir, 'objects.json');
}

/**
 * Why a folder whose chain is saved cannot be resumed, or undefined when it can: its objects must
 * have been kept (a folder of a devnet older than this, or one killed before its first write,
 * has none).
 */
export function notResumable(dir: string, emulatorDir: string): string | undefined {
  if (existsSync(objectsFile(emulatorDir))) return undefined;
  return `--resume: ${dir} holds the chain but not the cluster of its last run (${objectsFile(emulatorDir)} is missing: a devnet of an older version, or one killed before it wrote it); start without --resume for a fresh devnet`;
}

function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

/**
 * Writes this run's manifests: all of them for a fresh devnet; for a resumed one, those missing,
 * the token Secret (a new token every run), and the validators' manager URL if it changed.
 */
export async function applyManifests(
  objects: KubernetesObjectApi,
  manifests: readonly Json[],
  options: { resumed: boolean; log: (line: string) => void },
): Promise<void> {
  for (const manifest of manifests) {
    const spec = manifest as KubernetesObject;
    if (!options.resumed) {
      await objects.create(spec);
      continue;
    }
    const existing = await objects.read(spec as never).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    if (existing === undefined) await objects.create(spec);
    else if (spec.kind === 'Secret' && spec.metadata?.name === MANAGER_TOKEN_SECRET)
      await objects.replace({
        ...existing,
        stringData: (manifest as { stringData?: unknown }).stringData,
      } as never);
    else if (spec.kind === 'StatefulSet' && spec.metadata?.name === VALIDATOR_STATEFULSET)
      await followManagerUrl(objects, existing as Json, manifest, options.log);
  }
}

/** The value of env `name` of a StatefulSet's first container (and that env list). */
function managerUrlOf(statefulSet: Json): { env: Json[]; at: number } | undefined {
  const env = (
    statefulSet as { spec?: { template?: { spec?: { containers?: { env?: Json[] }[] } } } }
  ).spec?.template?.spec?.containers?.[0]?.env;
  if (env === undefined) return undefined;
  return { env, at: env.findIndex((e) => e.name === 'CLUSTER_MANAGER_URL') };
}

/**
 * The validators' preStop hook asks the manager at the URL in their environment: a manager on
 * another port this run means a new template, which the StatefulSet rolls out pod by pod.
 */
async function followManagerUrl(
  objects: KubernetesObjectApi,
  existing: Json,
  manifest: Json,
  log: (line: string) => void,
): Promise<void> {
  const was = managerUrlOf(existing);
  const now = managerUrlOf(manifest);
  const value = now === undefined || now.at < 0 ? undefined : now.env[now.at]?.value;
  const wanted = typeof value === 'string' ? value : undefined;
  if (was === undefined || was.at < 0 || wanted === undefined) return;
  const before = was.env[was.at]?.value;
  if (before === wanted) return;
  was.env[was.at] = { name: 'CLUSTER_MANAGER_URL', value: wanted };
  await objects.replace(existing as never);
  log(
    `the manager listens at ${wanted} this time (was ${String(before)}): the validators restart one by one to take the new URL`,
  );
}
