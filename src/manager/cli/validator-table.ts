// A table of validators sized to the screen (screen.ts): the columns that fit the width, in order
// of priority (the rest left out), the last one — the reason — taking what is left, cut at a word
// with an ellipsis, or with `wide` wrapped onto lines of its own below its row. No line it draws
// is wider than the screen, so a terminal never wraps one and a redraw in place erases it all.
// The `scale --wait` progress and the devnet's board are drawn with it.
import { fit, visibleLength } from './screen.ts';

export interface TableColumn<Row> {
  readonly header: string;
  readonly value: (row: Row) => string;
  /** Lower goes first when the width is short (the flexible last column is never dropped). */
  readonly priority: number;
  /** Never left out for the last column's room (a row without it would not say what it is). */
  readonly required?: boolean;
}

export interface TableOptions {
  readonly width: number;
  /** Wrap the last column onto more lines instead of cutting it. */
  readonly wide: boolean;
  /** The narrowest the last column is let be before a column is dropped for it (default 48). */
  readonly minLast?: number;
}

const GAP = '  ';

/** `text` cut to at most `width` characters at a word (an ellipsis marks the cut). */
export function cutAtWord(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  if (width <= 1) return width === 1 ? '…' : '';
  const head = chars.slice(0, width - 1).join('');
  const space = head.lastIndexOf(' ');
  // A word longer than half the room is cut inside rather than leave the room empty.
  const cut = space >= (width - 1) / 2 ? head.slice(0, space) : head;
  return `${cut.trimEnd()}…`;
}

/** `text` broken into lines of at most `width` characters, between words where it can. */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    const next = line === '' ? word : `${line} ${word}`;
    if ([...next].length <= width) {
      line = next;
      continue;
    }
    if (line !== '') lines.push(line);
    // A word wider than the line is split across lines.
    let rest = [...word];
    while (rest.length > width) {
      lines.push(rest.slice(0, width).join(''));
      rest = rest.slice(width);
    }
    line = rest.join('');
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

/**
 * The table's lines — a header, then each row (with `wide`, its last column wrapped below it) —
 * with the columns the width allows: the fixed ones take the width of their longest value, the
 * last one takes the rest, and while it would get less than `minLast` the fixed column of lowest
 * priority that is not `required` is left out.
 */
export function tableLines<Row>(
  rows: readonly Row[],
  columns: readonly TableColumn<Row>[],
  options: TableOptions,
): { lines: string[]; cut: boolean } {
  const last = columns.at(-1);
  if (last === undefined) return { lines: [], cut: false };
  const cells = rows.map((row) => columns.map((c) => c.value(row)));
  const widthOf = (i: number): number =>
    Math.max(
      visibleLength(columns[i]?.header ?? ''),
      ...cells.map((r) => visibleLength(r[i] ?? '')),
    );
  let shown = columns.slice(0, -1).map((_, i) => i);
  const fixed = (): number => shown.reduce((sum, i) => sum + widthOf(i) + GAP.length, 0);
  const minLast = Math.min(options.minLast ?? 48, widthOf(columns.length - 1));
  const optional = (): number[] => shown.filter((i) => columns[i]?.required !== true);
  while (optional().length > 0 && options.width - fixed() < minLast) {
    const drop = optional().reduce((a, b) =>
      (columns[b]?.priority ?? 0) < (columns[a]?.priority ?? 0) ? b : a,
    );
    shown = shown.filter((i) => i !== drop);
  }
  const room = Math.max(1, options.width - fixed());
  const line = (values: readonly string[], lastText: string): string =>
    fit(
      [...shown.map((i) => (values[i] ?? '').padEnd(widthOf(i))), lastText].join(GAP).trimEnd(),
      options.width,
    );
  const head = line(
    columns.map((c) => c.header),
    last.header,
  );
  let cut = false;
  const body = cells.flatMap((values) => {
    const text = values.at(-1) ?? '';
    if (!options.wide) {
      const shortened = cutAtWord(text, room);
      cut ||= shortened !== text;
      return [line(values, shortened)];
    }
    const [first = '', ...more] = wrapWords(text, room);
    const indent = ' '.repeat(Math.max(0, options.width - room));
    return [line(values, first), ...more.map((part) => fit(`${indent}${part}`, options.width))];
  });
  return { lines: [head, ...body], cut };
}
