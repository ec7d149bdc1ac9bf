// Which manager a debug command talks to, and with which token: `--server` > an explicit
// `--devnet DIR` > CLUSTER_MANAGER_URL > the devnet in ./.devnet > http://127.0.0.1:8080. A
// devnet's token is sent only to that devnet's manager, and only while the devnet that wrote it
// runs (its devnet.lock): a stopped or killed devnet's port may be another server's by now.
import type { Command } from 'commander';
import { join } from 'node:path';
import { findDevnet, managerUrlOf, notRunning, type FoundDevnet } from '../../cli/devnet-file.ts';
import { CliError, ExitCode } from '../../cli/program.ts';
import { ControlClient } from './control-client.ts';

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';

export interface GlobalOptions {
  server?: string;
  token?: string;
  devnet?: string;
}

export interface ServerTarget {
  server: string;
  token: string | undefined;
  /** The devnet the server came from, if any (its kubeconfig, pacemaker, folder). */
  devnet: FoundDevnet | undefined;
  /** Where the server came from, for errors: "--server", "CLUSTER_MANAGER_URL", "the devnet in …". */
  source: string;
}

/** Resolves the target of a command from its global options and the environment. */
export async function resolveTarget(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<ServerTarget> {
  const envToken = env.CLUSTER_MANAGER_TOKEN === '' ? undefined : env.CLUSTER_MANAGER_TOKEN;
  if (options.server !== undefined)
    return {
      server: options.server,
      token: options.token ?? envToken,
      devnet: undefined,
      source: '--server',
    };
  const explicit =
    options.devnet === undefined ? undefined : await findDevnet({ devnet: options.devnet, cwd });
  const envUrl = env.CLUSTER_MANAGER_URL === '' ? undefined : env.CLUSTER_MANAGER_URL;
  if (explicit === undefined && envUrl !== undefined)
    return {
      server: envUrl,
      token: options.token ?? envToken,
      devnet: undefined,
      source: 'CLUSTER_MANAGER_URL',
    };
  const devnet = explicit ?? (await findDevnet({ cwd }));
  if (devnet !== undefined) {
    if (devnet.state.kind !== 'running') throw notRunning(devnet);
    const url = managerUrlOf(devnet.info);
    if (url === undefined)
      throw new CliError(
        `the devnet in ${devnet.dir} has no manager URL in its devnet.json; pass --server`,
        ExitCode.failed,
      );
    return {
      server: url,
      token: options.token ?? devnet.info.token ?? undefined,
      devnet,
      source: `the devnet in ${devnet.dir}`,
    };
  }
  return {
    server: DEFAULT_SERVER,
    token: options.token ?? envToken,
    devnet: undefined,
    source: 'the default',
  };
}

/** A control-RPC client for `command`'s target (global options with the command's own). */
export async function targetOf(command: Command): Promise<ServerTarget> {
  return resolveTarget(command.optsWithGlobals<GlobalOptions>());
}

/**
 * The client of a target; an unreachable devnet manager's error says what to check. The devnet
 * was found running (resolveTarget): its manager, not the devnet, is what does not answer.
 */
export function clientOf(target: ServerTarget, timeoutMs = 30_000): ControlClient {
  const devnet = target.devnet;
  const pid = devnet?.state.kind === 'running' ? ` (pid ${devnet.state.holder.process.pid})` : '';
  const hint =
    devnet === undefined
      ? undefined
      : devnet.info.managerUrl === null
        ? `the devnet in ${devnet.dir} runs without a manager (--no-manager): start one from its manager.env`
        : `the devnet in ${devnet.dir} runs${pid} but its manager does not answer: the devnet restarts a manager that exits (up to 5 times in a row) and says so in its terminal, as it says when it gives up (the manager's log: ${devnet.info.managerLog ?? join(devnet.dir, 'manager.log')})`;
  return new ControlClient({
    server: target.server,
    token: target.token,
    timeoutMs,
    ...(hint === undefined ? {} : { unreachableHint: hint }),
  });
}
