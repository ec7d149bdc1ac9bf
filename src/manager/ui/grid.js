// @ts-check
// The participation grid on the page: one row per validator (its id, phase and reason in a
// column that stays at the left), one column per height (the newest at the right). Every cell in
// view is an element carrying `data-validator`, `data-height` and `data-state` (cells.js's states,
// or `unread` for a height the manager did not read), for tools and tests. Text from the server
// goes into the page escaped (escapeHtml) or as textContent, never as markup.
//
// Kept within a frame at 1,000 validators × 200 heights (bench/participation.bench.ts; docs/
// participation.md says how): only what is in view, and a margin wider than a wheel notch, is
// built — the labels' rows, and the cells in tiles (tiles.js) — and elements scrolled out are
// reused for those scrolled in; a cell's place on the plane is fixed by its height, so a new block
// moves the plane by a transform (the compositor's work, nothing repainted) and adds one column.
// Every write is made in one animation frame (`render`), after its reads, only where a value
// changed; nothing writes a custom property or a size that many elements inherit.
import { statesAt } from './cells.js';
import { TILE_COLUMNS, TILE_ROWS, Tiles, escapeHtml } from './tiles.js';

export { escapeHtml };

/**
 * @typedef {import('./cells.js').Height} Height
 * @typedef {import('./tiles.js').Lookup} Lookup
 * @typedef {{ phase: string, reason: string }} Status
 * @typedef {{ address: string | null, serviceUrl: string | null }} Detail
 * @typedef {{ el: HTMLElement, id: HTMLElement, phase: HTMLElement, reason: HTMLElement,
 *   validator: string, label: string }} Row
 *   A label's row and what it shows now (each part written only when it changes).
 */

/** A row's height, a cell's width with its gap, and the labels' width (style.css agrees). */
export const ROW = 16;
export const CELL = 9;
export const LABEL = 320;
/** The grid's header, above the rows (style.css: .grid-head). */
const HEAD = 22;
/**
 * Built beyond the view on each side: more than a wheel notch (120 px), so that a step the
 * browser scrolls before the page draws it shows built cells.
 */
const MARGIN_ROWS = 10;
const MARGIN_COLUMNS = 16;
/**
 * Heights past the plane's origin after which it is laid out again from the window's oldest
 * height (as blocks come, the plane grows at the right and the oldest heights leave its left).
 */
const REBASE = 10_000;

export class Grid {
  /** @param {HTMLElement} root the scrolling container */
  constructor(root) {
    this.root = root;
    this.head = element('div', 'grid-head');
    const corner = element('span', 'corner');
    corner.textContent = 'validator · phase · reason';
    this.ticks = element('div', 'ticks');
    this.head.append(corner, this.ticks);
    this.body = element('div', 'grid-body');
    this.labels = element('div', 'labels');
    this.plane = element('div', 'plane');
    this.body.append(this.labels, this.plane);
    root.replaceChildren(this.head, this.body);
    this.tiles = new Tiles(this.plane);
    /** @type {string[]} */
    this.validators = [];
    /** @type {Set<string>} */
    this.known = new Set();
    /** @type {Map<number, Height>} */
    this.byHeight = new Map();
    /** The columns: heights `first` … `first + count - 1` (gaps included, drawn `unread`). */
    this.first = 0;
    this.count = 0;
    /** The height at the plane's left edge (its origin): a cell's place is its height's. */
    this.base = 0;
    /** @type {Map<number, Lookup>} per height, made when first shown */
    this.lookups = new Map();
    /** @type {Map<string, Status>} */
    this.status = new Map();
    /** @type {Record<string, Detail>} */
    this.details = {};
    /** @type {Map<number, Row>} label rows built, by index in `validators` */
    this.rows = new Map();
    /** Bumped when the heights are read again or the validators change: every cell is checked. */
    this.version = 0;
    this.frame = 0;
    /** Whether the view shows the newest heights (it then stays on them as blocks come). */
    this.pinned = true;
    /** Oldest heights dropped since the last drawing, while not pinned (the view keeps still). */
    this.dropped = 0;
    this.size = { width: 0, height: 0 };
    this.drawn = { frame: '', ticks: '' };
    root.addEventListener(
      'scroll',
      () => {
        this.pinned = root.scrollLeft + this.#size().width >= this.#width() - 2 * CELL;
        this.schedule();
      },
      { passive: true },
    );
    new ResizeObserver(() => {
      this.size = { width: root.clientWidth, height: root.clientHeight };
      this.schedule();
    }).observe(root);
  }

