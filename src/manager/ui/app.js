// @ts-check
// The participation page: who signed, missed and proposed each height, live. The token comes in
// the URL's fragment (`/ui/#token=…`: browsers never send a fragment to a server), is kept in this
// tab's sessionStorage and taken out of the address bar, and is sent only to this page's own
// server, in the Authorization header (every URL below is a path of this origin; the
// Content-Security-Policy allows no other). Data: GET /v1/participation for the last heights
// (the newest from /readyz, which needs no token) and, at the same time, GET /v1/validators for
// each validator's phase and reason; then the event stream for new blocks (`block`) and phase
// changes (`phase`), without a reload.
import { LEGEND } from './cells.js';
import { Grid, escapeHtml, idsFirst } from './grid.js';
import { StreamRefused, follow } from './stream.js';

/**
 * @typedef {import('./cells.js').Height} Height
 * @typedef {import('./grid.js').Status} Status
 * @typedef {{ validators: string[], details: Record<string, import('./grid.js').Detail>,
 *   height: number, heights: Height[] }} Participation
 */

const TOKEN_KEY = 'cluster-manager.token';
/** Heights shown: the newest 200. */
const WINDOW = 200;
const RETRY_MS = 2_000;

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const grid = new Grid($('grid'));
/** @type {Map<string, Status>} */
const status = new Map();
let token = '';
let newest = 0;

/**
 * For tests and the benchmark: the grid; whether the first drawing is done (`ready`) and when the
 * frame that painted it ended (`drawnAt`, ms since the page began); per block from the stream, the
 * main-thread time of its handling and of the frame that drew it (`blocks`, ms, the last 1,000).
 */
/** @type {{ grid: Grid, ready: boolean, drawnAt: number, blocks: number[] }} */
const probe = { grid, ready: false, drawnAt: 0, blocks: [] };
Object.assign(window, { participation: probe });

class Refused extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** GET a path of this manager with the token. @param {string} path */
async function get(path) {
  if (!path.startsWith('/v1/')) throw new Error(`not a path of the manager's API: ${path}`);
  const response = await fetch(path, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    cache: 'no-store',
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok)
    throw new Refused(response.status, body?.error?.message ?? `HTTP ${response.status}`);
  return body;
}

/** The token of the fragment (kept, then taken out of the address bar), or the tab's. */
function takeToken() {
  if (/[?&](token|access_token|bearer)=/.test(location.search)) return { inQuery: true };
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (match?.[1] !== undefined) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, '', location.pathname);
  }
  return { token: sessionStorage.getItem(TOKEN_KEY) ?? '' };
}

/** Shows a message instead of the grid. @param {string} html (its variable parts escaped) */
function showMessage(html) {
  const box = $('message');
  box.innerHTML = html;
  box.hidden = false;
  $('grid').hidden = true;
  setLive('stopped', 'stopped');
}

/** @param {'connecting' | 'live' | 'reconnecting' | 'stopped'} state @param {string} text */
function setLive(state, text) {
  const live = $('live');
  live.dataset.live = state;
  live.textContent = text;
}

const HOW_TO_OPEN = `Open the address the devnet printed (it ends in <code>/ui/#token=…</code>), or run <code>npx cluster-manager devnet env</code> and open <code>${escapeHtml(location.origin)}/ui/#token=</code> followed by its <code>CLUSTER_MANAGER_TOKEN</code>.`;

/** @param {unknown} error */
function explain(error) {
  if (error instanceof Refused || error instanceof StreamRefused) {
    if (error.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      return showMessage(
        `<strong>The manager refused this token</strong> (401: ${escapeHtml(error.message)}). The token was wrong or is not this manager's; it has been forgotten. ${HOW_TO_OPEN}`,
      );
    }
    return showMessage(
      `<strong>The manager answered ${error.status}</strong>: ${escapeHtml(error.message)}`,
    );
  }
  const text = error instanceof Error ? error.message : String(error);
  showMessage(
    `<strong>Cannot reach the manager at ${escapeHtml(location.origin)}</strong> (${escapeHtml(text)}). Is it running? Reload to try again.`,
  );
}

