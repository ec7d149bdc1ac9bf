// Shows the validators' status while the devnet runs. On a terminal: a table redrawn in place,
// sized to the window (the debug CLI's validator table: the columns that fit, reasons cut at a
// word, or wrapped with `devnet --wide`), drawn again when the window is resized. Elsewhere (a
// pipe, a log file): one plain line per validator whose phase changed, with its reason whole.
import type { ValidatorStatus } from '../manager/status.ts';
import { LiveRegion, screenOf, type Screen } from '../manager/cli/screen.ts';
import type { ProgressOut } from '../manager/cli/scale-progress.ts';
import { tableLines, wrapWords, type TableColumn } from '../manager/cli/validator-table.ts';

export interface StatusBoardOptions {
  url: string;
  /** The control RPC's bearer token (every /v1 read needs it). */
  token?: string | undefined;
  out: ProgressOut;
  intervalMs?: number;
  /** Reasons whole, wrapped onto more lines, instead of cut to fit one line. */
  wide?: boolean;
  env?: NodeJS.ProcessEnv;
}

const COLUMNS: readonly TableColumn<ValidatorStatus>[] = [
  { header: 'ID', value: (v) => v.id ?? v.key.slice(0, 8), priority: 9, required: true },
  { header: 'POD', value: (v) => v.pod ?? '-', priority: 2 },
  { header: 'CHAIN', value: (v) => v.chain.status, priority: 1 },
  { header: 'PHASE', value: (v) => v.phase, priority: 8, required: true },
  { header: 'REASON', value: (v) => v.reason, priority: 0 },
];

const clock = (): string => new Date().toISOString().slice(11, 19);

/** The board's lines for `screen`: a title, the table, a note when reasons were cut. */
export function boardLines(
  validators: readonly ValidatorStatus[],
  screen: Screen,
  options: { wide: boolean; time: string },
): string[] {
  const rows = validators.slice(0, Math.max(1, screen.height - 4));
  const table = tableLines(rows, COLUMNS, { width: screen.width, wide: options.wide });
  const notes = [
    ...(rows.length < validators.length
      ? [`… ${validators.length - rows.length} more (cluster-manager status shows all)`]
      : []),
    ...(table.cut ? ['(reasons cut to fit: cluster-manager status, or devnet --wide)'] : []),
  ];
  return [
    `validators (${options.time}):`,
    ...table.lines,
    ...notes.flatMap((note) => wrapWords(note, screen.width)),
  ];
}

export class StatusBoard {
  readonly #options: StatusBoardOptions;
  readonly #tty: boolean;
  readonly #region: LiveRegion;
  #timer: NodeJS.Timeout | undefined;
  #last = '';
  #validators: readonly ValidatorStatus[] = [];
  /** Each validator's phase as last printed (off a terminal). */
  readonly #phases = new Map<string, string>();
  readonly #onResize = (): void => this.#draw();

  constructor(options: StatusBoardOptions) {
    this.#options = options;
    this.#tty = options.out.isTTY === true;
    this.#region = new LiveRegion(this.#screen());
  }

  #screen(): Screen {
    return screenOf(
      this.#options.out,
      this.#options.env === undefined ? {} : { env: this.#options.env },
    );
  }

  start(): void {
    if (this.#tty) this.#options.out.on?.('resize', this.#onResize);
    const tick = async (): Promise<void> => {
      await this.#refresh().catch(() => undefined);
      if (this.#timer !== undefined)
        this.#timer = setTimeout(() => void tick(), this.#options.intervalMs ?? 1_000);
    };
    this.#timer = setTimeout(() => void tick(), 0);
  }

  /** Something else wrote a line below the board: the next draw starts there, in full. */
  lineWritten(): void {
    this.#region.release();
    this.#last = '';
  }

  stop(): void {
    this.#options.out.off?.('resize', this.#onResize);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #refresh(): Promise<void> {
    const response = await fetch(`${this.#options.url}/v1/validators`, {
      headers: { authorization: `Bearer ${this.#options.token ?? ''}` },
      signal: AbortSignal.timeout(2_000),
    });
    if (!response.ok) return;
    this.show(((await response.json()) as { validators: ValidatorStatus[] }).validators);
  }

  /** Shows a snapshot of GET /v1/validators (redrawn only when something in it changed). */
  show(validators: readonly ValidatorStatus[]): void {
    if (!this.#tty) {
      this.#plain(validators);
      return;
    }
    const body = JSON.stringify(
      validators.map((v) => [v.key, v.pod, v.chain.status, v.phase, v.reason]),
    );
    if (body === this.#last) return;
    this.#last = body;
    this.#validators = validators;
    this.#draw();
  }

  #draw(): void {
    if (this.#validators.length === 0) return;
    const screen = this.#screen();
    this.#region.draw(
      boardLines(this.#validators, screen, { wide: this.#options.wide === true, time: clock() }),
      screen,
    );
  }

  /** Off a terminal: a line per validator whose phase changed, reason whole. */
  #plain(validators: readonly ValidatorStatus[]): void {
    for (const v of validators) {
      const id = v.id ?? v.key;
      const before = this.#phases.get(id);
      if (before === v.phase) continue;
      this.#phases.set(id, v.phase);
      this.#options.out.write(
        `${clock()} ${id} ${before === undefined ? '' : `${before} → `}${v.phase} (${v.reason})\n`,
      );
    }
  }
}
