// The types of cells.js (the page's module, plain JavaScript so that the browser loads it as
// served) for the TypeScript that shares it: the terminal grid and the tests.
export type CellState = 'stake' | 'unstake' | 'proposer' | 'signed' | 'missed' | 'out' | 'unknown';

export interface HeightTx {
  kind: string;
  validator: string;
  hash: string;
  resultCode: number;
}

export interface Height {
  height: number;
  hash: string;
  time: string | null;
  proposer: string | null;
  signers: string[];
  absent: string[] | null;
  transactions: HeightTx[];
}

export const LEGEND: ReadonlyArray<{
  state: CellState;
  symbol: string;
  label: string;
}>;

export function statesAt(height: Height): (validator: string) => CellState;
