// JSON objects walked by their OpenAPI schema the way structured-merge-diff walks typed values
// (its schema comes from the same definitions, kube-openapi schemaconv): structs and granular
// maps by key, associative lists (`x-kubernetes-list-type: map` with its keys, or the older
// patch-merge-key lists) by their keys, sets by value, everything else — scalars, atomic lists,
// maps and structs (`x-kubernetes-map-type: atomic`) — as one leaf. Gives field sets (what an
// apply owns, what an update changed), merges an applied configuration into a live object and
// removes fields.
import { FieldSet } from './field-sets.ts';
import { clone, deepEqual, isObject, type JsonObject } from '../json.ts';
import { definitions } from '../openapi/openapi-schemas.ts';

type Schema = JsonObject;

type Node =
  | { kind: 'struct'; fields: Record<string, Schema> }
  | { kind: 'map'; values: Schema }
  | { kind: 'assoc'; keys: string[]; item: Schema }
  | { kind: 'set' }
  | { kind: 'leaf' };

function resolve(schema: Schema): Schema {
  let current = schema;
  for (let depth = 0; depth < 8; depth++) {
    const ref =
      typeof current.$ref === 'string'
        ? current.$ref
        : Array.isArray(current.allOf) && isObject(current.allOf[0])
          ? (current.allOf[0].$ref as string | undefined)
          : undefined;
    if (typeof ref !== 'string') return current;
    const next = definitions()[ref.replace('#/definitions/', '')];
    if (next === undefined) return {};
    current = next;
  }
  return current;
}

/** What kind of node a schema (a property's schema, with its list extensions) describes. */
export function nodeOf(schema: Schema): Node {
  if (schema.type === 'array') {
    const item = isObject(schema.items) ? schema.items : {};
    const listType = schema['x-kubernetes-list-type'];
    const mapKeys = schema['x-kubernetes-list-map-keys'];
    if (listType === 'map' && Array.isArray(mapKeys))
      return { kind: 'assoc', keys: mapKeys.map(String), item };
    if (listType === 'set') return { kind: 'set' };
    const strategy = schema['x-kubernetes-patch-strategy'];
    const mergeKey = schema['x-kubernetes-patch-merge-key'];
    if (
      listType === undefined &&
      typeof strategy === 'string' &&
      strategy.includes('merge') &&
      typeof mergeKey === 'string'
    )
      return resolve(item).type === 'object'
        ? { kind: 'assoc', keys: [mergeKey], item }
        : { kind: 'set' };
    return { kind: 'leaf' };
  }
  const resolved = resolve(schema);
  if (resolved.type !== 'object' || resolved['x-kubernetes-map-type'] === 'atomic')
    return { kind: 'leaf' };
  if (isObject(resolved.properties))
    return { kind: 'struct', fields: resolved.properties as Record<string, Schema> };
  if (isObject(resolved.additionalProperties))
    return { kind: 'map', values: resolved.additionalProperties };
  return { kind: 'leaf' };
}

/** The schema of a child of a struct or map node; unknown fields are leaves. */
function childSchema(node: Node, key: string): Schema {
  if (node.kind === 'struct') return node.fields[key] ?? {};
  if (node.kind === 'map') return node.values;
  return {};
}

function itemKey(keys: readonly string[], item: unknown): string {
  const fields: JsonObject = {};
  for (const key of keys) if (isObject(item) && item[key] !== undefined) fields[key] = item[key];
  return `k:${JSON.stringify(fields)}`;
}

interface Entry {
  key: string;
  value: unknown;
  schema: Schema;
}

/** The entries of a node's value, each with its path key and schema. */
function entries(node: Node, value: unknown): Entry[] {
  if ((node.kind === 'struct' || node.kind === 'map') && isObject(value)) {
    return Object.entries(value).map(([name, item]) => ({
      key: `f:${name}`,
      value: item,
      schema: childSchema(node, name),
    }));
  }
  if (node.kind === 'assoc' && Array.isArray(value)) {
    return value.map((item: unknown) => ({
      key: itemKey(node.keys, item),
      value: item,
      schema: node.item,
    }));
  }
  if (node.kind === 'set' && Array.isArray(value)) {
    return value.map((item: unknown) => ({
      key: `v:${JSON.stringify(item)}`,
      value: item,
      schema: {},
    }));
  }
  return [];
}

/**
 * What an applied configuration owns (typed.ToFieldSet): its leaves and the items of its
 * associative lists and sets.
 */
