// Static discovery's files checked once at start, so that `run` refuses bad ones as it refuses
// any configuration problem (exit code 2, each problem named); later edits are checked as they
// are read (static-source.ts), keeping the last good version.
import { statSync } from 'node:fs';
import { readBoundedFileSync } from './bounded-file.ts';
import type { IdFormat } from '../model.ts';
import { DiscoveryFileError } from './discovery-file-error.ts';
import { checkKeysFileMode, parseKeysFile } from './keys-file.ts';
import { parseValidatorsFile } from './validators-file.ts';

/** Every problem of the two files, each starting with the variable and the code. */
export function staticFileProblems(
  files: { validatorsFile: string; keysFile: string },
  ids: IdFormat,
): string[] {
  const problems: string[] = [];
  const check = (env: string, path: string, read: () => void): void => {
    try {
      read();
    } catch (error: unknown) {
      if (!(error instanceof DiscoveryFileError)) throw error;
      for (const problem of error.problems)
        problems.push(`${env} ${path}: ${error.code}: ${problem}`);
    }
  };
  check('CM_VALIDATORS_FILE', files.validatorsFile, () => {
    parseValidatorsFile(
      files.validatorsFile,
      readText(files.validatorsFile, 'VALIDATORS_FILE_INVALID'),
      ids,
    );
  });
  check('CM_KEYS_FILE', files.keysFile, () => {
    let mode: number;
    try {
      mode = statSync(files.keysFile).mode;
    } catch (error: unknown) {
      throw unreadable('KEYS_FILE_INVALID', files.keysFile, error);
    }
    checkKeysFileMode(files.keysFile, mode);
    parseKeysFile(files.keysFile, readText(files.keysFile, 'KEYS_FILE_INVALID'), ids);
  });
  return problems;
}

function readText(path: string, code: 'VALIDATORS_FILE_INVALID' | 'KEYS_FILE_INVALID'): string {
  try {
    return readBoundedFileSync(path);
  } catch (error: unknown) {
    throw unreadable(code, path, error);
  }
}

function unreadable(
  code: 'VALIDATORS_FILE_INVALID' | 'KEYS_FILE_INVALID',
  path: string,
  error: unknown,
): DiscoveryFileError {
  const reason = (error as NodeJS.ErrnoException).code ?? 'error';
  return new DiscoveryFileError(code, path, [`cannot read it (${reason})`]);
}
