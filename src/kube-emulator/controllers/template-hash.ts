// A short, stable hash of a pod template (revision names, `pod-template-hash` labels), and the
// canonical JSON it is computed over: keys sorted at every level, so that the same template
// hashes the same whatever order a client wrote its fields in.
import { createHash } from 'node:crypto';
import { SUFFIX_ALPHABET } from '../names.ts';

/** JSON with object keys sorted recursively (what Go's json.Marshal of a map writes). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

/**
 * A template as Go's semantic equality sees it (apimachinery equality.Semantic): null fields,
 * empty lists and empty maps are the same as absent ones. A template that went through a Go
 * client comes back with `creationTimestamp: null` and such; it is still the same template.
 */
export function semantic(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(semantic);
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .map(([k, v]) => [k, semantic(v)] as const)
      .filter(([, v]) => v !== undefined);
    return entries.length === 0 ? undefined : Object.fromEntries(entries);
  }
  return value === null ? undefined : value;
}

/** Whether two templates are the same in Go's semantic sense. */
export function sameTemplate(a: unknown, b: unknown): boolean {
  return canonicalJson(semantic(a) ?? {}) === canonicalJson(semantic(b) ?? {});
}

/** `collisionCount` changes the hash as the controllers' hash functions do on a name clash. */
export function templateHash(template: unknown, length = 10, collisionCount = 0): string {
  const digest = createHash('sha256')
    .update(canonicalJson(semantic(template) ?? {}))
    .update(collisionCount === 0 ? '' : String(collisionCount))
    .digest();
  let hash = '';
  for (let i = 0; i < length; i++)
    hash += SUFFIX_ALPHABET[(digest[i] ?? 0) % SUFFIX_ALPHABET.length] ?? 'x';
  return hash;
}
