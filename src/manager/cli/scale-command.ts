// `cluster-manager scale N`: POST /v1/scale with live progress. It tells the truth early: the
// manager answers SCALE_BLOCKED when the wait cannot end; on a timeout or Ctrl-C it says what
// the manager is still doing (it goes on) and how to follow it; `--drive` is named whenever no
// block came without it.
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, examples, ExitCode } from '../../cli/program.ts';
import type { ScaleResult } from '../scale/scaler.ts';
import type { ValidatorStatus } from '../status.ts';
import { failOn, type Answer, type ControlClient } from './control-client.ts';
import { isSettled } from './render.ts';
import { ScaleProgress } from './scale-progress.ts';
import { clientOf, targetOf, type ServerTarget } from './server-target.ts';

/** A count with no bound of its own (the manager knows the chain's, and answers past it). */
function wholeNumber(what: string) {
  return (value: string): number => {
    // Up to 15 digits: past that a number loses its units in a double. The manager answers
    // any count above the chain's own bound with that bound.
    if (!/^\d+$/.test(value))
      throw new InvalidArgumentError(
        `${what} must be a whole number, got ${JSON.stringify(value)}`,
      );
    if (value.replace(/^0+(?=\d)/, '').length > 15)
      throw new InvalidArgumentError(`${what} is too large (at most 15 digits), got ${value}`);
    return Number(value);
  };
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

/** How to type a follow-up command against the same manager. */
export function commandPrefix(target: ServerTarget): string {
  if (target.devnet !== undefined)
    return `npx cluster-manager${target.devnet.explicit ? ` --devnet ${target.devnet.dir}` : ''}`;
  return target.source === '--server'
    ? `cluster-manager --server ${target.server}`
    : 'cluster-manager';
}

/**
 * What the manager is still doing for a scale to `replicas`: the validators not yet where the
 * scale wants them (wanted and not active/staked, or leaving and still in the set).
 */
export function stillHappening(
  validators: readonly ValidatorStatus[],
  wait: 'staked' | 'active' | 'none',
): string[] {
  const open: string[] = [];
  for (const v of validators) {
    if (v.id === null) continue;
    if (!isSettled(v, wait)) open.push(`${v.id} ${v.phase} (${v.reason})`);
  }
  return open;
}

interface ScaleFlags {
  wait: string;
  timeout: number;
  drive: boolean;
  force: boolean;
  json?: boolean;
  wide?: boolean;
}

export function registerScaleCommand(program: Command): void {
  program
    .command('scale')
    .description(
      'Scale the validators to N (draining first when scaling down) and optionally wait for the chain.',
    )
    .argument(
      '<replicas>',
      "number of validators (the manager refuses more than the chain's ids)",
      wholeNumber('<replicas>'),
    )
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
    .option('--json', 'print the answer as JSON on stdout')
    .option(
      '--wide',
      "on a terminal, show each validator's reason whole (wrapped onto more lines) instead of cut to fit the width",
    )
    .addHelpText(
      'after',
      examples([
        ['cluster-manager scale 6 --wait active', 'two more validators, back once they sign'],
        ['cluster-manager scale 6 --wait active --drive', 'the same on a manual-pacemaker chain'],
        ['cluster-manager scale 3 --wait active', 'drain 004–006 first, then remove their pods'],
        ['cluster-manager scale 3', 'ask, and let the drain go on in the background'],
      ]),
    )
    .action(async (replicas: number, options: ScaleFlags, command: Command) => {
      if (!['none', 'staked', 'active'].includes(options.wait))
        throw new CliError('--wait must be none, staked or active', ExitCode.usage);
      const wait = options.wait as 'none' | 'staked' | 'active';
      const target = await targetOf(command);
      const api = clientOf(target, (options.timeout + 30) * 1000);
      await scale(api, target, { ...options, wait, replicas });
    });
}

async function scale(
  api: ControlClient,
  target: ServerTarget,
  options: ScaleFlags & { wait: 'none' | 'staked' | 'active'; replicas: number },
): Promise<void> {
  const { replicas, wait } = options;
  const progress = new ScaleProgress(process.stderr, { wide: options.wide === true });
  const refresh = refresher(async () => {
    const answer = await api.get<{ validators: ValidatorStatus[] }>('/v1/validators');
    if (answer.status === 200) progress.show(answer.body.validators);
  });
  let heights = 0;
  const follow = new AbortController();
  const followed =
    wait === 'none'
      ? Promise.resolve()
      : api
          .stream((event) => {
            if (event === 'height') heights++;
            if (event !== 'hello') refresh.soon();
          }, follow.signal)
          .catch(() => undefined);
  // Ctrl-C (or SIGTERM) ends the wait, not the scale: the manager goes on, and we say so.
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void =>
    interrupt.abort(new Interrupted(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let answer: Answer<ScaleResult> | Interrupted;
  try {
    if (wait !== 'none') {
      progress.note(`scaling to ${replicas} (wait: ${wait})…`);
      // The state before the scale, shown before it is asked for: what is settled now is not
      // reported, and every change after it is (a joiner first seen already active too).
      const before = await api
        .get<{ validators: ValidatorStatus[] }>('/v1/validators')
        .catch(() => undefined);
      if (before?.status === 200) progress.show(before.body.validators);
    }
    answer = await api
      .post<ScaleResult>(
        '/v1/scale',
        {
          replicas,
          wait,
          timeoutSeconds: options.timeout,
          drive: options.drive,
          ...(options.force ? { force: true } : {}),
        },
        { signal: interrupt.signal },
      )
      .catch((error: unknown) => {
        if (error instanceof Interrupted) return error;
        throw error;
      });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    follow.abort();
    await followed;
    await refresh.stop();
  }
  if (answer instanceof Interrupted) {
    await afterwards(api, target, wait, `interrupted by ${answer.signal}`);
    throw new CliError(
      `interrupted; the scale to ${replicas} goes on in the manager`,
      answer.signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated,
    );
  }
  if (options.json === true) process.stdout.write(`${JSON.stringify(answer.body, null, 2)}\n`);
  const noBlocks = !options.drive && (target.devnet?.info.pacemaker === 'manual' || heights === 0);
  if (answer.status === 504) {
    const result = answer.body;
    await afterwards(api, target, wait, 'not there yet');
    const missing = result.missing.map((m) => `${m.id} (${m.phase}: ${m.reason})`).join('; ');
    throw new CliError(
      `timed out after ${Math.round(result.elapsedMs / 1000)} s; not there yet: ${missing}` +
        (noBlocks
          ? '; no block came while waiting: a chain with a manual pacemaker needs --drive'
          : ''),
      ExitCode.timedOut,
    );
  }
  if (answer.status === 409 && errorCode(answer) === 'SCALE_BLOCKED')
    await afterwards(api, target, wait, 'stopped waiting');
  if (answer.status !== 200 && answer.status !== 202) failOn(answer, 'scale');
  const result = answer.body;
  if (wait !== 'none') {
    const final = await api.get<{ validators: ValidatorStatus[] }>('/v1/validators');
    if (final.status === 200) progress.show(final.body.validators);
  }
  progress.finish(
    answer.status === 202
      ? `${result.statefulSet}: draining ${result.drained.join(', ')}; the replicas drop from ${result.previous} to ${result.replicas} once they have left the validator set`
      : `${result.statefulSet}: ${result.previous} → ${result.replicas}${result.drained.length > 0 ? `, drained ${result.drained.join(', ')}` : ''}; done in ${(result.elapsedMs / 1000).toFixed(1)} s at height ${result.height}`,
  );
}

class Interrupted extends Error {
  readonly signal: 'SIGINT' | 'SIGTERM';
  constructor(signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`);
    this.signal = signal;
  }
}

function errorCode(answer: Answer<unknown>): string | undefined {
  const error = (answer.body as { error?: { code?: unknown } } | null)?.error;
  return typeof error?.code === 'string' ? error.code : undefined;
}

/**
 * After the wait ended without the answer (Ctrl-C, timeout, blocked): what the manager is still
 * doing, read fresh, and how to follow it. Best effort: a manager that does not answer within
 * 2 s is only named.
 */
async function afterwards(
  api: ControlClient,
  target: ServerTarget,
  wait: 'none' | 'staked' | 'active',
  why: string,
): Promise<void> {
  const cli = commandPrefix(target);
  let open: string[] | undefined;
  try {
    const answer = await api.get<{ validators: ValidatorStatus[] }>('/v1/validators', {
      timeoutMs: 2_000,
    });
    if (answer.status === 200) open = stillHappening(answer.body.validators, wait);
  } catch {
    // the manager did not answer: say only how to follow it
  }
  const doing =
    open === undefined
      ? 'the manager goes on'
      : open.length === 0
        ? 'the manager goes on; nothing is left to do now'
        : `the manager goes on: ${open.join('; ')}`;
  process.stderr.write(`${why}; ${doing}\n  follow it: ${cli} watch   (or: ${cli} status)\n`);
}
