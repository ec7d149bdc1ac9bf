// A short, stable hash of a pod template (revision names, `pod-template-hash` labels).
import { createHash } from 'node:crypto';
import { SUFFIX_ALPHABET } from './names.ts';

export function templateHash(template: unknown, length = 10): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(template ?? {}))
    .digest();
  let hash = '';
  for (let i = 0; i < length; i++)
    hash += SUFFIX_ALPHABET[(digest[i] ?? 0) % SUFFIX_ALPHABET.length] ?? 'x';
  return hash;
}
