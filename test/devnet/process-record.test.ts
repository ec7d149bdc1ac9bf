// The devnet's process record: what `devnet reset` and the next start rely on to stop what a
// devnet killed with SIGKILL left running.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROCESSES_FILE, ProcessRecorder } from '../../src/devnet/process-record.ts';

describe('ProcessRecorder', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('poke() resolves once the record on disk names a child started just before it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'process-record-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const recorder = new ProcessRecorder(dir, 60_000);
    recorder.start();
    cleanups.push(() => recorder.stop());
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    cleanups.push(async () => void child.kill('SIGKILL'));
    await new Promise((resolve) => child.once('spawn', resolve));

    await recorder.poke(); // what the devnet awaits before it says it is ready

    const record = JSON.parse(await readFile(join(dir, PROCESSES_FILE), 'utf8')) as {
      processes: { pid: number }[];
    };
    expect(record.processes.map((p) => p.pid)).toContain(child.pid);
  });
});
