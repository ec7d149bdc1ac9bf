// @ts-check
// The participation grid on the page: one row per validator (its id, phase and reason, then one
// cell per height, the newest at the right), kept smooth at 1,000 validators × 200 heights by
// drawing only the rows in view (plus a margin): a row entering the view is built, one leaving it
// is dropped, and new data rebuilds only the rows shown. Every cell is an element carrying
// `data-validator`, `data-height` and `data-state` (cells.js's states, or `unread` for a height
// the manager did not read), for tools and tests. Text from the server goes into the page escaped
// (escapeHtml) or as textContent, never as markup.
import { statesAt } from './cells.js';

/**
 * @typedef {import('./cells.js').Height} Height
 * @typedef {import('./cells.js').CellState} CellState
 * @typedef {{ phase: string, reason: string }} Status
 * @typedef {{ address: string | null, serviceUrl: string | null }} Detail
 */

/** A row's height and a cell's width, with its gap (style.css agrees). */
export const ROW = 16;
export const CELL = 9;
/** Rows built beyond the view, above and below, so that a short scroll shows built rows. */
const MARGIN = 6;

/** @param {unknown} text */
export function escapeHtml(text) {
  return String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

export class Grid {
  /** @param {HTMLElement} root the scrolling container */
  constructor(root) {
    this.root = root;
    this.head = document.createElement('div');
    this.head.className = 'grid-head';
    this.body = document.createElement('div');
    this.body.className = 'grid-body';
    root.replaceChildren(this.head, this.body);
    /** @type {string[]} */
    this.validators = [];
    /** @type {Map<number, Height>} */
    this.byHeight = new Map();
    /** @type {number[]} the columns' heights, oldest first (gaps included) */
    this.keys = [];
    /** @type {((validator: string) => CellState | 'unread')[]} */
    this.states = [];
    /** @type {Map<string, Status>} */
    this.status = new Map();
    /** @type {Record<string, Detail>} */
    this.details = {};
    /** @type {Map<number, HTMLElement>} rows built, by index */
    this.built = new Map();
    this.version = 0;
    this.frame = 0;
    /** @type {number[]} how long the last renders took (ms), newest last; read by the benchmark */
    this.renderTimes = [];
    root.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(root);
  }

  /**
   * Everything at once (a read of the window): validators, heights, details.
   * @param {{ validators: string[], heights: Height[], details?: Record<string, Detail> }} read
   */
  setData(read) {
    this.validators = [...read.validators];
    this.details = { ...read.details };
    this.setHeights(read.heights);
  }

  /** @param {Height[]} heights ascending */
  setHeights(heights) {
    const first = heights[0]?.height;
    const last = heights.at(-1)?.height;
    const byHeight = new Map(heights.map((h) => [h.height, h]));
    this.keys = first === undefined || last === undefined ? [] : range(first, last);
    this.states = this.keys.map((k) => {
      const h = byHeight.get(k);
      return h === undefined ? () => 'unread' : statesAt(h);
    });
    this.byHeight = byHeight;
    this.invalidate();
  }

  /**
   * One new height at the right (the oldest dropped beyond `keep`): the rows built get one cell
   * more and, if need be, one less, instead of being built again.
   * @param {Height} height @param {number} keep
   */
  appendHeight(height, keep) {
    const last = this.keys.at(-1);
    if (last === undefined || height.height !== last + 1) {
      this.setHeights([...this.byHeight.values(), height].slice(-keep));
      return;
    }
    this.byHeight.set(height.height, height);
    this.keys.push(height.height);
    const state = statesAt(height);
    this.states.push(state);
    const drop = Math.max(0, this.keys.length - keep);
    for (const key of this.keys.splice(0, drop)) this.byHeight.delete(key);
    this.states.splice(0, drop);
    for (const row of this.built.values()) {
      const cells = row.lastElementChild;
      if (cells === null) continue;
      const validator = row.dataset.row ?? '';
      for (let i = 0; i < drop; i++) cells.firstElementChild?.remove();
      cells.insertAdjacentHTML(
        'beforeend',
        `<i data-validator="${escapeHtml(validator)}" data-height="${height.height}" data-state="${state(validator)}"></i>`,
      );
    }
    this.#drawHead();
    this.schedule();
  }

  /** @param {Map<string, Status>} status */
  setStatus(status) {
    this.status = status;
    this.invalidate();
  }

  /** @param {string} validator */
  addValidator(validator) {
    if (this.validators.includes(validator)) return;
    this.validators.push(validator);
    this.validators.sort(idsFirst);
    this.invalidate();
  }

  /** @param {number} height @returns {Height | undefined} */
  height(height) {
    return this.byHeight.get(height);
  }

  /** Whether the view shows the newest heights (the right edge): it then stays there. */
  atRightEdge() {
    const r = this.root;
    return r.scrollLeft + r.clientWidth >= r.scrollWidth - CELL * 2;
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

  /** Draws what is in view now (called from a frame; tests and the benchmark may call it). */
  render() {
    const started = performance.now();
    const pinned = this.atRightEdge();
    const width = this.keys.length * CELL;
    const rowsHeight = this.validators.length * ROW;
    this.body.style.height = `${rowsHeight}px`;
    this.body.style.width = `calc(var(--label) + ${width}px)`;
    this.root.style.setProperty('--cells-width', `${width}px`);
    if (this.head.dataset.version !== String(this.version)) this.#drawHead();
    const top = Math.max(0, this.root.scrollTop - 22);
    const first = Math.max(0, Math.floor(top / ROW) - MARGIN);
    const last = Math.min(
      this.validators.length - 1,
      Math.ceil((top + this.root.clientHeight) / ROW) + MARGIN,
    );
    for (const [index, row] of this.built)
      if (index < first || index > last || row.dataset.version !== String(this.version)) {
        row.remove();
        this.built.delete(index);
      }
    let html = '';
    /** @type {number[]} */
    const added = [];
    for (let i = first; i <= last; i++)
      if (!this.built.has(i)) {
        html += this.#rowHtml(i);
        added.push(i);
      }
    if (html !== '') {
      this.body.insertAdjacentHTML('beforeend', html);
      const rows = this.body.children;
      for (let j = 0; j < added.length; j++) {
        const row = rows[rows.length - added.length + j];
        const index = added[j];
        if (row instanceof HTMLElement && index !== undefined) {
          // Positions through the CSSOM: the page's CSP refuses style attributes in markup.
          row.style.top = `${index * ROW}px`;
          this.built.set(index, row);
        }
      }
    }
    if (pinned) this.root.scrollLeft = this.root.scrollWidth;
    this.renderTimes.push(performance.now() - started);
    if (this.renderTimes.length > 1_000) this.renderTimes.shift();
  }

  #drawHead() {
    const corner = document.createElement('span');
    corner.className = 'corner';
    corner.textContent = 'validator · phase · reason';
    const ticks = [corner];
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i] ?? 0;
      if (key % 10 !== 0) continue;
      const tick = document.createElement('span');
      tick.className = 'tick';
      tick.textContent = String(key);
      tick.style.left = `calc(var(--label) + ${(i + 1) * CELL}px)`;
      ticks.push(tick);
    }
    this.head.style.width = `calc(var(--label) + ${this.keys.length * CELL}px)`;
    this.head.replaceChildren(...ticks);
    this.head.dataset.version = String(this.version);
  }

  /** @param {number} index */
  #rowHtml(index) {
    const validator = this.validators[index] ?? '';
    const v = escapeHtml(validator);
    const status = this.status.get(validator);
    const phase = status?.phase ?? '–';
    const phaseClass = /^[a-z]+$/.test(phase) ? ` p-${phase}` : '';
    let html =
      `<div class="row" data-row="${v}" data-version="${this.version}">` +
      `<div class="label"><span class="id">${v}</span>` +
      `<span class="phase${phaseClass}">${escapeHtml(phase)}</span>` +
      `<span class="reason">${escapeHtml(status?.reason ?? '')}</span></div><div class="cells">`;
    for (let c = 0; c < this.keys.length; c++) {
      const state = this.states[c]?.(validator) ?? 'unread';
      html += `<i data-validator="${v}" data-height="${this.keys[c]}" data-state="${state}"></i>`;
    }
    return `${html}</div></div>`;
  }
}

/** @param {number} from @param {number} to */
function range(from, to) {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * Validator ids (short) before bare addresses, each in text order, as the read lists them.
 * @param {string} a @param {string} b
 */
export function idsFirst(a, b) {
  return Number(a.length > 16) - Number(b.length > 16) || (a < b ? -1 : a > b ? 1 : 0);
}
