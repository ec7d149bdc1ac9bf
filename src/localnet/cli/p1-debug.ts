// localnet-cli `Debug TriggerView|TogglePacemakerMode|ResetToGenesis` (the node's debug RPC) and
// `Debug ScaleActor validators N` (the cluster-manager's control RPC).
import type { Command } from 'commander';
import type { DevnetEndpoints } from './devnet-file.ts';
import { command, exactArgs, type CommandContext, type P1Environment } from './p1-context.ts';
import { P1Error, printQuery, request } from './p1-io.ts';

const SCALABLE_ACTORS = ['fishermen', 'full_nodes', 'servicers', 'validators'];

export function debugCommand(context: CommandContext): Command {
  const debugAction = (name: string, aliases: string[], action: string, description: string) =>
    command(name, aliases, description)
      .argument('[args...]')
      .option(
        '--wait',
        'localnet extension: answer once the next height is committed (TriggerView)',
      )
      .action(async (args: string[], flags: { wait?: boolean }) => {
        exactArgs(args, 0);
        const url = context.remote();
        const query = flags.wait === true ? '?wait=true' : '';
        const answer = await request('POST', `${url}/v1/debug/${action}${query}`, { body: {} });
        // p1 fires debug messages and forgets them: silent unless something went wrong.
        if (answer.status !== 200) printQuery(context.environment.output, answer, url);
        else if (flags.wait === true) context.environment.output.out(answer.body);
      });
  const scale = command('ScaleActor', ['scale'], 'Scales the number of actors up or down')
    .argument('[args...]')
    .action(async (args: string[]) => {
      exactArgs(args, 2);
      const [actor, count] = args as [string, string];
      if (!SCALABLE_ACTORS.includes(actor)) throw new P1Error('Invalid actor type provided');
      await scaleValidators(context.environment, actor, count, context.devnet());
    });
  return command('Debug', ['d'], 'Debug utility for rapid development')
    .addCommand(
      debugAction(
        'TriggerView',
        ['next', 'trigger', 'view'],
        'trigger_view',
        'Trigger the next view in consensus',
      ),
    )
    .addCommand(
      debugAction(
        'TogglePacemakerMode',
        ['toggle', 'pcm'],
        'toggle_pacemaker_mode',
        'Toggle the pacemaker',
      ),
    )
    .addCommand(
      debugAction('ResetToGenesis', ['reset', 'genesis'], 'reset_to_genesis', 'Reset to genesis'),
    )
    .addCommand(scale);
}

/**
 * Where a ScaleActor goes: CLUSTER_MANAGER_URL (with CLUSTER_MANAGER_TOKEN), else the devnet's
 * manager with its token — only while that devnet runs (a stopped one's port may be another
 * server's) — else the default. The devnet's token never goes to another URL.
 */
function managerOf(
  env: NodeJS.ProcessEnv,
  devnet: DevnetEndpoints | undefined,
): { base: string; token: string } {
  const envUrl = env.CLUSTER_MANAGER_URL ?? '';
  const envToken = env.CLUSTER_MANAGER_TOKEN;
  if (envUrl !== '') return { base: envUrl, token: envToken ?? '' };
  if (devnet?.notRunning !== undefined)
    throw new P1Error(`${devnet.notRunning}; or set CLUSTER_MANAGER_URL`);
  if (devnet?.managerUrl !== undefined)
    return { base: devnet.managerUrl, token: envToken ?? devnet.token ?? '' };
  return { base: 'http://127.0.0.1:8080', token: envToken ?? '' };
}

/**
 * `ScaleActor <actor> N` on a localnet: validators only, through the cluster-manager's control
 * RPC (`CLUSTER_MANAGER_URL`, `CLUSTER_MANAGER_TOKEN`, else the devnet's manager and token).
 * Prints its answer; a non-2xx is a `P1Error`.
 */
export async function scaleValidators(
  environment: P1Environment,
  actor: string,
  count: string,
  devnet?: DevnetEndpoints,
): Promise<void> {
  if (actor !== 'validators') {
    throw new P1Error(
      `ScaleActor ${actor} is not supported: the cluster-manager scales validators only`,
    );
  }
  const replicas = Number(count);
  if (!Number.isInteger(replicas) || replicas < 0 || !/^\d+$/.test(count)) {
    throw new P1Error(`invalid number of validators: ${count}`);
  }
  const { env, output } = environment;
  const { base, token } = managerOf(env, devnet);
  const answer = await request('POST', `${base}/v1/scale`, {
    body: { replicas },
    headers: token === '' ? {} : { authorization: `Bearer ${token}` },
  });
  output.out(answer.body.endsWith('\n') ? answer.body : `${answer.body}\n`);
  if (answer.status < 200 || answer.status > 299) {
    throw new P1Error(`the cluster-manager answered HTTP ${answer.status}`);
  }
}