  /** The newest height shown (0: none). */
  get last() {
    return this.count === 0 ? 0 : this.first + this.count - 1;
  }

  /**
   * Everything at once (a read of the window): validators, heights, details.
   * @param {{ validators: string[], heights: Height[], details?: Record<string, Detail> }} read
   */
  setData(read) {
    this.validators = [...read.validators];
    this.known = new Set(this.validators);
    this.details = { ...read.details };
    this.setHeights(read.heights);
  }

  /** @param {Height[]} heights ascending */
  setHeights(heights) {
    const first = heights[0]?.height;
    const last = heights.at(-1)?.height;
    this.byHeight = new Map(heights.map((h) => [h.height, h]));
    this.lookups.clear();
    this.first = first ?? 0;
    this.count = first === undefined || last === undefined ? 0 : last - first + 1;
    this.base = this.first;
    this.dropped = 0;
    this.invalidate();
  }

  /**
   * One new height at the right, the oldest dropped beyond `keep`. Only data here: the next
   * frame draws it.
   * @param {Height} height @param {number} keep
   */
  appendHeight(height, keep) {
    if (this.count === 0 || height.height !== this.last + 1) {
      this.setHeights([...this.byHeight.values(), height].slice(-keep));
      return;
    }
    this.byHeight.set(height.height, height);
    this.count++;
    while (this.count > keep) {
      this.byHeight.delete(this.first);
      this.lookups.delete(this.first);
      this.first++;
      this.count--;
      if (!this.pinned) this.dropped++;
    }
    if (this.first - this.base > REBASE) {
      this.base = this.first;
      this.version++;
    }
    this.schedule();
  }

  /** @param {Map<string, Status>} status */
  setStatus(status) {
    this.status = status;
    this.schedule();
  }

  /** @param {string} validator */
  addValidator(validator) {
    if (this.known.has(validator)) return;
    this.known.add(validator);
    this.validators.push(validator);
    this.validators.sort(idsFirst);
    this.invalidate();
  }

  /** @param {number} height @returns {Height | undefined} */
  height(height) {
    return this.byHeight.get(height);
  }

  invalidate() {
    this.version++;
    this.schedule();
  }

  schedule() {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  /** Draws what is in view now (called from a frame; the page calls it once at its first read). */
  render() {
    const { width, height } = this.#size();
    const scrollLeft = this.root.scrollLeft;
    const top = this.root.scrollTop;
    const maxLeft = Math.max(0, this.#width() - width);
    const left = this.pinned ? maxLeft : Math.max(0, scrollLeft - this.dropped * CELL);
    this.dropped = 0;
    // In view: below the header (sticky, over the rows' first HEAD px) and right of the labels
    // (sticky, over the cells' first LABEL px).
    const r0 = Math.max(0, Math.floor(top / ROW) - MARGIN_ROWS);
    const r1 = Math.min(
      this.validators.length - 1,
      Math.ceil((top + height - HEAD) / ROW) - 1 + MARGIN_ROWS,
    );
    const h0 = Math.max(this.first, this.first + Math.floor(left / CELL) - MARGIN_COLUMNS);
    const h1 = Math.min(
      this.last,
      this.first + Math.ceil((left + width - LABEL) / CELL) - 1 + MARGIN_COLUMNS,
    );
    this.#drawFrame();
    this.#placeRows(r0, r1);
    this.tiles.show(
      r1 < r0 ? [0, -1] : [Math.floor(r0 / TILE_ROWS), Math.floor(r1 / TILE_ROWS)],
      h1 < h0
        ? [0, -1]
        : [
            Math.floor((h0 - this.base) / TILE_COLUMNS),
            Math.floor((h1 - this.base) / TILE_COLUMNS),
          ],
      {
        ...{ version: this.version, validators: this.validators, base: this.base },
        ...{ first: this.first, last: this.last, rowPx: ROW, cellPx: CELL },
        lookup: (h) => this.#lookup(h),
      },
    );
    if (Math.round(scrollLeft) !== Math.round(left)) this.root.scrollLeft = left;
  }

  /**
   * The grid's size; the plane's and the ticks' width and shift (the oldest height at the
   * labels' right edge); the ticks (one per height ending in 0) when they changed.
   */
  #drawFrame() {
    const width = `${this.#width()}px`;
    const planeWidth = `${(this.last - this.base + 1) * CELL}px`;
    const shift = `translateX(${-(this.first - this.base) * CELL}px)`;
    const height = `${this.validators.length * ROW}px`;
    const frame = `${width} ${planeWidth} ${shift} ${height}`;
    if (frame !== this.drawn.frame) {
      this.drawn.frame = frame;
      this.body.style.width = this.head.style.width = width;
      this.body.style.height = this.plane.style.height = height;
      this.plane.style.width = this.ticks.style.width = planeWidth;
      this.plane.style.transform = this.ticks.style.transform = shift;
    }
    const ticks = `${this.base}:${Math.ceil(this.first / 10)}:${Math.floor(this.last / 10)}`;
    if (ticks === this.drawn.ticks || this.count === 0) return;
    this.drawn.ticks = ticks;
    /** @type {HTMLElement[]} */
    const made = [];
    for (let h = Math.ceil(this.first / 10) * 10; h <= this.last; h += 10) {
      const tick = element('span', 'tick');
      tick.textContent = String(h);
      // Placed through the CSSOM: the page's CSP refuses style attributes in markup.
      tick.style.left = `${(h - this.base + 1) * CELL}px`;
      made.push(tick);
    }
    this.ticks.replaceChildren(...made);
  }

  /**
   * Gives each index from `from` to `to` a label row: the one it has, else one scrolled out of
   * view, else a new one (made together, in one piece of markup). Rows left over leave the page.
   * @param {number} from @param {number} to
   */
  #placeRows(from, to) {
    /** @type {Row[]} */
    const spare = [];
    for (const [index, row] of this.rows)
      if (index < from || index > to || this.validators[index] !== row.validator) {
        this.rows.delete(index);
        spare.push(row);
      }
    /** @type {number[]} */
    const missing = [];
    for (let i = from; i <= to; i++) {
      const row = this.rows.get(i) ?? spare.pop();
      if (row === undefined) missing.push(i);
      else this.#fillRow(row, i);
    }
    for (const row of spare) row.el.remove();
    if (missing.length === 0) return;
    this.labels.insertAdjacentHTML('beforeend', missing.map(() => ROW_HTML).join(''));
    const made = [...this.labels.children].slice(-missing.length);
    missing.forEach((index, j) => {
      const el = /** @type {HTMLElement} */ (made[j]);
      const [id, phase, reason] = /** @type {HTMLElement[]} */ ([...el.children]);
      if (id === undefined || phase === undefined || reason === undefined)
        throw new Error('the label row markup has changed');
      this.#fillRow({ el, id, phase, reason, validator: '', label: '' }, index);
    });
  }

