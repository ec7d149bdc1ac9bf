// How the debug CLI turns the control RPC's error answers into its one `error:` line and exit
// code: the code and message as the API gave them, on one line, and advice meant for API
// callers (`send force: true`) said the way a command line user does it (`--force`).
import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../../src/cli/program.ts';
import { failOn } from '../../src/manager/cli/control-client.ts';

function failure(status: number, body: unknown): CliError {
  try {
    failOn({ status, body }, 'scale');
  } catch (error: unknown) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error('failOn returned');
}

describe('failOn', () => {
  it('names the code and tells a CLI user to pass --force where the API says force: true', () => {
    const error = failure(409, {
      error: {
        code: 'BELOW_MINIMUM_SET',
        message:
          '0 is below the minimum validator set of 3 (auto). Send force: true to go below it anyway',
      },
    });
    expect(error.message).toBe(
      'BELOW_MINIMUM_SET: 0 is below the minimum validator set of 3 (auto). Pass --force to go below it anyway',
    );
    expect(error.exitCode).toBe(ExitCode.failed);
    const drain = failure(409, {
      error: {
        code: 'SCALE_IN_PROGRESS',
        message: 'wait until it is done, or send force: true to supersede it',
      },
    });
    expect(drain.message).toBe(
      'SCALE_IN_PROGRESS: wait until it is done, or pass --force to supersede it',
    );
  });

  it('keeps a multi-line message on one line, and names the HTTP status of an unknown body', () => {
    expect(failure(409, { error: { code: 'X_Y', message: 'a\n  b' } }).message).toBe('X_Y: a; b');
    expect(failure(502, 'oops').message).toBe('scale failed with HTTP 502');
  });
});
