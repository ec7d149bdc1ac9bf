// Reading the keys Secret manifest named by `--keys`: a missing or malformed file is a usage error
// (exit 2) whose one line names the file and the problem — ids and lines, never key material.
import { readFileSync } from 'node:fs';
import { UsageError } from '../../cli/program.ts';
import type { ValidatorKey } from '../../pocket/index.ts';
import { readKeysSecret, SecretKeysError } from '../secret-keys.ts';

export function readKeysFile(path: string): Map<string, ValidatorKey> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error: unknown) {
    throw new UsageError(
      `--keys ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    return readKeysSecret(text);
  } catch (error: unknown) {
    if (error instanceof SecretKeysError) throw new UsageError(`--keys ${path}: ${error.message}`);
    throw error;
  }
}
