// Runs one of the repo's entry points as a child process on the same Node, without a shell.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface BinResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunBinOptions {
  stdin?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  cwd?: string;
}

/** Path of `src/bin/<name>.ts`. */
export function binPath(name: 'cluster-manager' | 'localnet-node' | 'localnet-cli'): string {
  return fileURLToPath(new URL(`../../src/bin/${name}.ts`, import.meta.url));
}

/** Runs `node src/bin/<name>.ts ...args` and collects its output; kills it after the timeout. */
export function runBin(
  name: 'cluster-manager' | 'localnet-node' | 'localnet-cli',
  args: readonly string[],
  options: RunBinOptions = {},
): Promise<BinResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binPath(name), ...args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? '');
  });
}
