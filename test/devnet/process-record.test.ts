// The devnet's process record: what `devnet reset` and the next start rely on to stop what a
// devnet killed with SIGKILL left running.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stopLeftovers } from '../../src/devnet/cleanup.ts';
import { isPortFree } from '../../src/devnet/ports.ts';
import { managersOf, PROCESSES_FILE, ProcessRecorder } from '../../src/devnet/process-record.ts';
import { isAlive, pending, waitFor } from '../../src/harness/index.ts';

describe('ProcessRecorder', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A started recorder in a fresh folder, and a child of this process started after it. */
  async function recorderAndChild(): Promise<{
    dir: string;
    recorder: ProcessRecorder;
    child: ChildProcess;
  }> {
    const dir = await mkdtemp(join(tmpdir(), 'process-record-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const recorder = new ProcessRecorder(dir, 60_000);
    recorder.start();
    cleanups.push(() => recorder.stop());
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    cleanups.push(async () => void child.kill('SIGKILL'));
    await new Promise((resolve) => child.once('spawn', resolve));
    return { dir, recorder, child };
  }

  async function recordedPids(dir: string): Promise<number[]> {
    const record = JSON.parse(await readFile(join(dir, PROCESSES_FILE), 'utf8')) as {
      processes: { pid: number }[];
    };
    return record.processes.map((p) => p.pid);
  }

  it('poke() resolves once the record on disk names a child started just before it', async () => {
    const { dir, recorder, child } = await recorderAndChild();

    await recorder.poke(); // what the devnet awaits before it says it is ready

    expect(await recordedPids(dir)).toContain(child.pid);
  });

  it('pokes in a burst share one scan, which still names a child started before them', async () => {
    const { dir, recorder, child } = await recorderAndChild();

    // Every pod event pokes: twenty at once queue one scan, not twenty.
    const pokes = Array.from({ length: 20 }, () => recorder.poke());
    expect(new Set(pokes).size).toBe(1);
    await Promise.all(pokes);
    expect(await recordedPids(dir)).toContain(child.pid);
  });
});

describe('ProcessRecorder after an exec', () => {
  it('records the command a child runs after exec, not the one it had before', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'process-record-exec-'));
    const recorder = new ProcessRecorder(dir, 60_000);
    // A child that keeps its pid and start time but changes its command line, as one scanned
    // between fork and exec does.
    // `read` is a shell builtin: no other child comes or goes, so only the command line changes.
    const child = spawn('sh', ['-c', 'read line; exec sleep 30'], {
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      recorder.start();
      await recorder.poke();
      const read = async (): Promise<string | undefined> =>
        (
          JSON.parse(await readFile(join(dir, PROCESSES_FILE), 'utf8')) as {
            processes: { pid: number; command: string }[];
          }
        ).processes.find((p) => p.pid === child.pid)?.command;
      expect(await read()).toBe('sh -c read line; exec sleep 30');
      child.stdin.write('go\n');
      await waitFor(
        async () => {
          await recorder.poke();
          const command = await read();
          return command === 'sleep 30' || pending(`recorded: ${String(command)}`);
        },
        { what: 'the record to show the command after exec', timeoutMs: 5_000, intervalMs: 100 },
      );
    } finally {
      child.kill('SIGKILL');
      await recorder.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('managersOf and stopLeftovers', () => {
  it('find a manager of the folder by its environment, not a CLI command nor another devnet’s manager', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'process-record-managers-'));
    const other = await mkdtemp(join(tmpdir(), 'process-record-other-'));
    // A program named as the manager's entry point, so its argv reads `… cluster-manager.ts run`.
    const bin = join(other, 'cluster-manager.ts');
    await writeFile(bin, 'setTimeout(() => undefined, 60_000);\n');
    const start = (args: string[], env: Record<string, string>): ChildProcess =>
      spawn(process.execPath, [bin, ...args], { stdio: 'ignore', env: { PATH: '', ...env } });
    const ours = start(['run'], { KUBECONFIG: join(dir, 'kubeconfig') });
    const journal = start(['run'], { CM_JOURNAL_PATH: join(dir, 'journal.sqlite') });
    const cli = start(['status'], { KUBECONFIG: join(dir, 'kubeconfig') });
    const elsewhere = start(['run'], { KUBECONFIG: join(other, 'kubeconfig') });
    const children = [ours, journal, cli, elsewhere];
    try {
      await Promise.all(children.map((c) => new Promise((resolve) => c.once('spawn', resolve))));
      expect(managersOf(dir).sort()).toEqual([ours.pid, journal.pid].sort());

      // The folder's own record does not name them: found anyway, and stopped.
      const stopped = await stopLeftovers(dir);
      expect(stopped.map((s) => s.pid).sort()).toEqual([ours.pid, journal.pid].sort());
      expect(isAlive(ours.pid!) || isAlive(journal.pid!)).toBe(false);
      expect(isAlive(cli.pid!)).toBe(true);
      expect(isAlive(elsewhere.pid!)).toBe(true);
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
      await rm(other, { recursive: true, force: true });
    }
  });
  it('returns only once the stopped processes have closed their ports (a --resume takes them again at once)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'process-record-ports-'));
    // A manager of the folder (found by its environment) that holds a port and has worker
    // threads with some heap, as a node or a manager does: killed, it loses its command line and
    // its leader turns zombie while the workers still exit, the port still taken (85–155 ms here).
    const bin = join(dir, 'cluster-manager.ts');
    await writeFile(
      bin,
      [
        "const { Worker } = require('node:worker_threads');",
        "for (let i = 0; i < 4; i++) new Worker('setInterval(() => {}, 1000); const a = []; for (let j = 0; j < 2e5; j++) a.push({ j });', { eval: true });",
        "const heap = []; for (let j = 0; j < 1e6; j++) heap.push({ j, s: 'x' + j });",
        "require('node:net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port); });",
      ].join('\n'),
    );
    const children: ChildProcess[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        const child = spawn(process.execPath, [bin, 'run'], {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { PATH: '', KUBECONFIG: join(dir, 'kubeconfig') },
        });
        children.push(child);
        const port = Number(
          await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(`${d}`))),
        );
        expect((await stopLeftovers(dir)).map((s) => s.pid)).toEqual([child.pid]);
        expect(
          await isPortFree(port),
          `port ${port} right after stopLeftovers (round ${round + 1})`,
        ).toBe(true);
      }
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
