// kubectl 1.32 against an emulator or a devnet: found beside the machine's kubectl dispatcher
// (docs: NOTES.md), run by absolute path with an args array, no shell and a private cache dir.
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The versioned kubectl binary (`kubectl.1.32`) next to the `kubectl` on PATH. */
export function findKubectl(): string {
  for (const folder of (process.env.PATH ?? '').split(':')) {
    try {
      const real = realpathSync(join(folder, 'kubectl'));
      return join(dirname(real), 'kubectl.1.32');
    } catch {
      // not here
    }
  }
  throw new Error('kubectl is not on PATH');
}

/** Runs kubectl with `--kubeconfig`, a cache dir of its own and a 10 s request timeout. */
export function runKubectl(
  args: readonly string[],
  options: { kubeconfig: string; cacheDir: string; home: string; timeoutMs?: number },
): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(
      findKubectl(),
      [
        `--kubeconfig=${options.kubeconfig}`,
        `--cache-dir=${options.cacheDir}`,
        '--request-timeout=10s',
        ...args,
      ],
      {
        timeout: options.timeoutMs ?? 30_000,
        env: { PATH: process.env.PATH ?? '', HOME: options.home },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
