// The OpenAPI definitions of the Kubernetes types (generated from proto/k8s by
// scripts/protoc-gen-k8s-openapi.ts), with the group-version-kind extensions of the kinds the
// emulator serves; loaded on first use.
import { readFileSync } from 'node:fs';
import { isObject, type JsonObject } from '../json.ts';
import { apiVersionOf, kinds } from '../kinds.ts';

export type Definitions = Record<string, JsonObject>;

const GVK = 'x-kubernetes-group-version-kind';

/** The proto package of a group version as kube-openapi names definitions. */
function definitionPrefix(group: string, version: string): string {
  if (group === 'meta.k8s.io') return 'io.k8s.apimachinery.pkg.apis.meta.v1';
  return `io.k8s.api.${group === '' ? 'core' : (group.split('.')[0] ?? group)}.${version}`;
}

/** The definition name of a served kind (`io.k8s.api.apps.v1.StatefulSet`). */
export function definitionOf(group: string, version: string, kind: string): string {
  return `${definitionPrefix(group, version)}.${kind}`;
}

let loaded: Definitions | undefined;

/** Every definition, with `x-kubernetes-group-version-kind` on the served kinds and lists. */
export function definitions(): Definitions {
  if (loaded !== undefined) return loaded;
  const raw = JSON.parse(
    readFileSync(new URL('../protobuf/gen/openapi-definitions.json', import.meta.url), 'utf8'),
  ) as Definitions;
  const add = (name: string, group: string, version: string, kind: string): void => {
    const definition = raw[name];
    if (definition === undefined) return;
    const list = Array.isArray(definition[GVK]) ? (definition[GVK] as JsonObject[]) : [];
    if (!list.some((gvk) => gvk.group === group && gvk.kind === kind && gvk.version === version))
      list.push({ group, kind, version });
    definition[GVK] = list;
  };
  for (const info of kinds) {
    for (const kind of [info.kind, `${info.kind}List`])
      add(definitionOf(info.group, info.version, kind), info.group, info.version, kind);
  }
  add('io.k8s.api.autoscaling.v1.Scale', 'autoscaling', 'v1', 'Scale');
  const meta = 'io.k8s.apimachinery.pkg.apis.meta.v1';
  add(`${meta}.Status`, '', 'v1', 'Status');
  add(`${meta}.DeleteOptions`, '', 'v1', 'DeleteOptions');
  add(`${meta}.WatchEvent`, '', 'v1', 'WatchEvent');
  for (const info of kinds) {
    add(`${meta}.DeleteOptions`, info.group, info.version, 'DeleteOptions');
    add(`${meta}.WatchEvent`, info.group, info.version, 'WatchEvent');
  }
  loaded = raw;
  return raw;
}

/** The names a definition refers to, transitively (itself included). */
export function closure(names: readonly string[]): Set<string> {
  const all = definitions();
  const seen = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isObject(value)) return;
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') enter(item.replace('#/definitions/', ''));
      else visit(item);
    }
  };
  const enter = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    visit(all[name]);
  };
  for (const name of names) enter(name);
  return seen;
}

/** The definitions of the served kinds of one group version (and what they refer to). */
export function groupVersionDefinitions(group: string, version: string): string[] {
  const served = kinds.filter((info) => info.group === group && info.version === version);
  const roots = served.flatMap((info) => [
    definitionOf(group, version, info.kind),
    definitionOf(group, version, `${info.kind}List`),
  ]);
  if (served.some((info) => info.subresources.includes('scale')))
    roots.push('io.k8s.api.autoscaling.v1.Scale');
  roots.push(
    'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
    'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
    'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent',
  );
  return [...closure(roots)].filter((name) => definitions()[name] !== undefined).sort();
}

export { apiVersionOf };
