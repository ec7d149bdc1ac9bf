// JSON value helpers shared by the store, the patch engines and the controllers.

/** A parsed JSON object. */
export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep copy of a JSON value (objects here never hold anything JSON cannot). */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Structural equality of two JSON values; key order does not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
  }
  return false;
}

/** Reads a dotted path (`status.phase`) from a JSON value; undefined when any step is missing. */
export function getPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const step of path) {
    if (!isObject(current)) return undefined;
    current = current[step];
  }
  return current;
}

/** Returns `value[key]` when it is an object, creating it (in place) when it is absent. */
export function child(value: JsonObject, key: string): JsonObject {
  const existing = value[key];
  if (isObject(existing)) return existing;
  const created: JsonObject = {};
  value[key] = created;
  return created;
}

/** `value` when it is an array of objects, else an empty array. */
export function objects(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
