// Strategic merge patch (`application/strategic-merge-patch+json`) with the merge keys of the
// built-in kinds and the directives kubectl sends ($patch, $setElementOrder, $retainKeys,
// $deleteFromPrimitiveList).
import { clone, deepEqual, isObject, type JsonObject } from '../json.ts';
import { ApiError } from '../status-errors.ts';

/**
 * The patch merge key of a list, from the Go struct tags of the API types
 * (`patchStrategy:"merge" patchMergeKey:"…"`). `path` holds field names only, no indexes.
 * Lists without a key are replaced whole.
 */
export function mergeKeyFor(path: readonly string[]): string | undefined {
  const field = path.at(-1);
  switch (field) {
    case 'containers':
    case 'initContainers':
    case 'ephemeralContainers':
    case 'env':
    case 'volumes':
    case 'imagePullSecrets':
    case 'resourceClaims':
      return 'name';
    case 'ports':
      // Container ports merge by containerPort; a Service's by port.
      return path.includes('containers') || path.includes('initContainers')
        ? 'containerPort'
        : 'port';
    case 'volumeMounts':
      return 'mountPath';
    case 'volumeDevices':
      return 'devicePath';
    case 'conditions':
      return 'type';
    case 'ownerReferences':
      return 'uid';
    case 'hostAliases':
      return 'ip';
    case 'topologySpreadConstraints':
      return 'topologyKey';
    case undefined:
    default:
      return undefined;
  }
}

/** Lists of scalars merged as sets (`patchStrategy:"merge"` on a primitive list). */
function isSetList(path: readonly string[]): boolean {
  return path.at(-1) === 'finalizers';
}

const DELETE = Symbol('delete');
const ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

function invalidPatch(message: string): ApiError {
  return new ApiError({ code: 422, reason: 'Invalid', message, details: {} });
}

/** Puts the elements named in `order` first, in that order; the rest keep their places after. */
function reorder(list: unknown[], order: unknown, key: string | undefined): unknown[] {
  if (!Array.isArray(order)) return list;
  const identity = (item: unknown): unknown =>
    key !== undefined && isObject(item) ? item[key] : item;
  const wanted: unknown[] = order.map(identity);
  const rank = (item: unknown): number => {
    const index = wanted.findIndex((value) => deepEqual(value, identity(item)));
    return index === -1 ? wanted.length : index;
  };
  return list
    .map((item, position) => ({ item, position, rank: rank(item) }))
    .sort((a, b) => a.rank - b.rank || a.position - b.position)
    .map((entry) => entry.item);
}

function mergeList(
  original: unknown,
  patch: readonly unknown[],
  path: readonly string[],
  order: unknown,
): unknown[] {
  const key = mergeKeyFor(path);
  const base: unknown[] = Array.isArray(original) ? original : [];
  if (patch.some((item) => isObject(item) && item.$patch === 'replace')) {
    return patch
      .filter((item) => !(isObject(item) && item.$patch === 'replace'))
      .map((item) => mergeValue(undefined, item, path));
  }
  if (key === undefined) {
    if (!isSetList(path)) return patch.map((item) => mergeValue(undefined, item, path));
    const union: unknown[] = [...base];
    for (const item of patch)
      if (!union.some((existing) => deepEqual(existing, item))) union.push(item);
    return reorder(union, order, undefined);
  }
  let result: unknown[] = [...base];
  for (const item of patch) {
    if (!isObject(item)) throw invalidPatch(`list ${path.join('.')} needs objects with "${key}"`);
    const id = item[key];
    if (item.$patch === 'delete') {
      result = result.filter((existing) => !(isObject(existing) && deepEqual(existing[key], id)));
      continue;
    }
    const index = result.findIndex(
      (existing) => isObject(existing) && deepEqual(existing[key], id),
    );
    const merged = mergeMap(index === -1 ? undefined : result[index], item, path);
    if (merged === DELETE) {
      if (index !== -1) result.splice(index, 1);
    } else if (index === -1) result.push(merged);
    else result[index] = merged;
  }
  return reorder(result, order, key);
}

function mergeValue(original: unknown, patch: unknown, path: readonly string[]): unknown {
  if (isObject(patch)) {
    const merged = mergeMap(original, patch, path);
    return merged === DELETE ? undefined : merged;
  }
  if (Array.isArray(patch)) return mergeList(undefined, patch, path, undefined);
  return clone(patch);
}

function mergeMap(
  original: unknown,
  patch: JsonObject,
  path: readonly string[],
): JsonObject | typeof DELETE {
  const directive = patch.$patch;
  if (directive === 'delete') return DELETE;
  if (directive === 'replace') {
    const { $patch: _directive, ...rest } = patch;
    return mergeMap(undefined, rest, path);
  }
  const result: JsonObject = isObject(original) ? { ...original } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(ORDER)) continue;
    if (key.startsWith(DELETE_FROM)) {
      const field = key.slice(DELETE_FROM.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(value)) {
        result[field] = current.filter((item) => !value.some((gone) => deepEqual(gone, item)));
      }
      continue;
    }
    const childPath = [...path, key];
    if (value === null) Reflect.deleteProperty(result, key);
    else if (isObject(value)) {
      const merged = mergeMap(result[key], value, childPath);
      if (merged === DELETE) Reflect.deleteProperty(result, key);
      else result[key] = merged;
    } else if (Array.isArray(value)) {
      result[key] = mergeList(result[key], value, childPath, patch[ORDER + key]);
    } else result[key] = value;
  }
  // An order given for a list the patch does not otherwise touch still reorders it.
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(ORDER)) continue;
    const field = key.slice(ORDER.length);
    const current = result[field];
    if (Array.isArray(current) && !Object.hasOwn(patch, field)) {
      result[field] = reorder(current, order, mergeKeyFor([...path, field]));
    }
  }
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result))
      if (!retain.includes(key)) Reflect.deleteProperty(result, key);
  }
  return result;
}

/** Applies a strategic merge patch to a copy of `original`. The result holds no directives. */
export function applyStrategicMergePatch(original: unknown, patch: unknown): unknown {
  if (!isObject(patch)) throw invalidPatch('a strategic merge patch must be a JSON object');
  const merged = mergeMap(clone(original), patch, []);
  return merged === DELETE ? {} : merged;
}
