// Runs our command-line entry points as child processes (process.execPath, no shell), with an
// explicit env (tokens go there, never into argv), and kills any that outlive their time.
import { spawn, type ChildProcess } from 'node:child_process';
import { entryPoints } from '../../../src/cli/entry-points.ts';
import { compileCacheEnv } from '../../support/compile-cache-env.ts';

/** The sources' entry points, whatever CLUSTER_MANAGER_BUNDLES says: CLI calls run the sources. */
export const BIN = entryPoints(undefined);

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A started CLI process whose output accumulates until it exits. */
export interface CliProcess {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  exited: Promise<CliResult>;
}

const BASE_ENV = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  NO_COLOR: '1',
});

export interface CliOptions {
  env?: Record<string, string>;
  bin?: string;
  timeoutMs?: number;
  /** The working folder (a devnet in `<cwd>/.devnet` is found there). */
  cwd?: string;
  /**
   * Share the test run's Node compile cache (default true). A devnet started without it keeps
   * its own in its folder, as a user's does.
   */
  compileCache?: boolean;
}

export function startCli(args: readonly string[], options: CliOptions = {}): CliProcess {
  const child = spawn(process.execPath, [options.bin ?? BIN.clusterManager, ...args], {
    env: {
      ...BASE_ENV(),
      ...(options.compileCache === false ? {} : compileCacheEnv()),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const exited = new Promise<CliResult>((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}

/** Runs a CLI command to its end. */
export async function runCli(
  args: readonly string[],
  options: CliOptions = {},
): Promise<CliResult> {
  return startCli(args, options).exited;
}

/** The lines of a stream's text, without empty ones. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}
