// The live progress of `scale --wait`, per validator, in its phases: pending → staking → staked →
// active (leaving: active → unstaking → unstaked). On a terminal a table redrawn in place, sized
// to the window (validator-table.ts: the columns that fit, reasons cut at a word, or wrapped with
// `--wide`), drawn again when the window is resized; elsewhere one plain line per phase change.
import type { ValidatorStatus } from '../status.ts';
import { isSettled } from './render.ts';
import { LiveRegion, screenOf, visibleLength, type Screen, type ScreenOut } from './screen.ts';
import { tableLines, wrapWords, type TableColumn } from './validator-table.ts';

/** The stream progress goes to (stderr): a terminal tells of a resize with a `resize` event. */
export interface ProgressOut extends ScreenOut {
  on?(event: 'resize', listener: () => void): unknown;
  off?(event: 'resize', listener: () => void): unknown;
}

export interface ProgressOptions {
  /** Reasons whole, wrapped onto more lines (`--wide`), instead of cut to fit one line. */
  wide?: boolean;
  env?: NodeJS.ProcessEnv;
}

const check = (done: boolean): string => (done ? '[x]' : '[ ]');

/** The table's columns, most needed first: the steps and the pod go first on a narrow screen. */
const COLUMNS: readonly TableColumn<ValidatorStatus>[] = [
  { header: 'ID', value: (v) => v.id ?? v.key.slice(0, 12), priority: 9, required: true },
  { header: 'POD', value: (v) => v.pod ?? '-', priority: 2 },
  { header: 'PHASE', value: (v) => v.phase, priority: 8, required: true },
  {
    header: 'STEPS',
    value: (v) =>
      v.wanted
        ? `${check(v.ready || v.chain.status === 'staked')} pod ready  ${check(v.chain.status === 'staked')} staked  ${check(v.phase === 'active')} active`
        : 'leaving',
    priority: 1,
  },
  { header: 'REASON', value: (v) => v.reason, priority: 0 },
];

export class ScaleProgress {
  readonly #out: ProgressOut;
  readonly #options: ProgressOptions;
  readonly #tty: boolean;
  readonly #stages = new Map<string, string>();
  readonly #region: LiveRegion;
  /** Whether a snapshot has been shown: the first one is the state before the scale. */
  #shown = false;
  #last: readonly ValidatorStatus[] = [];
  /**
   * The lines `note` wrote (on a terminal): drawn with the table, above it, so that a redraw after
   * a resize brings them back too — a terminal that rewraps the table may push the rows above it
   * out of the window, where no redraw in place reaches.
   */
  readonly #notes: string[] = [];
  readonly #onResize = (): void => this.#draw();

  constructor(out: ProgressOut, options: ProgressOptions = {}) {
    this.#out = out;
    this.#options = options;
    this.#tty = out.isTTY === true;
    this.#region = new LiveRegion(this.#screen());
    if (this.#tty) out.on?.('resize', this.#onResize);
  }

  #screen(): Screen {
    return screenOf(this.#out, this.#options.env === undefined ? {} : { env: this.#options.env });
  }

  /** Shows a fresh snapshot of GET /v1/validators. */
  show(validators: readonly ValidatorStatus[]): void {
    const shown = validators.filter(
      (v) => v.id !== null && (v.wanted || v.pod !== null || v.chain.status === 'staked'),
    );
    for (const v of shown) {
      const id = v.id ?? v.key;
      const before = this.#stages.get(id);
      this.#stages.set(id, v.phase);
      // Off a terminal, the first snapshot only reports who is not settled yet. A validator that
      // first shows up in a later one is reported whatever its phase: a slow machine may see a
      // joiner only once it is already active.
      if (!this.#tty && before !== v.phase && (this.#shown || !isSettled(v, 'active')))
        this.#out.write(
          `${id}: ${before === undefined ? '' : `${before} → `}${v.phase} (${v.reason})\n`,
        );
    }
    this.#shown = true;
    this.#last = shown;
    if (this.#tty) this.#draw();
  }

  /** The lines of the table for `screen`: at most as many as its height leaves room for. */
  lines(validators: readonly ValidatorStatus[], screen: Screen): string[] {
    const room = Math.max(3, screen.height - 3);
    let rows = validators;
    let hidden = 0;
    if (rows.length + 1 > room) {
      // Who is not there yet first; the settled ones are counted.
      const open = rows.filter((v) => !isSettled(v, 'active'));
      rows = open.slice(0, room - 2);
      hidden = validators.length - rows.length;
    }
    const table = tableLines(rows, COLUMNS, {
      width: screen.width,
      wide: this.#options.wide === true,
    });
    const notes = [
      ...(hidden > 0 ? [`… ${hidden} more, where the scale wants them or not shown`] : []),
      ...(table.cut ? ['(reasons cut to fit: scale --wide shows them whole)'] : []),
    ];
    return [...table.lines, ...notes.flatMap((note) => wrapWords(note, screen.width))];
  }

  #draw(): void {
    const screen = this.#screen();
    const notes = this.#notes.flatMap((note) =>
      visibleLength(note) <= screen.width ? [note] : wrapWords(note, screen.width),
    );
    const table = this.#last.length === 0 ? [] : this.lines(this.#last, screen);
    this.#region.draw([...notes, ...table], screen);
  }

  note(text: string): void {
    if (!this.#tty) {
      this.#out.write(`${text}\n`);
      return;
    }
    this.#notes.push(text);
    this.#draw();
  }

  /** Writes the last line under the table, which stays on the screen. */
  finish(text: string): void {
    this.#out.off?.('resize', this.#onResize);
    this.#region.release();
    this.#out.write(`${text}\n`);
  }
}
