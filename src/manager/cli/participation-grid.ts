// The participation grid in a terminal: one row per validator, one column per height (newest at
// the right), each cell what cells.js says that validator did at that height (the page reads the
// same module), and a legend. Also the one-line form of a new height, for `-f` off a terminal.
import type { Participation } from '../participation/participation.ts';
import { LEGEND, statesAt, type CellState, type Height } from '../ui/cells.js';
import { renderGrid, visibleColumns, type GridCell, type LegendItem } from './grid.ts';
import { fit, Style, type Screen } from './screen.ts';

/** What the grid reads of a participation answer. */
export type GridInput = Pick<Participation, 'validators' | 'height'> & {
  readonly heights: readonly Height[];
};

const STYLES: Readonly<Record<CellState, Style>> = {
  signed: Style.green,
  proposer: Style.cyan,
  missed: Style.red,
  stake: Style.yellow,
  unstake: Style.magenta,
  out: Style.dim,
  unknown: Style.dim,
};

/** A height the manager did not read (a gap between the heights it answered). */
const NOT_READ: LegendItem = { symbol: '_', label: 'not read', style: Style.dim };

const cellOf = new Map<CellState, GridCell>(
  LEGEND.map((item) => [item.state, { symbol: item.symbol, style: STYLES[item.state] }]),
);

/** The grid's lines for `input`, at most `screen.width` wide. */
export function participationLines(
  input: GridInput,
  screen: Pick<Screen, 'width' | 'color' | 'height'>,
): string[] {
  const byHeight = new Map(input.heights.map((h) => [h.height, h]));
  const first = input.heights[0]?.height;
  const last = input.heights.at(-1)?.height;
  const columns =
    first === undefined || last === undefined
      ? []
      : Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const states = columns.map((h) => {
    const height = byHeight.get(h);
    return height === undefined ? undefined : statesAt(height);
  });
  const rows = input.validators.map((validator) => ({
    label: validator,
    cells: states.map((state) =>
      state === undefined ? NOT_READ : (cellOf.get(state(validator)) ?? NOT_READ),
    ),
  }));
  const gaps = states.some((s) => s === undefined);
  const legend: LegendItem[] = [
    ...LEGEND.map((item) => ({
      symbol: item.symbol,
      label: item.label,
      style: STYLES[item.state],
    })),
    ...(gaps ? [NOT_READ] : []),
  ];
  if (first === undefined || last === undefined)
    return [fit(`no heights recorded yet (chain at ${input.height})`, screen.width)];
  // The heights the width leaves room for (renderGrid shows the newest of them).
  const shown = Math.min(columns.length, visibleColumns({ rows }, screen.width));
  const title = `heights ${last - shown + 1}–${last} · chain ${input.height} · ${input.validators.length} validators · newest at the right`;
  // On a terminal the whole drawing fits the window (title, header, rows, a count, legend).
  const legendLines = 3;
  const maxRows = Number.isFinite(screen.height)
    ? Math.max(1, screen.height - 4 - legendLines)
    : undefined;
  return [
    fit(title, screen.width),
    ...renderGrid({ columns, rows, legend, ...(maxRows === undefined ? {} : { maxRows }) }, screen),
  ];
}

/** One new height in one line (`-f` off a terminal): proposer, signers, who missed, stakes. */
export function heightLine(height: Height, width: number): string {
  const staked = height.absent === null ? undefined : height.signers.length + height.absent.length;
  const parts = [
    `h${height.height}`,
    `proposer ${height.proposer ?? '?'}`,
    `signed ${height.signers.length}${staked === undefined ? '' : `/${staked}`}`,
    height.absent === null
      ? 'staked set not known'
      : `missed ${height.absent.length === 0 ? '-' : height.absent.join(',')}`,
    ...height.transactions
      .filter((tx) => tx.resultCode === 0)
      .map((tx) => `${tx.kind === 'stake' ? '+' : '-'}${tx.validator}`),
  ];
  return fit(parts.join('  '), width);
}
