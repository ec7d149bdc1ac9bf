// Reading the keys Secret manifest named by `--keys`: a missing or malformed file is a usage error
// (exit 2) whose one line names the file and the problem — ids and lines, never key material.
// The YAML parser (72 modules, about 0.07 CPU s) is loaded only here, when a command reads keys:
// `localnet-node run`, which every devnet pod starts, never does.
import { readFileSync } from 'node:fs';
import { UsageError } from '../../cli/program.ts';
import type { ValidatorKey } from '../../pocket/index.ts';

export async function readKeysFile(path: string): Promise<Map<string, ValidatorKey>> {
  const { readKeysSecret, SecretKeysError } = await import('../secret-keys.ts');
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
