// @ts-check
// The grid's cells, in tiles: blocks of TILE_ROWS validators × TILE_COLUMNS heights, each a box
// of fixed size at a fixed place on the grid's plane (cells are floats that wrap at the tile's
// width: no cell has a position of its own), laid out and painted apart from the rest (contain).
// Only the tiles over the view (and a margin) exist. A tile scrolled out of it is given to one
// scrolled in: moved, and its cells' attributes rewritten where they differ; every other tile is
// left alone, so the browser keeps its paint. A cell with no validator or height behind it (past
// the last validator, before the first or after the last height of the window) has no data-*
// attribute and paints nothing, so that no cell outside the window can be found.

export const TILE_ROWS = 8;
export const TILE_COLUMNS = 16;

/**
 * @typedef {import('./cells.js').CellState} CellState
 * @typedef {(validator: string) => CellState | 'unread'} Lookup
 * @typedef {{ version: number, validators: readonly string[], base: number, first: number,
 *   last: number, lookup: (height: number) => Lookup, rowPx: number, cellPx: number }} TileData
 *   What the tiles show: cell (r, h) of the plane is validator `validators[r]` at height h, for
 *   heights `first`…`last`; a tile's place is counted from height `base` (the plane's left).
 * @typedef {{ el: HTMLElement, cells: Element[], row: number, column: number, shows: string,
 *   validators: string[], heights: number[], states: string[] }} Tile
 *   A tile's element and what its cells show now (each written only when it changes); `shows`
 *   names it (the data's version, the tile's place, the heights of the window it holds).
 */

export class Tiles {
  /** @param {HTMLElement} plane the element the tiles are placed on */
  constructor(plane) {
    this.plane = plane;
    /** @type {Map<string, Tile>} tiles built, by `row,column` (tile indices) */
    this.built = new Map();
  }

  /**
   * Shows exactly the tiles of rows `rows[0]`…`rows[1]` and columns `columns[0]`…`columns[1]`
   * (tile indices; columns counted from `data.base`), each true to `data`.
   * @param {[number, number]} rows @param {[number, number]} columns @param {TileData} data
   */
  show(rows, columns, data) {
    /** @type {Tile[]} */
    const spare = [];
    for (const [key, tile] of this.built)
      if (
        tile.row < rows[0] ||
        tile.row > rows[1] ||
        tile.column < columns[0] ||
        tile.column > columns[1]
      ) {
        this.built.delete(key);
        spare.push(tile);
      }
    /** @type {[number, number][]} */
    const missing = [];
    for (let row = rows[0]; row <= rows[1]; row++)
      for (let column = columns[0]; column <= columns[1]; column++) {
        const tile = this.built.get(`${row},${column}`);
        if (tile !== undefined) fill(tile, data);
        else {
          const reused = takeSpare(spare, row, column);
          if (reused === undefined) missing.push([row, column]);
          else this.#place(reused, row, column, data);
        }
      }
    for (const tile of spare) tile.el.remove();
    if (missing.length > 0) this.#make(missing, data);
  }

  /** @param {Tile} tile @param {number} row @param {number} column @param {TileData} data */
  #place(tile, row, column, data) {
    if (tile.row !== row) tile.el.style.gridRowStart = String(row + 1);
    if (tile.column !== column) tile.el.style.gridColumnStart = String(column + 1);
    tile.row = row;
    tile.column = column;
    this.built.set(`${row},${column}`, tile);
    fill(tile, data);
  }

  /**
   * New tiles, made together in one piece of markup with their cells' attributes in it.
   * @param {[number, number][]} where @param {TileData} data
   */
  #make(where, data) {
    /** @type {Tile[]} */
    const tiles = [];
    let html = '';
    for (const [row, column] of where) {
      /** @type {Tile} */
      const tile = {
        ...{ el: this.plane, cells: [], row, column, shows: '' },
        ...{ validators: [], heights: [], states: [] },
      };
      html += '<div class="tile">';
      forEachCell(tile, data, (i, validator, height, state) => {
        tile.validators[i] = validator;
        tile.heights[i] = height;
        tile.states[i] = state;
        html +=
          validator === ''
            ? '<i></i>'
            : `<i data-validator="${escapeHtml(validator)}" data-height="${height}" data-state="${state}"></i>`;
      });
      html += '</div>';
      tiles.push(tile);
    }
    this.plane.insertAdjacentHTML('beforeend', html);
    const made = [...this.plane.children].slice(-tiles.length);
    tiles.forEach((tile, j) => {
      tile.el = /** @type {HTMLElement} */ (made[j]);
      tile.cells = [...tile.el.children];
      tile.shows = `${data.version} ${tile.row},${tile.column} ${spanOf(tile.column, data)}`;
      // Placed through the CSSOM: the page's CSP refuses style attributes in markup.
      tile.el.style.gridRowStart = String(tile.row + 1);
      tile.el.style.gridColumnStart = String(tile.column + 1);
      this.built.set(`${tile.row},${tile.column}`, tile);
    });
  }
}

