// The debug CLI: `scale`, `status`, `plan`, `actions`, `pause`, `resume`, `trigger-view`,
// `watch` — a client of the control RPC. Exit codes: 0 done, 1 failed, 2 usage, 3 timed out.
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, ExitCode } from '../../cli/program.ts';
import type { PlanView } from '../rpc/control-plane.ts';
import type { ScaleResult } from '../scale/scaler.ts';
import type { ActionSummary, ValidatorStatus } from '../status.ts';
import { ControlClient, failOn } from './control-client.ts';
import { ScaleProgress, statusTable, table } from './render.ts';

interface GlobalOptions {
  server?: string;
  token?: string;
}

function client(command: Command, timeoutMs = 30_000): ControlClient {
  const options = command.optsWithGlobals<GlobalOptions>();
  return new ControlClient({
    server: options.server ?? process.env.CLUSTER_MANAGER_URL ?? 'http://127.0.0.1:8080',
    token: options.token ?? process.env.CLUSTER_MANAGER_TOKEN,
    timeoutMs,
  });
}

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

export function registerDebugCommands(program: Command): void {
  program
    .option(
      '--server <url>',
      'control RPC of the manager [env CLUSTER_MANAGER_URL, default http://127.0.0.1:8080]',
    )
    .option('--token <token>', 'bearer token for mutations [env CLUSTER_MANAGER_TOKEN]');

  program
    .command('scale')
    .description(
      'Scale the validators to N (draining first when scaling down) and optionally wait for the chain.',
    )
    .argument('<replicas>', 'number of validators', integer(0, 999, '<replicas>'))
    .option('--wait <until>', 'none | staked | active (signing blocks)', 'none')
    .option(
      '--timeout <seconds>',
      'give up waiting after this long (exit 3)',
      integer(1, 3600, '--timeout'),
      300,
    )
    .option('--drive', 'trigger views while waiting (chains with a manual pacemaker)', false)
    .action(
      async (
        replicas: number,
        options: { wait: string; timeout: number; drive: boolean },
        command: Command,
      ) => {
        if (!['none', 'staked', 'active'].includes(options.wait))
          throw new CliError('--wait must be none, staked or active', ExitCode.usage);
        const api = client(command, (options.timeout + 30) * 1000);
        const progress = new ScaleProgress(process.stderr);
        const follow = new AbortController();
        const followed = api
          .stream((event, data) => {
            if (event === 'phase') {
              const change = data as { key: string; to: string; reason: string };
              progress.update(change.key, change.to, change.reason);
            }
          }, follow.signal)
          .catch(() => undefined);
        try {
          progress.note(`scaling to ${replicas} (wait: ${options.wait})…`);
          const answer = await api.post<ScaleResult>('/v1/scale', {
            replicas,
            wait: options.wait,
            timeoutSeconds: options.timeout,
            drive: options.drive,
          });
          if (answer.status === 504) {
            const result = answer.body;
            const missing = result.missing
              .map((m) => `${m.id} (${m.phase}: ${m.reason})`)
              .join('; ');
            throw new CliError(
              `timed out after ${Math.round(result.elapsedMs / 1000)} s; not there yet: ${missing}`,
              ExitCode.timedOut,
            );
          }
          if (answer.status !== 200) failOn(answer, 'scale');
          const result = answer.body;
          progress.note(
            `${result.statefulSet}: ${result.previous} → ${result.replicas}${result.drained.length > 0 ? `, drained ${result.drained.join(', ')}` : ''}; done in ${(result.elapsedMs / 1000).toFixed(1)} s at height ${result.height}`,
          );
        } finally {
          follow.abort();
          await followed;
        }
      },
    );

  program
    .command('status')
    .description('Show every validator: pod, chain state, phase and reason.')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const api = client(command);
      const answer = await api.get<{ validators: ValidatorStatus[] }>('/v1/validators');
      if (answer.status !== 200) failOn(answer, 'status');
      if (options.json === true) print(answer.body);
      else process.stdout.write(`${statusTable(answer.body.validators)}\n`);
    });

  program
    .command('plan')
    .description('Dry run: the actions the manager would take now, and why.')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const answer = await client(command).get<PlanView>('/v1/plan');
      if (answer.status !== 200) failOn(answer, 'plan');
      const view = answer.body;
      if (options.json === true) return print(view);
      process.stdout.write(
        `height ${view.height}${view.paused ? ', PAUSED' : ''}${view.synced ? '' : ', not synced yet'}\n`,
      );
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
    .option('--validator <id>', 'only this validator')
    .option('--json', 'print JSON')
    .action(
      async (options: { limit: number; validator?: string; json?: boolean }, command: Command) => {
        const query = new URLSearchParams({
          limit: String(options.limit),
          ...(options.validator === undefined ? {} : { validator: options.validator }),
        });
        const answer = await client(command).get<{ actions: ActionSummary[] }>(
          `/v1/actions?${query.toString()}`,
        );
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
          )}\n`,
        );
      },
    );

  for (const [name, description] of [
    ['pause', 'Stop taking actions (status and plan keep working).'],
    ['resume', 'Take actions again.'],
  ] as const) {
    program
      .command(name)
      .description(description)
      .action(async (_options: unknown, command: Command) => {
        const answer = await client(command).post<{ paused: boolean }>(`/v1/${name}`, {});
        if (answer.status !== 200) failOn(answer, name);
        process.stdout.write(`${answer.body.paused ? 'paused' : 'resumed'}\n`);
      });
  }

  program
    .command('trigger-view')
    .description('Commit the next block on a chain with a manual pacemaker.')
    .action(async (_options: unknown, command: Command) => {
      const answer = await client(command).post<{ height: number }>('/v1/trigger-view', {});
      if (answer.status !== 200) failOn(answer, 'trigger-view');
      process.stdout.write(`height ${answer.body.height}\n`);
    });

  program
    .command('watch')
    .description('Follow phase changes and actions as they happen (Ctrl-C to stop).')
    .action(async (_options: unknown, command: Command) => {
      const api = client(command);
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      await api.stream((event, data) => {
        const d = data as Record<string, string | number | boolean | null | undefined>;
        const time = new Date().toISOString().slice(11, 19);
        if (event === 'phase')
          process.stdout.write(
            `${time} ${String(d.key)} ${String(d.from ?? '-')} → ${String(d.to)}: ${String(d.reason)}\n`,
          );
        else if (event === 'action')
          process.stdout.write(
            `${time} ${String(d.validatorId)} ${String(d.kind)} ${String(d.state)}${d.txHash ? ` ${String(d.txHash).slice(0, 16)}` : ''}\n`,
          );
        else if (event === 'height') process.stdout.write(`${time} height ${String(d.height)}\n`);
        else if (event === 'paused')
          process.stdout.write(`${time} ${d.paused === true ? 'paused' : 'resumed'}\n`);
      }, stop.signal);
    });
}
