// metadata.managedFields and server-side apply, after structured-merge-diff's Updater
// (merge/update.go: Update and Apply) as the apiserver's field manager runs it
// (k8s.io/apimachinery/pkg/util/managedfields/internal, v0.32.4): an update gives its manager
// the fields it changed and takes them from everyone else; an apply merges its configuration,
// conflicts (409) with other managers that own a field it would change unless forced, owns
// exactly what it applied, and removes the fields it applied before and no longer applies that
// nobody else owns. Identity fields of metadata are never owned (stripmeta.go); status belongs
// to the status subresource, spec.replicas of a Scale write to the scale subresource.
import { rfc3339 } from '../clock.ts';
import { FieldSet, pathString } from './field-sets.ts';
import { clone, isObject, type JsonObject } from '../json.ts';
import { apiVersionOf, type KindInfo } from '../kinds.ts';
import { definitionOf, definitions } from '../openapi/openapi-schemas.ts';
import { decodeMessage } from '../protobuf/codec.ts';
import { messageFor } from '../protobuf/registry.ts';
import { ApiError } from '../status-errors.ts';
import { appliedSet, compare, merge, removeFields } from './typed-values.ts';
import type { KubeObject } from '../types.ts';

interface Entry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

interface Managed {
  entry: Omit<Entry, 'fieldsV1' | 'fieldsType'>;
  set: FieldSet;
}

/** Fields nobody owns (stripmeta.go), plus apiVersion and kind. */
const STRIPPED = [
  'name',
  'namespace',
  'creationTimestamp',
  'selfLink',
  'uid',
  'generation',
  'managedFields',
  'resourceVersion',
];

function schemaOf(info: KindInfo): JsonObject {
  return definitions()[definitionOf(info.group, info.version, info.kind)] ?? {};
}

/** The part of a field set a write to `subresource` may own. */
function restrict(set: FieldSet, info: KindInfo, subresource: string | undefined): FieldSet {
  set.children.delete('f:apiVersion');
  set.children.delete('f:kind');
  const meta = set.children.get('f:metadata');
  if (meta !== undefined) for (const field of STRIPPED) meta.children.delete(`f:${field}`);
  if (subresource === 'status') {
    for (const key of [...set.children.keys()]) if (key !== 'f:status') set.children.delete(key);
  } else if (subresource === 'scale') {
    const replicas = set.children.get('f:spec')?.children.get('f:replicas');
    set.children.clear();
    if (replicas !== undefined) set.child('f:spec').children.set('f:replicas', replicas);
  } else if (info.subresources.includes('status')) set.children.delete('f:status');
  return set;
}

/** BuildManagerIdentifier: appliers are one manager whatever apiVersion they applied. */
function identity(entry: Managed['entry']): string {
  return JSON.stringify([
    entry.manager,
    entry.operation,
    entry.operation === 'Apply' ? '' : entry.apiVersion,
    entry.subresource ?? '',
  ]);
}

function decode(object: KubeObject): Map<string, Managed> {
  const managed = new Map<string, Managed>();
  const list = Array.isArray(object.metadata.managedFields) ? object.metadata.managedFields : [];
  for (const raw of list) {
    if (!isObject(raw) || typeof raw.manager !== 'string') continue;
    const entry: Managed['entry'] = {
      manager: raw.manager,
      operation: raw.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: typeof raw.apiVersion === 'string' ? raw.apiVersion : '',
      ...(typeof raw.time === 'string' ? { time: raw.time } : {}),
      ...(typeof raw.subresource === 'string' && raw.subresource !== ''
        ? { subresource: raw.subresource }
        : {}),
    };
    managed.set(identity(entry), { entry, set: FieldSet.fromFieldsV1(raw.fieldsV1) });
  }
  return managed;
}

/** sortEncodedManagedFields: by operation, time, manager, apiVersion, subresource. */
function encode(managed: Map<string, Managed>): Entry[] {
  const entries: Entry[] = [];
  for (const { entry, set } of managed.values()) {
    if (set.isEmpty()) continue;
    entries.push({
      manager: entry.manager,
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      ...(entry.time === undefined ? {} : { time: entry.time }),
      fieldsType: 'FieldsV1',
      fieldsV1: set.toFieldsV1(),
      ...(entry.subresource === undefined ? {} : { subresource: entry.subresource }),
    });
  }
  const seconds = (entry: Entry): number => (entry.time === undefined ? 0 : Date.parse(entry.time));
  return entries.sort(
    (p, q) =>
      p.operation.localeCompare(q.operation) ||
      seconds(p) - seconds(q) ||
      p.manager.localeCompare(q.manager) ||
      p.apiVersion.localeCompare(q.apiVersion) ||
      (p.subresource ?? '').localeCompare(q.subresource ?? ''),
  );
}

export interface WriteContext {
  info: KindInfo;
  manager: string;
  subresource: string | undefined;
  now: number;
}