/**
 * A spare tile for (row, column): one of the same column (its heights stay), else of the same row
 * (its validators stay), else any.
 * @param {Tile[]} spare @param {number} row @param {number} column
 */
function takeSpare(spare, row, column) {
  let at = spare.findIndex((t) => t.column === column);
  if (at < 0) at = spare.findIndex((t) => t.row === row);
  if (at < 0) at = spare.length - 1;
  return at < 0 ? undefined : spare.splice(at, 1)[0];
}

/**
 * The heights of the window a tile of `column` holds ("" when none).
 * @param {number} column @param {TileData} data
 */
function spanOf(column, data) {
  const from = Math.max(data.first, data.base + column * TILE_COLUMNS);
  const to = Math.min(data.last, data.base + (column + 1) * TILE_COLUMNS - 1);
  return from > to ? '' : `${from}-${to}`;
}

/**
 * Rewrites a tile's cells where they show something else than `data` says.
 * @param {Tile} tile @param {TileData} data
 */
function fill(tile, data) {
  const shows = `${data.version} ${tile.row},${tile.column} ${spanOf(tile.column, data)}`;
  if (tile.shows === shows) return;
  tile.shows = shows;
  const { cells, validators, heights, states } = tile;
  forEachCell(tile, data, (i, validator, height, state) => {
    const cell = /** @type {Element} */ (cells[i]);
    if (validator === '') {
      if (validators[i] !== '') {
        cell.removeAttribute('data-validator');
        cell.removeAttribute('data-height');
        cell.removeAttribute('data-state');
      }
    } else {
      if (validators[i] !== validator) cell.setAttribute('data-validator', validator);
      if (heights[i] !== height) cell.setAttribute('data-height', String(height));
      if (states[i] !== state) cell.setAttribute('data-state', state);
    }
    validators[i] = validator;
    heights[i] = height;
    states[i] = state;
  });
}

/**
 * Calls `each` for every cell of a tile, in the order of its elements (row by row): its index,
 * and the validator, height and state it shows ('', 0, '' for a cell with nothing behind it).
 * @param {Tile} tile @param {TileData} data
 * @param {(i: number, validator: string, height: number, state: string) => void} each
 */
function forEachCell(tile, data, each) {
  const h0 = data.base + tile.column * TILE_COLUMNS;
  /** @type {(Lookup | undefined)[]} */
  const lookups = [];
  for (let c = 0; c < TILE_COLUMNS; c++) {
    const h = h0 + c;
    lookups.push(h >= data.first && h <= data.last ? data.lookup(h) : undefined);
  }
  for (let r = 0; r < TILE_ROWS; r++) {
    const validator = data.validators[tile.row * TILE_ROWS + r];
    for (let c = 0; c < TILE_COLUMNS; c++) {
      const lookup = lookups[c];
      const i = r * TILE_COLUMNS + c;
      if (validator === undefined || lookup === undefined) each(i, '', 0, '');
      else each(i, validator, h0 + c, lookup(validator));
    }
  }
}

/** Text as HTML (a text node or an attribute's value in quotes). @param {unknown} text */
export function escapeHtml(text) {
  return String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}
