// The debug CLI: `scale`, `status`, `plan`, `actions`, `pause`, `resume`, `trigger-view`,
// `watch`, `participation`, `logs`, `completion` — clients of the control RPC (and, for `logs`, of the Kubernetes
// API). The manager is found by --server, --devnet, the env, or ./.devnet (server-target.ts).
// Exit codes: 0 done, 1 failed, 2 usage, 3 timed out, 130/143 interrupted (docs/cli.md).
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, examples, ExitCode } from '../../cli/program.ts';
import type { ChainSummary, PlanView, Readiness } from '../rpc/control-plane.ts';
import type { ActionSummary, ValidatorStatus } from '../status.ts';
import { failOn, type ControlClient } from './control-client.ts';
import { registerCompletionCommand } from './completion-command.ts';
import { registerLogsCommand } from './logs-command.ts';
import { registerParticipationCommand } from './participation-command.ts';
import { problemLines, statusTable, summaryLines, table } from './render.ts';
import { registerScaleCommand } from './scale-command.ts';
import { clientOf, DEFAULT_SERVER, targetOf } from './server-target.ts';
import { WatchPrinter } from './watch-printer.ts';
import { idFormatOf } from '../id-format.ts';
import { VALIDATOR_ID_PATTERN } from '../model.ts';

/** What the control RPC takes as a `validator` (its route schema's pattern). */
const ID_TOKEN = new RegExp(VALIDATOR_ID_PATTERN);

function integer(min: number, max: number, what: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`${what} must be an integer from ${min} to ${max}`);
    }
    return Number(value);
  };
}

function print(json: unknown): void {
  process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
}

async function client(command: Command): Promise<ControlClient> {
  return clientOf(await targetOf(command));
}

