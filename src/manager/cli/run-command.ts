// `cluster-manager run` wiring: one flag per setting of config.ts; the service itself is loaded
// only when the command runs (it pulls in client-node, fastify and the rest).
import { Option, type Command } from 'commander';
import { CliError, examples, ExitCode } from '../../cli/program.ts';
import type { Setting } from '../config.ts';
import { stopOnSignals } from './stop-on-signals.ts';

/**
 * Declares `run`. `settings` gives its flags: config.ts's SETTINGS, or none when the call cannot
 * reach `run` (see runFlagsNeeded): config.ts's schema loads about 700 modules of TypeBox, which
 * every other `cluster-manager` call (a status, a pod's preStop hook) would otherwise pay for.
 */
export function registerRunCommand(program: Command, settings: readonly Setting[]): void {
  const run = program
    .command('run')
    .description(
      'Run the manager: keep the staked validator set in step with the cluster (config from CM_* env vars or flags).',
    );
  run.addHelpText(
    'after',
    examples([
      ['CM_CHAIN_RPC_URL=http://full-node:50832 cluster-manager run', 'config from CM_* env'],
      [
        'node_modules/.bin/node --env-file=.devnet/manager.env src/bin/cluster-manager.ts run',
        'a manager for a --no-manager devnet',
      ],
    ]),
  );
  for (const setting of settings) {
    run.option(
      `--${setting.flag} <value>`,
      `${setting.description} [${setting.env}${setting.default === undefined ? '' : `, default ${setting.default}`}]`,
    );
    // An older name a chain's setting keeps (docs/configuration.md lists it): taken, not shown.
    if (setting.alias !== undefined)
      run.addOption(
        new Option(`--${setting.alias.flag} <value>`, `alias of --${setting.flag}`).hideHelp(),
      );
  }
  run.action(async (flags: Record<string, string | undefined>) => {
    const byFlag: Record<string, string | undefined> = {};
    for (const setting of settings) {
      byFlag[setting.flag] = flags[camel(setting.flag)];
      if (setting.alias !== undefined)
        byFlag[setting.alias.flag] = flags[camel(setting.alias.flag)];
    }
    const { ConfigError } = await import('../config.ts');
    const { startService } = await import('../run.ts');
    const { isManagerError } = await import('../errors.ts');
    let service: Awaited<ReturnType<typeof startService>>;
    try {
      service = await startService({ env: process.env, flags: byFlag });
    } catch (error: unknown) {
      if (error instanceof ConfigError) throw new CliError(error.message, ExitCode.usage);
      // A catalogue error's message names no key (errors.ts): shown as it is.
      if (isManagerError(error))
        throw new CliError(
          `the manager could not start: ${error.code}: ${error.message}`,
          ExitCode.failed,
        );
      throw error;
    }
    const startFailure = await stopOnSignals(service, process);
    if (startFailure !== undefined)
      throw new CliError(
        `the manager could not start: ${isManagerError(startFailure) ? `${startFailure.code}: ` : ''}${startFailure.message}`,
        ExitCode.failed,
      );
  });
}

/**
 * Whether a call may need `run`'s flags: its arguments name `run` (`run …`, `help run`) or
 * `completion` (which lists every flag), or it names no command or `help` (the root's help lists
 * `run [options]`). A call of any other command never parses them or shows them.
 */
export function runFlagsNeeded(argv: readonly string[]): boolean {
  const args = argv.slice(2);
  if (args.some((arg) => arg === 'run' || arg === 'completion')) return true;
  const command = args.find((arg) => !arg.startsWith('-'));
  return command === undefined || command === 'help';
}

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}
