// `kubectl exec`: the command runs as a child process on this machine with the container's
// environment, in the pod's private folder (the process kubelet's "container"), as a process group
// of its own that is killed when the client goes away. A program the image provides
// (`ImageCommand.binaries`) is run as the image table says; other names are found on the container's
// PATH. The final Status is the one the kubelet writes (pkg/kubelet/cri/streaming/remotecommand:
// Success, NonZeroExitCode with an ExitCode cause, or InternalError). There is no terminal: with
// `-t` the output is still a pipe and stderr joins stdout.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { optionBool } from './connect-params.ts';
import type { JsonObject } from '../json.ts';
import type { ExecTarget } from '../kubelets/images.ts';
import { expand } from '../kubelets/pod-env.ts';
import { badRequest } from '../status-errors.ts';

export interface ExecOptions {
  command: string[];
  container: string | null;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** PodExecOptions from the query, with the apiserver's checks (400 BadRequest). */
export function execOptions(query: URLSearchParams): ExecOptions {
  const options: ExecOptions = {
    command: query.getAll('command'),
    container: query.get('container'),
    stdin: optionBool(query, 'stdin'),
    stdout: optionBool(query, 'stdout'),
    stderr: optionBool(query, 'stderr'),
    tty: optionBool(query, 'tty'),
  };
  if (!options.stdin && !options.stdout && !options.stderr) {
    throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  }
  if (options.command.length === 0) throw badRequest('you must specify a command');
  return options;
}

/** The streams of one exec session, whatever carries them (SPDY streams or WebSocket channels). */
export interface ExecChannels {
  stdin: Readable | undefined;
  stdout: Writable | undefined;
  stderr: Writable | undefined;
  /** Sends the final Status and ends the session. */
  finish(status: JsonObject): void;
  /** Called once if the client goes away first. */
  onGone(listener: () => void): void;
}

const success: JsonObject = { metadata: {}, status: 'Success' };

function internalError(message: string): JsonObject {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  };
}

function nonZeroExit(argv: readonly string[], code: number): JsonObject {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${argv.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

interface Program {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The program, arguments and environment for `argv`, or why it cannot run. */
function program(target: ExecTarget, argv: readonly string[]): Program | string {
  const [name = '', ...rest] = argv;
  const provided = target.image?.binaries?.[name] ?? target.image?.binaries?.[basename(name)];
  if (provided !== undefined) {
    const env = { ...target.env };
    for (const [key, value] of Object.entries(provided.env ?? {}))
      env[key] = expand(value, target.env);
    return { command: provided.command, args: [...(provided.args ?? []), ...rest], env };
  }
  const runnable = (path: string): boolean => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (name.includes('/')) {
    const path = isAbsolute(name) ? name : resolve(target.cwd, name);
    return runnable(path)
      ? { command: path, args: rest, env: target.env }
      : `exec: "${name}": stat ${name}: no such file or directory`;
  }
  for (const folder of (target.env.PATH ?? '').split(':')) {
    if (folder !== '' && runnable(join(folder, name)))
      return { command: join(folder, name), args: rest, env: target.env };
  }
  return `exec: "${name}": executable file not found in $PATH`;
}

/** Ends a writable and resolves once everything written to it is flushed (or it is gone). */
function ended(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableFinished || stream.destroyed) return resolve();
    stream.once('finish', resolve);
    stream.once('close', resolve);
    stream.end();
  });
}

/** Runs the command of an exec session and reports how it ended on the session's error stream. */
export function runExec(target: ExecTarget, options: ExecOptions, channels: ExecChannels): void {
  const found = program(target, options.command);
  if (typeof found === 'string') {
    channels.finish(internalError(`error executing command in container: ${found}`));
    return;
  }
  const child = spawn(found.command, found.args, {
    cwd: target.cwd,
    env: found.env,
    stdio: [channels.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const killGroup = (): void => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  channels.onGone(killGroup);
  if (channels.stdin !== undefined && child.stdin !== null) {
    channels.stdin.pipe(child.stdin);
    child.stdin.on('error', () => undefined); // the program may exit without reading
  }
  const errorsTo = options.tty ? channels.stdout : channels.stderr;
  if (channels.stdout !== undefined) child.stdout?.pipe(channels.stdout, { end: false });
  else child.stdout?.resume();
  if (errorsTo !== undefined) child.stderr?.pipe(errorsTo, { end: false });
  else child.stderr?.resume();
  let failed: string | undefined;
  child.once('error', (error) => {
    failed = error.message;
  });
  child.once('close', (code, signal) => {
    const status =
      failed !== undefined
        ? internalError(`error executing command in container: ${failed}`)
        : code === 0
          ? success
          : nonZeroExit(options.command, code ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
    // Everything the command printed goes out before the status that ends the session.
    const outputs = [...new Set([channels.stdout, channels.stderr])].filter(
      (stream): stream is Writable => stream !== undefined,
    );
    void Promise.all(outputs.map((stream) => ended(stream))).then(() => channels.finish(status));
  });
}