export function registerDebugCommands(program: Command): void {
  program
    .option(
      '--server <url>',
      `control RPC of the manager [env CLUSTER_MANAGER_URL; else the nearest .devnet from here up; else ${DEFAULT_SERVER}]`,
    )
    .option(
      '--token <token>',
      "bearer token of the control RPC, for reads and changes [env CLUSTER_MANAGER_TOKEN; a devnet's own when its manager is used]",
    )
    .option(
      '--devnet <dir>',
      'use the devnet in this folder (default: the nearest .devnet from the working folder up, as git finds .git)',
    );

  registerScaleCommand(program);

  program
    .command('status')
    .description(
      'Show the chain (height, last block), whether the manager is paused, and every validator: pod, chain state, phase and reason.',
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager status', 'a table, with the chain and pause above it'],
        ['cluster-manager status --json | jq .validators', 'the same for a script'],
      ]),
    )
    .action(async (options: { json?: boolean }, command: Command) => {
      const api = await client(command);
      const [answer, ready] = await Promise.all([
        api.get<{ validators: ValidatorStatus[] }>('/v1/validators'),
        api.get<Readiness>('/readyz'),
      ]);
      if (answer.status !== 200) failOn(answer, 'status');
      // /readyz answers 503 with the same body while the manager is not ready.
      const summary =
        (ready.status === 200 || ready.status === 503) && typeof ready.body.chain === 'object'
          ? ready.body
          : undefined;
      if (options.json === true)
        return print({
          ...(summary === undefined
            ? {}
            : {
                discovery: summary.discovery,
                paused: summary.paused,
                synced: summary.synced,
                chain: summary.chain,
                journal: summary.journal,
                informers: summary.informers,
              }),
          validators: answer.body.validators,
        });
      const head = summary === undefined ? [] : summaryLines(summary, Date.now());
      process.stdout.write(`${[...head, statusTable(answer.body.validators)].join('\n')}\n`);
    });

  program
    .command('plan')
    .description('Dry run: the actions the manager would take now, and why.')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager plan', 'what it would do now'],
        ['cluster-manager plan --json', 'the same as JSON'],
      ]),
    )
    .action(async (options: { json?: boolean }, command: Command) => {
      const api = await client(command);
      const [answer, ready] = await Promise.all([
        api.get<PlanView>('/v1/plan'),
        api.get<Readiness>('/readyz'),
      ]);
      if (answer.status !== 200) failOn(answer, 'plan');
      const view = answer.body;
      // The inputs the plan was made from, with their problems (/readyz: 200 or 503, same body).
      const informers = Array.isArray(ready.body.informers) ? ready.body.informers : undefined;
      if (options.json === true)
        return print(informers === undefined ? view : { ...view, informers });
      process.stdout.write(
        `height ${view.height}${view.paused ? ', PAUSED' : ''}${view.synced ? '' : ', not synced yet'}${
          view.discovery === 'static' ? ', discovery static' : ''
        }\n`,
      );
      for (const line of problemLines({ informers: informers ?? [] }))
        process.stdout.write(`${line}\n`);
      if (view.actions.length === 0) process.stdout.write('nothing to do\n');
      else
        process.stdout.write(
          `${table(
            ['ID', 'ACTION', 'WAITING FOR', 'REASON'],
            view.actions.map((a) => [a.id ?? a.key, a.action, a.waitingFor ?? '-', a.reason]),
          )}\n`,
        );
    });

  program
    .command('actions')
    .description('The action journal, newest first.')
    .option('--limit <n>', 'how many', integer(1, 1000, '--limit'), 20)
    .option(
      '--before <seq>',
      'older than this sequence number (the `next` of a page)',
      integer(1, Number.MAX_SAFE_INTEGER, '--before'),
    )
    .option('--validator <id>', 'only this validator (001 …)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager actions', 'the last 20'],
        ['cluster-manager actions --validator 005 --limit 5', "one validator's"],
        ['cluster-manager actions --before 120', 'the page before sequence 120'],
      ]),
    )
    .action(
      async (
        options: { limit: number; before?: number; validator?: string; json?: boolean },
        command: Command,
      ) => {
        const manager = await client(command);
        const validator =
          options.validator === undefined
            ? undefined
            : await validatorIdOf(manager, options.validator);
        const query = new URLSearchParams({
          limit: String(options.limit),
          ...(options.before === undefined ? {} : { before: String(options.before) }),
          ...(validator === undefined ? {} : { validator }),
        });
        const answer = await manager.get<{
          actions: ActionSummary[];
          next: number | null;
        }>(`/v1/actions?${query.toString()}`);
        if (answer.status !== 200) failOn(answer, 'actions');
        if (options.json === true) return print(answer.body);
        process.stdout.write(
          `${table(
            ['SEQ', 'ID', 'KIND', 'STATE', 'HEIGHT', 'TX', 'ERROR'],
            answer.body.actions.map((a) => [
              String(a.seq),
              a.validatorId,
              a.kind,
              a.state,
              String(a.committedHeight ?? a.sentHeight ?? a.preparedHeight),
              a.txHash?.slice(0, 16) ?? '-',
              a.errorCode ?? '',
            ]),
          )}\n${answer.body.next === null ? '' : `(older: --before ${answer.body.next})\n`}`,
        );
      },
    );

  for (const [name, description, example] of [
    [
      'pause',
      'Stop taking actions (status and plan keep working).',
      'nothing is staked or unstaked until resume',
    ],
    ['resume', 'Take actions again.', 'the manager acts again'],
  ] as const) {
    program
      .command(name)
      .description(description)
      .addHelpText('after', examples([[`cluster-manager ${name}`, example]]))
      .action(async (_options: unknown, command: Command) => {
        const answer = await (await client(command)).post<{ paused: boolean }>(`/v1/${name}`, {});
        if (answer.status !== 200) failOn(answer, name);
        process.stdout.write(`${answer.body.paused ? 'paused' : 'resumed'}\n`);
      });
  }

  program
    .command('trigger-view')
    .description('Commit the next block on a chain with a manual pacemaker.')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([['cluster-manager trigger-view', 'one block; prints its height']]),
    )
    .action(async (options: { json?: boolean }, command: Command) => {
      const answer = await (
        await client(command)
      ).post<{ height: number; committed: boolean }>('/v1/trigger-view', {});
      if (answer.status !== 200) failOn(answer, 'trigger-view');
      if (options.json === true) return print(answer.body);
      process.stdout.write(
        `height ${answer.body.height}${answer.body.committed ? '' : ' (no new block within 5 s)'}\n`,
      );
    });

  program
    .command('watch')
    .description(
      'Follow what changes as it happens — phases, actions, pause, a chain that stops or starts making blocks — until Ctrl-C.',
    )
    .option('--heights', 'also print every new chain height')
    .option('--json', 'print each event as one JSON line (heights included)')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager watch', 'changes only'],
        ['cluster-manager watch --heights', 'and every block'],
        ['cluster-manager watch --json | jq -c .', 'events for a script'],
      ]),
    )
    .action(async (options: { heights?: boolean; json?: boolean }, command: Command) => {
      const target = await targetOf(command);
      const api = clientOf(target);
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      const printer = new WatchPrinter({
        out: (line) => process.stdout.write(`${line}\n`),
        server: api.server,
        heights: options.heights === true,
        json: options.json === true,
      });
      try {
        await api.stream((event, data) => printer.event(event, data), stop.signal);
      } finally {
        printer.stop();
      }
      if (!stop.signal.aborted)
        throw new CliError(`the manager at ${api.server} closed the event stream`, ExitCode.failed);
    });

  registerParticipationCommand(program);
  registerLogsCommand(program);
  registerCompletionCommand(program);
}

/**
 * The id a person's `--validator` text names, in the format of the manager's chain (GET
 * /v1/chain): on Pocket V1 `5` names `005`, on a chain whose ids are `val-N` it names `val-5`. A
 * token the format does not read goes as written (the manager answers an empty page for an id it
 * does not know); a token no id can be is a usage error.
 */
async function validatorIdOf(manager: ControlClient, text: string): Promise<string> {
  const answer = await manager.get<ChainSummary>('/v1/chain');
  if (answer.status !== 200) failOn(answer, 'chain');
  const ids = idFormatOf(answer.body.ids);
  const id = ids.fromText(text) ?? text;
  if (!ID_TOKEN.test(id))
    throw new CliError(`--validator must be an id such as ${ids.example}`, ExitCode.usage);
  return id;
}