function drawLegend() {
  $('legend').innerHTML = LEGEND.map(
    (item) => `<li><i class="s-${item.state}"></i>${escapeHtml(item.label)}</li>`,
  ).join('');
}

/**
 * Reads the newest WINDOW heights and every validator's phase, the two reads at once; draws them.
 */
async function load() {
  const validators = get('/v1/validators');
  validators.catch(() => undefined); // awaited below; a failure of the other read comes first
  const to = await newestHeight();
  /** @type {Participation} */
  const read = await get(`/v1/participation?from=${Math.max(1, to - WINDOW + 1)}&to=${to}`);
  /** @type {{ validators: { key: string, id: string | null, phase: string, reason: string }[] }} */
  const rows = await validators;
  status.clear();
  for (const row of rows.validators ?? [])
    status.set(row.id ?? row.key, { phase: row.phase, reason: row.reason });
  newest = read.height;
  grid.setData(read);
  for (const name of status.keys()) grid.addValidator(name);
  grid.setStatus(status);
  grid.render();
  drawChain();
  if (!probe.ready)
    void nextFrame().then(({ end }) => Object.assign(probe, { ready: true, drawnAt: end }));
}

/**
 * The chain's height, to ask for the window that ends there: /readyz's (public, no token, a few
 * hundred bytes), else — before the manager has read the chain, or if /readyz cannot be read —
 * the height a read of the default window answers.
 */
async function newestHeight() {
  /** @type {{ chain?: { height?: unknown } } | undefined} */
  const ready = await fetch('/readyz', {
    cache: 'no-store',
    headers: { accept: 'application/json' },
  })
    .then((response) => response.json())
    .catch(() => undefined);
  const height = ready?.chain?.height;
  if (typeof height === 'number' && Number.isInteger(height) && height > 0) return height;
  /** @type {Participation} */
  const first = await get('/v1/participation');
  return Math.max(1, first.height);
}

/** A new block from the stream: appended at the right; after a gap the window is read again. */
async function onBlock(/** @type {Height} */ block) {
  const last = grid.last;
  if (block.height <= last) return;
  newest = Math.max(newest, block.height);
  if (last !== 0 && block.height !== last + 1) return load();
  for (const v of [...block.signers, ...(block.absent ?? [])]) grid.addValidator(v);
  grid.appendHeight(block, WINDOW);
  drawChain();
}

/** @param {string} event @param {unknown} data */
function onEvent(event, data) {
  const d = /** @type {Record<string, any>} */ (data ?? {});
  if (event === 'block') {
    const started = performance.now();
    const frame = nextFrame();
    void onBlock(/** @type {Height} */ (d)).catch(explain);
    const handled = performance.now() - started;
    void frame.then(({ work }) => {
      probe.blocks.push(handled + work);
      if (probe.blocks.length > 1_000) probe.blocks.shift();
    });
  } else if (event === 'phase') {
    const name = String(d.id ?? d.key);
    status.set(name, { phase: String(d.to), reason: String(d.reason ?? '') });
    grid.addValidator(name);
    grid.setStatus(status);
  } else if (event === 'height' && typeof d.height === 'number') {
    newest = Math.max(newest, d.height);
    drawChain();
  }
}

/**
 * The next frame: `work`, its main-thread time from its first animation-frame callback (this
 * one, when asked for before the grid's) to the first task after its rendering (style, layout,
 * paint); `end`, when that task ran.
 * @returns {Promise<{ work: number, end: number }>}
 */
function nextFrame() {
  return new Promise((resolve) =>
    requestAnimationFrame(() => {
      const started = performance.now();
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        const end = performance.now();
        resolve({ work: end - started, end });
      };
      channel.port2.postMessage(0);
    }),
  );
}