/**
 * The Go zero value of a kind in JSON: what a create is compared with. Non-pointer structs are
 * there (`metadata`, `spec`, `template`), so a create does not own them as nodes, while maps and
 * pointer structs are not (a create owns `data` and `rollingUpdate` as nodes: `.`).
 */
function zeroValue(info: KindInfo): JsonObject {
  const message = messageFor(apiVersionOf(info), info.kind);
  return message === undefined ? {} : decodeMessage(message, new Uint8Array());
}

/**
 * An Update operation (create, update, non-apply patch): `after` gets the managedFields of
 * `before` with the changes credited to the manager.
 */
export function recordUpdate(
  context: WriteContext,
  before: KubeObject | undefined,
  after: KubeObject,
): void {
  const { info, manager, subresource } = context;
  const managed = before === undefined ? new Map<string, Managed>() : decode(before);
  const { changed, removed } = compare(schemaOf(info), before ?? zeroValue(info), after);
  const owned = restrict(changed, info, subresource);
  for (const item of managed.values()) {
    item.set = item.set.difference(owned).difference(removed);
  }
  const entry: Managed['entry'] = {
    manager,
    operation: 'Update',
    apiVersion: apiVersionOf(info),
    ...(subresource === undefined ? {} : { subresource }),
  };
  const key = identity(entry);
  const mine = managed.get(key);
  if (!owned.isEmpty()) {
    managed.set(key, {
      entry: { ...entry, time: rfc3339(context.now) },
      set: mine === undefined ? owned : mine.set.union(owned),
    });
  }
  after.metadata.managedFields = encode(managed);
}

function conflictError(conflicts: { manager: Managed['entry']; path: string[] }[]): ApiError {
  const describe = (entry: Managed['entry']): string => {
    let text = JSON.stringify(entry.manager);
    if (entry.subresource !== undefined)
      text += ` with subresource ${JSON.stringify(entry.subresource)}`;
    if (entry.operation === 'Update') text += ` using ${entry.apiVersion}`;
    return text;
  };
  let message: string;
  const first = conflicts[0];
  if (conflicts.length === 1 && first !== undefined) {
    message = `Apply failed with 1 conflict: conflict with ${describe(first.manager)}: ${pathString(first.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const conflict of conflicts) {
      const name = describe(conflict.manager);
      byManager.set(name, [...(byManager.get(name) ?? []), pathString(conflict.path)]);
    }
    const lines: string[] = [];
    for (const name of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${name}:`);
      for (const path of byManager.get(name) ?? []) lines.push(`- ${path}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError({
    code: 409,
    reason: 'Conflict',
    message,
    details: {
      causes: conflicts.map((conflict) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with ${describe(conflict.manager)}`,
        field: pathString(conflict.path),
      })),
    },
  });
}

/**
 * A server-side apply of `config` by `manager` onto `live` (a stored object in the served
 * form): the new object with its managedFields, or a 409 naming every conflict.
 */
export function applyConfiguration(
  context: WriteContext & { force: boolean },
  live: KubeObject,
  config: KubeObject,
): KubeObject {
  const { info, manager, subresource } = context;
  const schema = schemaOf(info);
  const managed = decode(live);
  const entry: Managed['entry'] = {
    manager,
    operation: 'Apply',
    apiVersion: apiVersionOf(info),
    time: rfc3339(context.now),
    ...(subresource === undefined ? {} : { subresource }),
  };
  const key = identity(entry);
  const lastSet = managed.get(key)?.set ?? new FieldSet();
  const appliedConfig = clone(config) as JsonObject;
  delete appliedConfig.status;
  const mergedFirst = merge(schema, live, appliedConfig) as KubeObject;
  const { changed } = compare(schema, live, mergedFirst);
  const touched = restrict(changed, info, subresource);
  const conflicts: { manager: Managed['entry']; path: string[] }[] = [];
  for (const [otherKey, other] of managed) {
    if (otherKey === key) continue;
    const clash = other.set.intersection(touched);
    for (const path of clash.paths()) conflicts.push({ manager: other.entry, path });
  }
  if (conflicts.length > 0 && !context.force) throw conflictError(conflicts);
  for (const [otherKey, other] of managed)
    if (otherKey !== key) other.set = other.set.difference(touched);
  const newSet = restrict(appliedSet(schema, appliedConfig), info, subresource);
  managed.set(key, { entry, set: newSet });
  // Fields this manager applied before and no longer applies, and nobody else owns, go.
  let everyone = new FieldSet();
  for (const item of managed.values()) everyone = everyone.union(item.set);
  const prune = lastSet.difference(everyone);
  const result = removeFields(schema, mergedFirst, prune) as KubeObject;
  const { removed } = compare(schema, live, result);
  for (const [otherKey, other] of managed)
    if (otherKey !== key) other.set = other.set.difference(removed);
  result.metadata.managedFields = encode(managed);
  return result;
}
