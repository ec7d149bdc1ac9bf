// Every manifest, as a file and as `kustomize build` output, is valid Kubernetes: checked against
// the Kubernetes OpenAPI schemas (kubernetes-models, compiled ajv validators) and, like kubectl's
// strict field validation, free of fields the API does not define (@kubernetes/client-node's
// OpenAPI-generated models). Offline: both packages come with `npm ci`.
import * as kubeModels from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  allYamlFiles,
  kustomizationDirs,
  kustomizeBuild,
  parseObjects,
  patchFiles,
  readRepoFile,
  resourceFiles,
  type KubeObject,
} from './support/manifests.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

/** The kubernetes-models module of an apiVersion and kind, e.g. `kubernetes-models/apps/v1/Deployment`. */
function modelPath(object: KubeObject): string {
  const [group, version] = object.apiVersion.includes('/')
    ? object.apiVersion.split('/')
    : [undefined, object.apiVersion];
  return `kubernetes-models/${group === undefined ? '' : `${group}/`}${version}/${object.kind}`;
}

/** Validates one object against its OpenAPI schema; returns the problems (empty when valid). */
async function schemaProblems(object: KubeObject): Promise<string[]> {
  let model: Record<string, unknown>;
  try {
    model = (await import(modelPath(object))) as Record<string, unknown>;
  } catch {
    return [`no schema for ${object.apiVersion} ${object.kind}`];
  }
  const Model = model[object.kind] as (new (data: unknown) => { validate(): void }) | undefined;
  if (Model === undefined) return [`no model class ${object.kind} in ${modelPath(object)}`];
  try {
    new Model(object).validate();
    return [];
  } catch (error: unknown) {
    return [error instanceof Error ? error.message : String(error)];
  }
}

interface AttributeType {
  baseName: string;
  type: string;
}
type ModelClass = { getAttributeTypeMap(): AttributeType[] };

function modelClass(typeName: string): ModelClass | undefined {
  const candidate = (kubeModels as unknown as Record<string, unknown>)[typeName];
  return typeof candidate === 'function' && 'getAttributeTypeMap' in candidate
    ? (candidate as unknown as ModelClass)
    : undefined;
}

/** Fields that the API's schema does not define, as JSON paths (kubectl --validate=strict). */
function unknownFields(value: unknown, typeName: string, path: string): string[] {
  if (value === null || value === undefined) return [];
  const array = /^Array<(.+)>$/.exec(typeName);
  if (array?.[1] !== undefined) {
    const element = array[1];
    return Array.isArray(value)
      ? value.flatMap((item, index) => unknownFields(item, element, `${path}[${index}]`))
      : [];
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(typeName);
  if (map?.[1] !== undefined) {
    const element = map[1];
    return typeof value === 'object'
      ? Object.entries(value).flatMap(([key, item]) =>
          unknownFields(item, element, `${path}.${key}`),
        )
      : [];
  }
  const model = modelClass(typeName);
  if (model === undefined || typeof value !== 'object') return [];
  const attributes = model.getAttributeTypeMap();
  return Object.entries(value).flatMap(([key, item]) => {
    const attribute = attributes.find((a) => a.baseName === key);
    return attribute === undefined
      ? [`${path}.${key}`]
      : unknownFields(item, attribute.type, `${path}.${key}`);
  });
}

function strictProblems(object: KubeObject): string[] {
  const typeName = `V1${object.kind}`;
  if (modelClass(typeName) === undefined) return [`no client model ${typeName}`];
  return unknownFields(object, typeName, object.kind).map((field) => `unknown field ${field}`);
}

async function problemsOf(objects: readonly KubeObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const object of objects) {
    const label = `${object.kind} ${object.metadata.name}`;
    for (const problem of [...(await schemaProblems(object)), ...strictProblems(object)])
      problems.push(`${label}: ${problem}`);
  }
  return problems;
}

describe('the validator itself', () => {
  it('rejects a wrong type, a missing required field and an unknown field', async () => {
    const [bad] = parseObjects(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
        - name: c
          image: i
          ports: [{containerPort: "http"}]
          readinessprobe: {httpGet: {path: /, port: 80}}
        - image: nameless
`);
    const problems = await problemsOf([bad!]);
    expect(problems.join('\n')).toMatch(/containerPort must be integer/);
    expect(problems.join('\n')).toMatch(/containers\/1 must have required property name/);
    expect(problems).toContain(
      'Deployment bad: unknown field Deployment.spec.template.spec.containers[0].readinessprobe',
    );
  });
});

describe('every manifest file', () => {
  const patches = new Set(patchFiles());

  it('is either a resource or a patch of some kustomization', () => {
    const listed = new Set([...resourceFiles(), ...patches]);
    const orphans = allYamlFiles().filter(
      (file) => !file.endsWith('/kustomization.yaml') && !listed.has(file),
    );
    expect(orphans).toEqual([]);
  });

  it.each(resourceFiles())('%s is valid against the Kubernetes schemas', async (file) => {
    const objects = parseObjects(readRepoFile(file));
    expect(objects.length).toBeGreaterThan(0);
    expect(await problemsOf(objects)).toEqual([]);
  });

  it.each([...patches])(
    '%s patches a kind the schemas know (checked whole in the build)',
    (file) => {
      for (const object of parseObjects(readRepoFile(file)))
        expect(strictProblems(object)).toEqual([]);
    },
  );
});

describe('kustomize build (kubectl 1.32) of every kustomization', () => {
  it.skipIf(noKubectl).each(kustomizationDirs())(
    '%s builds and every object is valid',
    async (dir) => {
      const objects = kustomizeBuild(dir);
      expect(objects.length).toBeGreaterThan(0);
      expect(await problemsOf(objects)).toEqual([]);
    },
  );
});
