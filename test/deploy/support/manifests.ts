// Reading the deployment files as the tests need them: the kustomizations under k8s/, their
// resources and patches, and `kustomize build` output from kubectl 1.32's built-in kustomize.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { findKubectl, kubectlMissing } from '../../../src/harness/kubectl.ts';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Reads a repo file as text. */
export function readRepoFile(path: string): string {
  return readFileSync(join(repoRoot, path), 'utf8');
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** Parses a YAML stream; empty documents are dropped. */
export function parseObjects(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as unknown)
    .filter((value): value is KubeObject => typeof value === 'object' && value !== null);
}

interface Kustomization {
  resources?: string[];
  patches?: { path?: string }[];
}

/** Every folder under k8s/ that holds a kustomization.yaml, repo-relative, sorted. */
export function kustomizationDirs(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name === 'kustomization.yaml') found.push(dir);
    }
  };
  walk('k8s');
  return found.sort();
}

function kustomizationOf(dir: string): Kustomization {
  return parseYaml(readRepoFile(join(dir, 'kustomization.yaml'))) as Kustomization;
}

/** YAML files that kustomizations list as `resources` (complete objects), repo-relative. */
export function resourceFiles(): string[] {
  return kustomizationDirs().flatMap((dir) =>
    (kustomizationOf(dir).resources ?? [])
      .map((entry) => join(dir, entry))
      .filter((path) => path.endsWith('.yaml')),
  );
}

/** YAML files that kustomizations list as `patches` (partial objects), repo-relative. */
export function patchFiles(): string[] {
  return kustomizationDirs().flatMap((dir) =>
    (kustomizationOf(dir).patches ?? []).flatMap((patch) =>
      patch.path === undefined ? [] : [join(dir, patch.path)],
    ),
  );
}

/** Every *.yaml file under k8s/, repo-relative. */
export function allYamlFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.yaml')) found.push(join(dir, entry.name));
    }
  };
  walk('k8s');
  return found.sort();
}

/**
 * The kubectl whose built-in kustomize builds the manifests (what `kubectl apply -k` uses):
 * `findKubectl()` — `$KUBECTL`, a kubectl 1.27+ on PATH, or the versioned one beside it. Throws
 * with the reason when there is none (tests that need it are `skipIf(noKubectl)`).
 */
export function kubectlPath(): string {
  const binary = findKubectl();
  if (binary === undefined) throw new Error(`kubectl is needed: ${kubectlMissing()}`);
  return binary.path;
}

const builds = new Map<string, KubeObject[]>();

/** `kubectl kustomize <dir>`, parsed (cached per run). */
export function kustomizeBuild(dir: string): KubeObject[] {
  let objects = builds.get(dir);
  if (objects === undefined) {
    const text = execFileSync(kubectlPath(), ['kustomize', join(repoRoot, dir)], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    objects = parseObjects(text);
    builds.set(dir, objects);
  }
  return objects;
}

/**
 * The one object of a kind and name, allowing for what kustomize adds: a one-word name prefix
 * (`ts-cluster-manager`) and a hash suffix (`cluster-manager-config-5f8k2`).
 */
export function findObject(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`^([a-z0-9]+-)?${escaped}(-[a-z0-9]+)?$`);
  const found = objects.filter((o) => o.kind === kind && pattern.test(o.metadata.name));
  const exact = found.filter((o) => o.metadata.name === name);
  const chosen = exact.length === 1 ? exact : found;
  if (chosen.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${chosen.length}`);
  return chosen[0]!;
}

/** A repo-relative path for messages. */
export function repoPath(path: string): string {
  return relative(repoRoot, join(repoRoot, path));
}

// ---- Pod templates, typed just enough for the checks ----

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
  };
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: {
    name: string;
    emptyDir?: { medium?: string };
    secret?: { secretName: string };
    configMap?: { name: string };
  }[];
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    seccompProfile?: { type: string };
  };
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
}

interface Workload extends KubeObject {
  spec: {
    replicas?: number;
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

/** The workloads (Deployments, StatefulSets) of a build. */
export function workloads(objects: readonly KubeObject[]): Workload[] {
  return objects.filter((o): o is Workload => o.kind === 'Deployment' || o.kind === 'StatefulSet');
}

export function podSpecOf(object: KubeObject): PodSpec {
  return (object as Workload).spec.template.spec;
}

export function containerOf(object: KubeObject, name: string): Container {
  const container = podSpecOf(object).containers.find((c) => c.name === name);
  if (container === undefined) throw new Error(`${object.metadata.name} has no container ${name}`);
  return container;
}

/** The string data of a Secret or ConfigMap (base64 `data` decoded for Secrets). */
export function stringData(object: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  const data = (object.data ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(data))
    out[key] = object.kind === 'Secret' ? Buffer.from(value, 'base64').toString('utf8') : value;
  Object.assign(out, (object.stringData ?? {}) as Record<string, string>);
  return out;
}

/** The kustomizations that are meant to be applied as a whole (not only composed). */
export const DEPLOYABLE = ['k8s/base', 'k8s/overlays/dev', 'k8s/overlays/pocket-v1'] as const;
