// The named errors of static discovery's files: each carries a stable code and every problem
// found, and never a key's value.

export const DiscoveryFileCode = {
  /** The validators file cannot be read, is not YAML/JSON, or an entry is wrong. */
  validatorsInvalid: 'VALIDATORS_FILE_INVALID',
  /** The keys file cannot be read, is not YAML/JSON, or has neither layout. */
  keysInvalid: 'KEYS_FILE_INVALID',
  /** The keys file may be read (or written) by users other than its owner. */
  keysInsecure: 'KEYS_FILE_INSECURE',
} as const;
export type DiscoveryFileCode = (typeof DiscoveryFileCode)[keyof typeof DiscoveryFileCode];

export class DiscoveryFileError extends Error {
  readonly code: DiscoveryFileCode;
  readonly path: string;
  readonly problems: readonly string[];
  constructor(code: DiscoveryFileCode, path: string, problems: readonly string[]) {
    super(`${code}: ${path}: ${problems.join('; ')}`);
    this.name = 'DiscoveryFileError';
    this.code = code;
    this.path = path;
    this.problems = problems;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
