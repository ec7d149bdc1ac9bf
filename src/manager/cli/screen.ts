// Where the debug CLI's tables and grids are drawn: a terminal (redrawn in place, coloured, as
// wide as the window) or anything else (a pipe, a file, a CI log: plain text, no escapes, 80
// columns unless COLUMNS says otherwise). Shared by the participation grid and, later, the
// `scale --wait` table and the devnet's board: they draw lines, this fits them and draws them.

/** The stream a screen writes to (process.stdout, or a test's fake). */
export interface ScreenOut {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
}

export interface Screen {
  /** A terminal: lines may be redrawn in place, and coloured. */
  readonly tty: boolean;
  /** The most characters a line may take (no line drawn is longer: nothing wraps). */
  readonly width: number;
  /** Lines that fit the window at once (a terminal's rows; unbounded elsewhere). */
  readonly height: number;
  /** Colour escapes are written (a terminal, and NO_COLOR unset). */
  readonly color: boolean;
  write(text: string): void;
}

/** Columns assumed off a terminal when COLUMNS is not set. */
export const PLAIN_WIDTH = 80;
/** The narrowest width drawn for (a narrower terminal still gets lines of this width). */
export const MIN_WIDTH = 40;

/** The screen of `out`: its width from the terminal, `--width`, or COLUMNS (else 80). */
export function screenOf(
  out: ScreenOut,
  options: { env?: NodeJS.ProcessEnv; width?: number | undefined } = {},
): Screen {
  const env = options.env ?? process.env;
  const tty = out.isTTY === true;
  const fromEnv = Number(env.COLUMNS);
  const width =
    options.width ??
    (tty && out.columns !== undefined && out.columns > 0
      ? out.columns
      : Number.isInteger(fromEnv) && fromEnv > 0
        ? fromEnv
        : PLAIN_WIDTH);
  return {
    tty,
    width: Math.max(MIN_WIDTH, width),
    height: tty && out.rows !== undefined && out.rows > 0 ? out.rows : Number.POSITIVE_INFINITY,
    color: tty && (env.NO_COLOR ?? '') === '',
    write: (text) => void out.write(text),
  };
}

/** ANSI styles (SGR parameters) the grids use. */
export const Style = {
  green: '32',
  red: '1;31',
  yellow: '33',
  blue: '34',
  magenta: '35',
  cyan: '36',
  dim: '2',
  bold: '1',
} as const;
export type Style = (typeof Style)[keyof typeof Style];

/** `text` in `style` when the screen has colour; as is otherwise. */
export function paint(
  screen: Pick<Screen, 'color'>,
  text: string,
  style: Style | undefined,
): string {
  return screen.color && style !== undefined && text !== '' ? `\x1b[${style}m${text}\x1b[0m` : text;
}

// eslint-disable-next-line no-control-regex -- finding the escapes paint() writes is the point
const ESCAPES = /\x1b\[[0-9;]*m/g;

/** The characters `text` takes on screen (its colour escapes take none). */
export function visibleLength(text: string): number {
  return [...text.replace(ESCAPES, '')].length;
}

/** `text` cut to `width` characters on screen (an ellipsis marks the cut; a cut drops colour). */
export function fit(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  const chars = [...text.replace(ESCAPES, '')];
  return width <= 0 ? '' : `${chars.slice(0, width - 1).join('')}…`;
}

/**
 * Words (items separated by two spaces) broken into lines of at most `width`: a legend or a
 * summary that may not fit one line, broken between items, never inside one.
 */
export function wrapItems(items: readonly string[], width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const item of items) {
    const next = line === '' ? `${indent}${item}` : `${line}  ${item}`;
    if (visibleLength(next) <= width || line === '') line = fit(next, width);
    else {
      lines.push(line);
      line = fit(`${indent}${item}`, width);
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * A block of lines kept on screen and redrawn in place on a terminal (the previous drawing is
 * erased first); elsewhere each drawing is printed below the last. Lines are fitted by whoever
 * made them (`Screen.width`), so none wraps when drawn.
 *
 * A terminal made narrower meanwhile rewraps the lines already drawn (xterm, tmux, most do): the
 * erase then goes up as many rows as they take at the width of `screen` given to `draw` (the
 * screen as it is now), not one per line — or the rows the rewrap added would stay on screen,
 * an old header and duplicate rows above the new drawing.
 */
export class LiveRegion {
  #screen: Screen;
  #drawn: readonly string[] = [];

  constructor(screen: Screen) {
    this.#screen = screen;
  }

  /** Draws `lines` in place of the last drawing; `screen`: the screen now (after a resize). */
  draw(lines: readonly string[], screen: Screen = this.#screen): void {
    this.#screen = screen;
    this.#over(lines);
    this.#drawn = this.#screen.tty ? [...lines] : [];
  }

  /** Writes a line above the region (the region is drawn again by the next `draw`). */
  note(line: string): void {
    this.#over([line]);
    this.#drawn = [];
  }

  /** Leaves the last drawing on screen: the next output goes below it. */
  release(): void {
    this.#drawn = [];
  }

  /**
   * Writes `lines` over the last drawing: up to its first row, each line over the one there
   * (erased first), then what is left of the old drawing below erased. Not "up, erase to the end,
   * write": an erase from the window's top-left corner is a clear screen to tmux, which copies
   * the whole window into its history first (`scroll-on-clear`) — after a resize had put the
   * drawing at the top, every redraw left a copy of it in the scrollback.
   */
  #over(lines: readonly string[]): void {
    const rows = this.#screen.tty ? rowsTaken(this.#drawn, this.#screen.width) : 0;
    const up = rows > 0 ? `\x1b[${rows}A\r` : '';
    const body = lines.map((line) => (rows > 0 ? `\x1b[2K${line}\n` : `${line}\n`)).join('');
    const rest = rows > 0 ? '\x1b[J' : '';
    if (up + body + rest !== '') this.#screen.write(up + body + rest);
    this.#drawn = [];
  }
}

/** The terminal rows `lines` take at `width` columns (a longer line wraps onto more). */
export function rowsTaken(lines: readonly string[], width: number): number {
  return lines.reduce(
    (rows, line) => rows + Math.max(1, Math.ceil(visibleLength(line) / Math.max(1, width))),
    0,
  );
}
