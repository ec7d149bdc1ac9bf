// Which manager a debug command talks to, and with which token: `--server` > an explicit
// `--devnet DIR` > CLUSTER_MANAGER_URL > the nearest .devnet from the working folder up > http://127.0.0.1:8080. A
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
 * The client of a target. Its errors say what to check: for a devnet found running, that its
 * manager (not the devnet) does not answer; otherwise where the URL came from; and an
 * UNAUTHORIZED answer says where the token came from and how to get the right one.
 */
export function clientOf(target: ServerTarget, timeoutMs = 30_000): ControlClient {
  const unreachableHint = unreachableHintOf(target);
  return new ControlClient({
    server: target.server,
    token: target.token,
    timeoutMs,
    source: target.source,
    ...(unreachableHint === undefined ? {} : { unreachableHint }),
    unauthorizedHint: unauthorizedHintOf(target),
  });
}

/** How to get the devnet's variables, or name it, typed where the user is. */
const DEVNET_WAYS =
  'run the command inside the project of a running devnet (its .devnet is found from there up), pass --devnet DIR, or eval "$(npx cluster-manager devnet env)" there';

function unreachableHintOf(target: ServerTarget): string | undefined {
  const devnet = target.devnet;
  if (devnet !== undefined) {
    const pid = devnet.state.kind === 'running' ? ` (pid ${devnet.state.holder.process.pid})` : '';
    return devnet.info.managerUrl === null
      ? `the devnet in ${devnet.dir} runs without a manager (--no-manager): start one from its manager.env`
      : `the devnet in ${devnet.dir} runs${pid} but its manager does not answer: the devnet restarts a manager that exits (up to 5 times in a row) and says so in its terminal, as it says when it gives up (the manager's log: ${devnet.info.managerLog ?? join(devnet.dir, 'manager.log')})`;
  }
  if (target.source === 'the default')
    return `no manager was named and no .devnet was found from ${process.cwd()} up, so the default was asked: ${DEVNET_WAYS}; or pass --server URL`;
  if (target.source === 'CLUSTER_MANAGER_URL')
    return 'CLUSTER_MANAGER_URL names it: is that manager running, and is the URL right? (unset CLUSTER_MANAGER_URL CLUSTER_MANAGER_TOKEN to use the devnet of the project you are in)';
  return undefined;
}

function unauthorizedHintOf(target: ServerTarget): string {
  if (target.devnet !== undefined)
    return `the devnet in ${target.devnet.dir} sent its own token and its manager refused it: was the devnet restarted meanwhile? Run the command again`;
  if (target.token === undefined)
    return `no token was sent to ${target.server} (${target.source}): set CLUSTER_MANAGER_TOKEN or pass --token; for a devnet, ${DEVNET_WAYS}; on a cluster, the token is in the manager's Secret (docs/tilt.md)`;
  return `the token given (--token or CLUSTER_MANAGER_TOKEN) is not the one of the manager at ${target.server} (${target.source}): a devnet makes a new token at every start (eval "$(npx cluster-manager devnet env)" again there); on a cluster, read it from the manager's Secret`;
}
