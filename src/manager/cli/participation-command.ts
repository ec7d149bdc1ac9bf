// `cluster-manager participation [--from H] [--to H] [-f] [--json]`: who signed, missed and
// proposed each height, as a grid (participation-grid.ts) of GET /v1/participation. `-f` follows
// the event stream's `block` events: on a terminal the grid is redrawn in place; elsewhere one
// line per new height follows the grid. `--json` prints the read (with `-f`, one line per block).
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, examples, ExitCode } from '../../cli/program.ts';
import type { Participation } from '../participation/participation.ts';
import type { Height } from '../ui/cells.js';
import { failOn, type ControlClient } from './control-client.ts';
import { heightLine, participationLines } from './participation-grid.ts';
import { LiveRegion, screenOf, type Screen } from './screen.ts';
import { clientOf, targetOf } from './server-target.ts';

interface Options {
  from?: number;
  to?: number;
  follow?: boolean;
  json?: boolean;
  width?: number;
}

/** Heights a follower keeps (the widest terminal shows fewer). */
const FOLLOW_KEEP = 1_000;

function height(what: string) {
  return (value: string): number => {
    if (!/^[1-9]\d{0,15}$/.test(value))
      throw new InvalidArgumentError(`${what} must be a height: an integer of 1 or more`);
    return Number(value);
  };
}

function columns(value: string): number {
  if (!/^\d{1,4}$/.test(value) || Number(value) < 40)
    throw new InvalidArgumentError('--width must be 40 or more columns');
  return Number(value);
}

export function registerParticipationCommand(program: Command): void {
  program
    .command('participation')
    .description(
      'Who signed, missed and proposed each committed height, and its stakes and unstakes: a grid, one row per validator, the newest heights at the right.',
    )
    .option(
      '--from <height>',
      'the first height (default: as many as fit, up to the newest)',
      height('--from'),
    )
    .option('--to <height>', 'the last height (default: the newest)', height('--to'))
    .option(
      '-f, --follow',
      'keep following new blocks (redrawn on a terminal; one line per block otherwise)',
    )
    .option('--json', 'print the read as JSON (with -f: each block as one JSON line)')
    .option(
      '--width <columns>',
      'draw for this many columns (default: the terminal; 80 off one)',
      columns,
    )
    .addHelpText(
      'after',
      examples([
        ['cluster-manager participation', 'the last heights that fit the terminal'],
        ['cluster-manager participation -f', 'live, until Ctrl-C'],
        ['cluster-manager participation --from 100 --to 160', 'a window'],
        ['cluster-manager participation --json | jq .heights[0]', 'for a script'],
      ]),
    )
    .action(async (options: Options, command: Command) => {
      const api = clientOf(await targetOf(command));
      const screen = screenOf(process.stdout, { width: options.width });
      const read = await readWindow(api, options, screen);
      if (options.json === true) process.stdout.write(`${JSON.stringify(read, null, 2)}\n`);
      if (options.follow !== true) {
        if (options.json !== true) screen.write(`${participationLines(read, screen).join('\n')}\n`);
        return;
      }
      await follow(api, read, options, screen);
    });
}

/** The window to read: as asked, or as many heights as the screen shows, ending at the newest. */
async function readWindow(
  api: ControlClient,
  options: Options,
  screen: Screen,
): Promise<Participation> {
  const query = new URLSearchParams();
  if (options.from !== undefined) query.set('from', String(options.from));
  if (options.to !== undefined) query.set('to', String(options.to));
  if (options.from === undefined && options.json !== true) {
    // As many heights as columns: ask for the newest `width` (the read's default is 50).
    const ready = await api.get<{ chain?: { height?: number } }>('/readyz');
    const newest = options.to ?? ready.body.chain?.height ?? 0;
    if (newest > 0) {
      query.set('from', String(Math.max(1, newest - Math.min(screen.width, 1_000) + 1)));
      query.set('to', String(newest));
    }
  }
  const path = `/v1/participation${query.size === 0 ? '' : `?${query.toString()}`}`;
  const answer = await api.get<Participation>(path);
  if (answer.status !== 200) failOn(answer, 'participation');
  return answer.body;
}

async function follow(
  api: ControlClient,
  first: Participation,
  options: Options,
  screen: Screen,
): Promise<void> {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const heights: Height[] = [...first.heights];
  const validators = new Set(first.validators);
  let newest = first.height;
  const region = new LiveRegion(screen);
  const draw = (): void =>
    region.draw(
      participationLines(
        { validators: [...validators].sort(idsFirst), height: newest, heights },
        screen,
      ),
    );
  if (options.json !== true) draw();
  await api.stream((event, data) => {
    if (event !== 'block' || typeof data !== 'object' || data === null) return;
    const block = data as Height;
    if (options.json === true) {
      process.stdout.write(`${JSON.stringify(block)}\n`);
      return;
    }
    if (heights.some((h) => h.height >= block.height)) return;
    heights.push(block);
    if (heights.length > FOLLOW_KEEP) heights.shift();
    newest = Math.max(newest, block.height);
    for (const v of [...block.signers, ...(block.absent ?? [])]) validators.add(v);
    if (block.proposer !== null) validators.add(block.proposer);
    if (screen.tty) draw();
    else screen.write(`${heightLine(block, screen.width)}\n`);
  }, stop.signal);
  if (!stop.signal.aborted)
    throw new CliError(`the manager at ${api.server} closed the event stream`, ExitCode.failed);
}

/** Validator ids (short) before bare addresses, each in text order, as the read lists them. */
function idsFirst(a: string, b: string): number {
  return Number(a.length > 16) - Number(b.length > 16) || (a < b ? -1 : a > b ? 1 : 0);
}
