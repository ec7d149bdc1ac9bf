// Object names: DNS-1123 validation and `generateName` suffixes.
import type { StatusCause } from './status-errors.ts';

const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The alphabet of `generateName` suffixes (no vowels, no look-alikes), as apimachinery uses. */
export const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function randomSuffix(length = 5, random: () => number = Math.random): string {
  let suffix = '';
  for (let i = 0; i < length; i++) {
    suffix += SUFFIX_ALPHABET[Math.floor(random() * SUFFIX_ALPHABET.length)] ?? 'x';
  }
  return suffix;
}

/** Problems with a name: namespaces need a DNS-1123 label, other objects a subdomain. */
export function validateName(name: string, asLabel: boolean): StatusCause[] {
  const ok = asLabel
    ? name.length <= 63 && label.test(name)
    : name.length <= 253 && subdomain.test(name);
  if (ok) return [];
  const rule = asLabel
    ? "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
    : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  return [
    {
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
      message: `Invalid value: "${name}": ${rule}`,
    },
  ];
}