export function appliedSet(schema: Schema, value: unknown, set = new FieldSet()): FieldSet {
  const node = nodeOf(schema);
  for (const entry of entries(node, value)) {
    const child = set.child(entry.key);
    const childNode = nodeOf(entry.schema);
    if (
      node.kind === 'assoc' ||
      node.kind === 'set' ||
      childNode.kind === 'leaf' ||
      entry.value === null
    )
      child.member = true;
    if (childNode.kind !== 'leaf' && node.kind !== 'set')
      appliedSet(entry.schema, entry.value, child);
  }
  return set;
}

/** Every node of a value (what an update that added it now owns). */
function allNodes(schema: Schema, value: unknown, set: FieldSet): void {
  const node = nodeOf(schema);
  for (const entry of entries(node, value)) {
    const child = set.child(entry.key);
    child.member = true;
    if (node.kind !== 'set') allNodes(entry.schema, entry.value, child);
  }
}

/** typed.Compare: paths added, modified (leaf values) and removed between two values. */
export function compare(
  schema: Schema,
  before: unknown,
  after: unknown,
): { changed: FieldSet; removed: FieldSet } {
  const changed = new FieldSet();
  const removed = new FieldSet();
  const walk = (s: Schema, [a, b]: [unknown, unknown], added: FieldSet, gone: FieldSet): void => {
    const node = nodeOf(s);
    const left = new Map(entries(node, a).map((entry) => [entry.key, entry]));
    const right = new Map(entries(node, b).map((entry) => [entry.key, entry]));
    for (const [key, entry] of right) {
      const old = left.get(key);
      const childNode = nodeOf(entry.schema);
      if (old === undefined) {
        const child = added.child(key);
        child.member = true;
        if (node.kind !== 'set') allNodes(entry.schema, entry.value, child);
      } else if (childNode.kind === 'leaf' || node.kind === 'set') {
        if (!deepEqual(old.value, entry.value)) added.child(key).member = true;
      } else walk(entry.schema, [old.value, entry.value], added.child(key), gone.child(key));
    }
    for (const [key, entry] of left) {
      if (right.has(key)) continue;
      const child = gone.child(key);
      child.member = true;
      if (node.kind !== 'set') allNodes(entry.schema, entry.value, child);
    }
  };
  walk(schema, [before, after], changed, removed);
  return { changed, removed };
}

/** typed.Merge: the applied configuration merged into the live object (a new value). */
export function merge(schema: Schema, live: unknown, config: unknown): unknown {
  const node = nodeOf(schema);
  if (node.kind === 'struct' || node.kind === 'map') {
    if (!isObject(config)) return clone(config);
    const out: JsonObject = isObject(live) ? clone(live) : {};
    for (const [key, value] of Object.entries(config)) {
      out[key] = merge(childSchema(node, key), out[key], value);
    }
    return out;
  }
  if ((node.kind === 'assoc' || node.kind === 'set') && Array.isArray(config)) {
    const out: unknown[] = Array.isArray(live) ? clone(live) : [];
    const keyOf = (item: unknown): string =>
      node.kind === 'assoc' ? itemKey(node.keys, item) : `v:${JSON.stringify(item)}`;
    const index = new Map(out.map((item, i) => [keyOf(item), i]));
    for (const item of config) {
      const at = index.get(keyOf(item));
      if (at === undefined) {
        index.set(keyOf(item), out.length);
        out.push(clone(item));
      } else if (node.kind === 'assoc') out[at] = merge(node.item, out[at], item);
    }
    return out;
  }
  return clone(config);
}

/** Removes the member paths of `set` from `value` (in place); returns the value. */
export function removeFields(schema: Schema, value: unknown, set: FieldSet): unknown {
  const node = nodeOf(schema);
  if ((node.kind === 'struct' || node.kind === 'map') && isObject(value)) {
    for (const [key, child] of set.children) {
      const name = key.slice(2);
      if (!key.startsWith('f:') || !(name in value)) continue;
      if (child.member) Reflect.deleteProperty(value, name);
      else removeFields(childSchema(node, name), value[name], child);
    }
    return value;
  }
  if ((node.kind === 'assoc' || node.kind === 'set') && Array.isArray(value)) {
    const keep: unknown[] = [];
    for (const entry of entries(node, value)) {
      const child = set.children.get(entry.key);
      if (child?.member === true) continue;
      if (child !== undefined && node.kind === 'assoc') removeFields(node.item, entry.value, child);
      keep.push(entry.value);
    }
    value.splice(0, value.length, ...keep);
  }
  return value;
}