  /** A label row for the validator at `index`: its place, id, phase and reason. */
  #fillRow(/** @type {Row} */ row, /** @type {number} */ index) {
    const validator = this.validators[index] ?? '';
    if (this.rows.get(index) !== row) {
      this.rows.set(index, row);
      row.el.style.top = `${index * ROW}px`;
    }
    if (row.validator !== validator) {
      row.validator = validator;
      row.el.setAttribute('data-row', validator);
      row.id.textContent = validator;
    }
    const status = this.status.get(validator);
    const phase = status?.phase ?? '–';
    const reason = status?.reason ?? '';
    if (row.label === `${phase}\n${reason}`) return;
    row.label = `${phase}\n${reason}`;
    row.phase.className = /^[a-z]+$/.test(phase) ? `phase p-${phase}` : 'phase';
    row.phase.textContent = phase;
    row.reason.textContent = reason;
  }

  /** A height's lookup of each validator's state, made once per height. @param {number} h */
  #lookup(h) {
    let lookup = this.lookups.get(h);
    if (lookup !== undefined) return lookup;
    const height = this.byHeight.get(h);
    lookup = height === undefined ? unread : statesAt(height);
    this.lookups.set(h, lookup);
    return lookup;
  }

  /** The grid's width: the labels and every column. */
  #width() {
    return LABEL + this.count * CELL;
  }

  #size() {
    if (this.size.width === 0)
      this.size = { width: this.root.clientWidth, height: this.root.clientHeight };
    return this.size;
  }
}

/** A label row as made: its three parts (filled by #fillRow). */
const ROW_HTML =
  '<div class="row label"><span class="id"></span><span class="phase"></span>' +
  '<span class="reason"></span></div>';

/** @param {string} tag @param {string} className */
function element(tag, className) {
  const el = document.createElement(tag);
  el.className = className;
  return el;
}

/** @returns {'unread'} */
const unread = () => 'unread';

/**
 * Validator ids (short) before bare addresses, each in text order, as the read lists them.
 * @param {string} a @param {string} b
 */
export function idsFirst(a, b) {
  return Number(a.length > 16) - Number(b.length > 16) || (a < b ? -1 : a > b ? 1 : 0);
}
