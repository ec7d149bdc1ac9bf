// A grid of one-character cells for the terminal: a label per row, one column per key (a height,
// a step), the newest columns at the right, as many as the screen's width leaves room for, a
// header that marks every tenth key, and a legend broken into lines that fit. Nothing it draws is
// wider than the screen, so nothing wraps. The participation grid is one; others may follow (the
// `scale --wait` table, the devnet's board).
import { fit, paint, wrapItems, type Screen, type Style } from './screen.ts';

export interface GridCell {
  readonly symbol: string;
  readonly style?: Style | undefined;
}

export interface LegendItem extends GridCell {
  readonly label: string;
}

export interface GridRow {
  readonly label: string;
  /** One cell per column, in the order of `GridSpec.columns`. */
  readonly cells: readonly GridCell[];
}

export interface GridSpec {
  /** The columns' keys, oldest first (heights). */
  readonly columns: readonly number[];
  readonly rows: readonly GridRow[];
  /** What each symbol means, in order. */
  readonly legend: readonly LegendItem[];
  /** The widest a row label may be (longer labels are cut). */
  readonly maxLabel?: number;
  /** The most rows drawn; the rest are counted in one line. */
  readonly maxRows?: number;
}

/** Columns a label needs at least, and the gap between the labels and the cells. */
const GAP = 1;

/** How many of `columns` a screen shows (the newest): the width minus the labels. */
export function visibleColumns(spec: Pick<GridSpec, 'rows' | 'maxLabel'>, width: number): number {
  return Math.max(1, width - labelWidth(spec) - GAP);
}

function labelWidth(spec: Pick<GridSpec, 'rows' | 'maxLabel'>): number {
  const longest = Math.max(3, ...spec.rows.map((r) => [...r.label].length));
  return Math.min(longest, spec.maxLabel ?? 12);
}

/** The grid's lines: header, rows, legend; each at most `screen.width` characters. */
export function renderGrid(spec: GridSpec, screen: Pick<Screen, 'width' | 'color'>): string[] {
  const labels = labelWidth(spec);
  const shown = Math.min(spec.columns.length, visibleColumns(spec, screen.width));
  const first = spec.columns.length - shown;
  const columns = spec.columns.slice(first);
  const pad = ' '.repeat(labels + GAP);
  const lines = [fit(`${pad}${header(columns)}`.trimEnd(), screen.width)];
  const rows = spec.maxRows === undefined ? spec.rows : spec.rows.slice(0, spec.maxRows);
  for (const row of rows) {
    const cells = row.cells
      .slice(first, first + shown)
      .map((c) => paint(screen, c.symbol, c.style))
      .join('');
    lines.push(`${fit(row.label, labels).padEnd(labels)}${' '.repeat(GAP)}${cells}`);
  }
  if (rows.length < spec.rows.length)
    lines.push(fit(`… ${spec.rows.length - rows.length} more rows (--json for all)`, screen.width));
  lines.push(
    ...wrapItems(
      spec.legend.map((item) => `${paint(screen, item.symbol, item.style)} ${item.label}`),
      screen.width,
    ),
  );
  return lines;
}

/** The header over the cells: each key divisible by 10 written so that it ends above its column. */
export function header(columns: readonly number[]): string {
  const line: string[] = columns.map(() => ' ');
  let free = 0;
  for (let i = 0; i < columns.length; i++) {
    const key = columns[i];
    if (key === undefined || key % 10 !== 0) continue;
    const text = String(key);
    const start = i - text.length + 1;
    if (start < free) continue;
    for (let j = 0; j < text.length; j++) line[start + j] = text[j] ?? ' ';
    free = i + 2;
  }
  return line.join('');
}
