// The devnet's folder lock (issue 17, item 2): a running devnet's folder is refused, naming it;
// a lock whose process is gone — or whose pid now belongs to another process — is taken over.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDevnetLock, DevnetBusyError, LOCK_FILE, readLock } from '../../src/devnet/lock.ts';
import { isSameProcess, stampOf } from '../../src/cli/process-stamp.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'devnet-lock-'));
  dirs.push(dir);
  return join(dir, '.devnet');
}

describe('the devnet folder lock', () => {
  it('refuses a second holder while the first runs, naming its pid, start and URLs', async () => {
    const dir = folder();
    const first = await acquireDevnetLock(dir);
    await first.update({ manager: 'http://127.0.0.1:8080', chain: 'http://127.0.0.1:42539' });
    const refused = await acquireDevnetLock(dir).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DevnetBusyError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `in use by a running devnet \\(pid ${process.pid}, started \\S+, manager http://127.0.0.1:8080, chain http://127.0.0.1:42539\\)`,
      ),
    );
    await first.release();
    const second = await acquireDevnetLock(dir);
    expect(second.takenOverFrom).toBeUndefined();
    await second.release();
    expect(await readLock(dir)).toBeUndefined();
  });

  it('takes over the lock of a process that is gone, or whose pid is now another process', async () => {
    const dir = folder();
    const me = stampOf(process.pid)!;
    // The same pid with another start time: the pid was reused, the devnet that wrote it is gone.
    for (const stale of [
      { ...me, startTime: '1' },
      { pid: 2 ** 22 + 1, startTime: '1', command: 'node cluster-manager.ts devnet' },
    ]) {
      await (await acquireDevnetLock(dir)).release(); // the folder exists
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ process: stale, startedAt: 'then' }));
      expect(isSameProcess(stale)).toBe(false);
      const lock = await acquireDevnetLock(dir);
      expect(lock.takenOverFrom?.process).toEqual(stale);
      expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).process).toEqual(me);
      await lock.release();
    }
  });

  it('never takes over a lock it cannot read', async () => {
    const dir = folder();
    await (await acquireDevnetLock(dir)).release();
    writeFileSync(join(dir, LOCK_FILE), 'not json');
    await expect(acquireDevnetLock(dir)).rejects.toThrow(/cannot be read/);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe('not json');
  });
});
