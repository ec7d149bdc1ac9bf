// @ts-check
// What one cell of the participation grid shows — a validator at a height — from the
// participation read's height object (GET /v1/participation, the `block` event). One source for
// the page (this file is served at /ui/cells.js) and the terminal grid (src/manager/cli/, through
// cells.d.ts): the two cannot disagree on what a cell means.

/**
 * @typedef {'stake' | 'unstake' | 'proposer' | 'signed' | 'missed' | 'out' | 'unknown'} CellState
 * @typedef {{ kind: string, validator: string, hash: string, resultCode: number }} HeightTx
 * @typedef {{ height: number, hash: string, time: string | null, proposer: string | null,
 *   signers: string[], absent: string[] | null, transactions: HeightTx[] }} Height
 */

/**
 * The states in the legend's order, each with its terminal symbol and its words (the page colours
 * them: style.css, `.s-<state>`). A cell shows the first that holds: an applied stake or unstake,
 * proposing, signing, missing (staked and not signing); otherwise the validator was not staked,
 * or, where the manager does not know the staked set of that height, not known.
 * @type {ReadonlyArray<{ state: CellState, symbol: string, label: string }>}
 */
export const LEGEND = Object.freeze([
  { state: 'signed', symbol: 'o', label: 'signed' },
  { state: 'proposer', symbol: 'P', label: 'proposed' },
  { state: 'missed', symbol: 'X', label: 'missed' },
  { state: 'stake', symbol: '+', label: 'stake committed' },
  { state: 'unstake', symbol: '-', label: 'unstake committed' },
  { state: 'out', symbol: '.', label: 'not staked' },
  { state: 'unknown', symbol: '?', label: 'not known' },
]);

/**
 * The state of every validator at `height`: a lookup built once per height (a read of 1,000
 * validators × 200 heights asks it 200,000 times).
 * @param {Height} height
 * @returns {(validator: string) => CellState}
 */
export function statesAt(height) {
  /** @type {Map<string, CellState>} */
  const states = new Map();
  for (const validator of height.absent ?? []) states.set(validator, 'missed');
  for (const validator of height.signers) states.set(validator, 'signed');
  if (height.proposer !== null) states.set(height.proposer, 'proposer');
  for (const tx of height.transactions)
    if (tx.resultCode === 0 && (tx.kind === 'stake' || tx.kind === 'unstake'))
      states.set(tx.validator, tx.kind);
  /** @type {CellState} */
  const otherwise = height.absent === null ? 'unknown' : 'out';
  return (validator) => states.get(validator) ?? otherwise;
}
