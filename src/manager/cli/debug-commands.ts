// The debug CLI: `scale`, `status`, `plan`, `actions`, `pause`, `resume`, `trigger-view`,
// `watch` — a client of the control RPC. Exit codes: 0 done, 1 failed, 2 usage, 3 timed out.
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, ExitCode } from '../../cli/program.ts';
import type { PlanView } from '../rpc/control-plane.ts';
import type { ScaleResult } from '../scale/scaler.ts';
import type { ActionSummary, ValidatorStatus } from '../status.ts';
import { ControlClient, failOn, type Answer } from './control-client.ts';
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

/** Runs `task` soon after a burst of calls to `soon()`, never two at once. */
function refresher(task: () => Promise<void>, delayMs = 150) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = (): void => {
    timer = undefined;
    if (stopped) return;
    running = (running ?? Promise.resolve())
      .then(task)
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
      });
  };
  return {
    soon(): void {
      if (!stopped && timer === undefined) timer = setTimeout(run, delayMs);
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
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
    .option(
      '--force',
      'go below the minimum validator set, supersede a running drain, or drain past key problems',
      false,
    )
    .action(
      async (
        replicas: number,
        options: { wait: string; timeout: number; drive: boolean; force: boolean },
        command: Command,
      ) => {
        if (!['none', 'staked', 'active'].includes(options.wait))
          throw new CliError('--wait must be none, staked or active', ExitCode.usage);
        const api = client(command, (options.timeout + 30) * 1000);
        const progress = new ScaleProgress(process.stderr);
        const refresh = refresher(async () => {
          const answer = await api.get<{ validators: ValidatorStatus[] }>('/v1/validators');
          if (answer.status === 200) progress.show(answer.body.validators);
        });
        const follow = new AbortController();
        const followed =
          options.wait === 'none'
            ? Promise.resolve()
            : api
                .stream((event) => {
                  if (event !== 'hello') refresh.soon();
                }, follow.signal)
                .catch(() => undefined);
        let answer: Answer<ScaleResult>;
        try {
          if (options.wait !== 'none') {
            progress.note(`scaling to ${replicas} (wait: ${options.wait})…`);
            refresh.soon();
          }
          answer = await api.post<ScaleResult>('/v1/scale', {
            replicas,
            wait: options.wait,
            timeoutSeconds: options.timeout,
            drive: options.drive,
            ...(options.force ? { force: true } : {}),
          });
        } finally {
          follow.abort();
          await followed;
          await refresh.stop();
        }
        if (answer.status === 504) {
          const result = answer.body;
          const missing = result.missing.map((m) => `${m.id} (${m.phase}: ${m.reason})`).join('; ');
          throw new CliError(
            `timed out after ${Math.round(result.elapsedMs / 1000)} s; not there yet: ${missing}`,
            ExitCode.timedOut,
          );
        }
        if (answer.status !== 200 && answer.status !== 202) failOn(answer, 'scale');
        const result = answer.body;
        if (options.wait !== 'none') {
          const final = await api.get<{ validators: ValidatorStatus[] }>('/v1/validators');
          if (final.status === 200) progress.show(final.body.validators);
        }
        progress.finish(
          answer.status === 202
            ? `${result.statefulSet}: draining ${result.drained.join(', ')}; the replicas drop from ${result.previous} to ${result.replicas} once they have left the validator set`
            : `${result.statefulSet}: ${result.previous} → ${result.replicas}${result.drained.length > 0 ? `, drained ${result.drained.join(', ')}` : ''}; done in ${(result.elapsedMs / 1000).toFixed(1)} s at height ${result.height}`,
        );
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
    .option(
      '--before <seq>',
      'older than this sequence number (the `next` of a page)',
      integer(1, Number.MAX_SAFE_INTEGER, '--before'),
    )
    .option('--validator <id>', 'only this validator (001 …)')
    .option('--json', 'print JSON')
    .action(
      async (
        options: { limit: number; before?: number; validator?: string; json?: boolean },
        command: Command,
      ) => {
        if (options.validator !== undefined && !/^\d{3}$/.test(options.validator))
          throw new CliError('--validator must be an id such as 005', ExitCode.usage);
        const query = new URLSearchParams({
          limit: String(options.limit),
          ...(options.before === undefined ? {} : { before: String(options.before) }),
          ...(options.validator === undefined ? {} : { validator: options.validator }),
        });
        const answer = await client(command).get<{
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
      const answer = await client(command).post<{ height: number; committed: boolean }>(
        '/v1/trigger-view',
        {},
      );
      if (answer.status !== 200) failOn(answer, 'trigger-view');
      process.stdout.write(
        `height ${answer.body.height}${answer.body.committed ? '' : ' (no new block within 5 s)'}\n`,
      );
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
        else if (event === 'hello')
          process.stdout.write(`${time} following ${api.server} at height ${String(d.height)}\n`);
      }, stop.signal);
      if (!stop.signal.aborted)
        throw new CliError(`the manager at ${api.server} closed the event stream`, ExitCode.failed);
    });
}
