// A devnet folder's lock as a test wants it: held by a devnet that runs (this test process, which
// does run), or left by one that is gone (this pid with another start time: a process that is
// not this one). The debug CLIs send a devnet's token only in the first case.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCK_FILE } from '../../src/cli/devnet-lock-file.ts';
import { stampOf } from '../../src/cli/process-stamp.ts';

export const LOCK_STARTED_AT = '2025-01-01T00:00:00.000Z';

/** Writes `<devnetDir>/devnet.lock`; returns the pid and start a devnet.json of it carries. */
export function writeDevnetLock(
  devnetDir: string,
  holder: 'running' | 'gone',
): { pid: number; startedAt: string } {
  const me = stampOf(process.pid);
  if (me === undefined) throw new Error('cannot read this process from /proc');
  const stamp = holder === 'running' ? me : { ...me, startTime: '1' };
  writeFileSync(
    join(devnetDir, LOCK_FILE),
    JSON.stringify({ process: stamp, startedAt: LOCK_STARTED_AT }),
  );
  return { pid: process.pid, startedAt: LOCK_STARTED_AT };
}