/** The chain's height and how long ago its newest block was made. */
function drawChain() {
  const last = grid.height(grid.last);
  const time = last?.time === null || last?.time === undefined ? undefined : Date.parse(last.time);
  const age = time === undefined ? '' : ` · last block ${ageText(Date.now() - time)} ago`;
  $('chain').textContent = `height ${newest}${age}`;
}

/** @param {number} ms */
function ageText(ms) {
  if (ms < 10_000) return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** Follows the event stream, again after a pause whenever it ends (401 stops for good). */
async function stream() {
  for (;;) {
    const stop = new AbortController();
    try {
      setLive('live', 'live');
      await follow(token, onEvent, stop.signal);
    } catch (error) {
      if (error instanceof StreamRefused && error.status === 401) return explain(error);
    }
    setLive('reconnecting', 'reconnecting…');
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    await load().catch(() => undefined);
  }
}

/** Hover details: a cell's height (hash, time, proposer, transactions), a row's validator. */
function tipText(/** @type {Element} */ target) {
  const cell = target.closest('[data-state]');
  const row = target.closest('.label') === null ? null : target.closest('.row');
  if (cell instanceof HTMLElement) {
    const h = grid.height(Number(cell.dataset.height));
    const who = cell.dataset.validator ?? '';
    const text = `${who} at height ${cell.dataset.height}: ${cell.dataset.state}`;
    if (h === undefined) return text;
    const txs = h.transactions.map(
      (tx) =>
        `  ${tx.kind} ${tx.validator} ${tx.hash.slice(0, 16)}…${tx.resultCode === 0 ? '' : ` (failed, code ${tx.resultCode})`}`,
    );
    return (
      text +
      `\nhash ${h.hash}\ntime ${h.time ?? 'not known'}\nproposer ${h.proposer ?? 'not known'}` +
      `\nsigned ${h.signers.length}${h.absent === null ? ' (staked set not known)' : `, missed ${h.absent.length}`}` +
      (txs.length > 0 ? `\ntransactions:\n${txs.join('\n')}` : '')
    );
  }
  if (!(row instanceof HTMLElement)) return '';
  const who = row.dataset.row ?? '';
  const detail = grid.details[who];
  const s = status.get(who);
  return (
    `${who}\naddress ${detail?.address ?? 'not known'}\nservice URL ${detail?.serviceUrl ?? 'not known'}` +
    `\nphase ${s?.phase ?? 'not managed'}${s === undefined ? '' : `\n${s.reason}`}`
  );
}

/** The tip shown and its size: measured when its text changes, not at every move. */
const shown = { text: '', width: 0, height: 0 };

/** Shows the tip of what the pointer is on, beside the pointer. @param {MouseEvent} event */
function hover(event) {
  const tip = $('tip');
  const text = tipText(/** @type {Element} */ (event.target));
  if (text === '') {
    tip.hidden = true;
    shown.text = '';
    return;
  }
  if (text !== shown.text) {
    tip.textContent = text;
    tip.hidden = false;
    Object.assign(shown, { text, width: tip.offsetWidth, height: tip.offsetHeight });
  }
  const x = Math.min(event.clientX + 14, window.innerWidth - shown.width - 8);
  const y = Math.min(event.clientY + 14, window.innerHeight - shown.height - 8);
  tip.style.left = `${Math.max(4, x)}px`;
  tip.style.top = `${Math.max(4, y)}px`;
}

async function main() {
  drawLegend();
  const taken = takeToken();
  if (taken.inQuery)
    return showMessage(
      `<strong>A token in the query string is not used</strong>: a URL's query reaches servers' logs and the browser's history. Put it after <code>#</code> instead. ${HOW_TO_OPEN}`,
    );
  token = taken.token ?? '';
  if (token === '') return showMessage(`<strong>No token.</strong> ${HOW_TO_OPEN}`);
  try {
    await load();
  } catch (error) {
    return explain(error);
  }
  $('grid').addEventListener('mousemove', hover);
  $('grid').addEventListener('mouseleave', () => {
    $('tip').hidden = true;
    shown.text = '';
  });
  setInterval(drawChain, 500);
  await stream();
}

void main();
