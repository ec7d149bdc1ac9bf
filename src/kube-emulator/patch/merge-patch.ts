// RFC 7386 JSON merge patch (`application/merge-patch+json`).
import { clone, isObject } from '../json.ts';

/** Merges `patch` into a copy of `target`: null deletes a key, objects merge, the rest replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) Reflect.deleteProperty(result, key);
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}
