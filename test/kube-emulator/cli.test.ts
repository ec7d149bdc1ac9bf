// `cluster-manager emulator`: prints the URL and kubeconfig when ready, serves kubectl, and
// stops cleanly with its child processes on SIGTERM or SIGINT.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KUBECTL } from './harness.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

const bin = join(import.meta.dirname, '..', '..', 'src', 'bin', 'cluster-manager.ts');
const fixture = join(import.meta.dirname, 'fixtures', 'probe-server.mjs');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function run(args: readonly string[]): Running {
  const child = spawn(process.execPath, [bin, 'emulator', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  cleanups.push(() => {
    child.kill('SIGKILL');
  });
  return { child, output: () => output, exited };
}

function kubectl(
  kubeconfig: string,
  cacheDir: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      KUBECTL,
      [`--kubeconfig=${kubeconfig}`, `--cache-dir=${cacheDir}`, '--request-timeout=10s', ...args],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('exit', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'emulator-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('cluster-manager emulator', () => {
  it.skipIf(noKubectl)(
    'prints the server URL and kubeconfig path when ready, serves kubectl and exits 0 on SIGTERM',
    async () => {
      const dir = await tempDir();
      const emulator = run(['--dir', join(dir, 'emu')]);
      const kubeconfig = await waitFor(() => /^kubeconfig: (.+)$/m.exec(emulator.output())?.[1], {
        what: 'the ready lines',
        timeoutMs: 20_000,
      });
      expect(emulator.output()).toMatch(/^server: http:\/\/127\.0\.0\.1:\d+$/m);
      expect(kubeconfig).toBe(join(dir, 'emu', 'kubeconfig'));
      const listed = await kubectl(kubeconfig, join(dir, 'cache'), [
        'get',
        'namespaces',
        '-o',
        'name',
      ]);
      expect(listed.stdout).toContain('namespace/default');
      emulator.child.kill('SIGTERM');
      expect(await emulator.exited).toBe(0);
      expect(emulator.output()).toContain('stopped');
    },
  );

  it.skipIf(noKubectl)(
    'runs pods as processes in process mode and stops them all on SIGINT',
    async () => {
      const dir = await tempDir();
      const images = join(dir, 'images.json');
      await writeFile(
        images,
        JSON.stringify({ 'probe-server': { command: process.execPath, args: [fixture] } }),
      );
      const emulator = run(['--kubelet', 'process', '--images', images, '--dir', join(dir, 'emu')]);
      const kubeconfig = await waitFor(() => /^kubeconfig: (.+)$/m.exec(emulator.output())?.[1], {
        what: 'the ready lines',
        timeoutMs: 20_000,
      });
      const manifest = join(dir, 'pod.json');
      await writeFile(
        manifest,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'probe' },
          spec: {
            containers: [
              {
                name: 'c',
                image: 'probe-server',
                ports: [{ name: 'http', containerPort: 80 }],
                readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
              },
            ],
          },
        }),
      );
      expect((await kubectl(kubeconfig, join(dir, 'cache'), ['apply', '-f', manifest])).code).toBe(
        0,
      );
      const waited = await kubectl(kubeconfig, join(dir, 'cache'), [
        'wait',
        '--for=condition=Ready',
        'pod/probe',
        '--timeout=20s',
      ]);
      expect(waited.code).toBe(0);
      const log = await readFile(join(dir, 'emu', 'logs', 'default_probe.log'), 'utf8');
      const pid = Number(/started pid=(\d+)/.exec(log)?.[1]);
      expect(pid).toBeGreaterThan(0);
      emulator.child.kill('SIGINT');
      expect(await emulator.exited).toBe(0);
      expect(() => process.kill(pid, 0)).toThrow();
    },
  );

  it('rejects an unknown kubelet mode with exit code 2', async () => {
    const emulator = run(['--kubelet', 'docker']);
    expect(await emulator.exited).toBe(2);
    expect(emulator.output()).toContain("argument 'docker' is invalid");
  });
});
