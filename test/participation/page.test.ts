// The participation page in Debian's Chromium against the real server with a synthetic record
// (test/support/participation-rig.ts): what a devnet cannot easily make — HTML in a validator's
// reason and on-chain service URL (shown as text, never run) — and 1,000 validators × 200
// heights: only the rows and heights in view are built, and every cell position in view shows,
// at the point a user would look, the element whose data-* say what the server's read says —
// after scrolling down and sideways, a new block, a phase change.
// Skipped, with the reason printed, where no Chromium is installed.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statesAt, type Height } from '../../src/manager/ui/cells.js';
import { findChromium, launchChromium, type Browser } from '../support/chromium.ts';
import { startParticipationRig, type ParticipationRig } from '../support/participation-rig.ts';

const found = findChromium();
if ('reason' in found) process.stderr.write(`skipped: ${found.reason}\n`);

const REASON = '<img src=x onerror="globalThis.pwned=1">waiting for <b>pod</b>';
const SERVICE_URL = '"><script>globalThis.pwned=2</script>:42069';

describe.skipIf('reason' in found)(
  'the participation page in Chromium',
  { timeout: 60_000 },
  () => {
    let browser: Browser;
    beforeAll(async () => {
      if ('path' in found) browser = await launchChromium(found.path);
    }, 60_000);
    afterAll(async () => {
      await browser.close();
    });

    async function open(rig: ParticipationRig) {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${rig.url}/ui/#token=${rig.token}`);
      await page.waitForFunction(
        () => (globalThis as { participation?: { ready?: boolean } }).participation?.ready === true,
      );
      return { page, errors };
    }

    describe('text from the chain and the cluster', () => {
      let rig: ParticipationRig;
      beforeAll(async () => {
        rig = await startParticipationRig({
          validators: 4,
          heights: 30,
          status: (id) =>
            id === '002'
              ? { phase: 'pending', reason: REASON }
              : { phase: 'active', reason: 'staked and signing' },
          serviceUrl: (id) => (id === '002' ? SERVICE_URL : '127.0.0.1:1'),
        });
      });
      afterAll(async () => {
        await rig.close();
      });

      it('shows HTML in a reason and a service URL as text, and runs none of it', async () => {
        const { page, errors } = await open(rig);
        expect(await page.textContent('.row[data-row="002"] .reason')).toBe(REASON);
        await page.hover('.row[data-row="002"] .id');
        await page.waitForSelector('#tip:not([hidden])');
        expect(await page.textContent('#tip')).toContain(`service URL ${SERVICE_URL}`);
        expect(await page.locator('img, script:not([src]), b').count()).toBe(0);
        expect(await page.evaluate('globalThis.pwned')).toBeUndefined();
        expect(errors).toEqual([]);
        await page.close();
      });

      it('shows a cell’s height on hover: hash, time, proposer, transactions', async () => {
        const { page } = await open(rig);
        await page.hover('[data-validator="003"][data-height="30"]');
        await page.waitForSelector('#tip:not([hidden])');
        const tip = await page.textContent('#tip');
        expect(tip).toMatch(/^003 at height 30: \w+/);
        expect(tip).toMatch(/hash 0000001ec{56}/);
        expect(tip).toMatch(/proposer 00\d/);
        await page.close();
      });
    });

    describe('1,000 validators × 200 heights', () => {
      let rig: ParticipationRig;
      beforeAll(async () => {
        rig = await startParticipationRig({ validators: 1_000, heights: 200 });
      });
      afterAll(async () => {
        await rig.close();
      });

      /** The read of the heights `from`…`to`, as the server answers it (not through the page). */
      async function read(from: number, to: number) {
        const response = await fetch(`${rig.url}/v1/participation?from=${from}&to=${to}`, {
          headers: { authorization: `Bearer ${rig.token}` },
        });
        return (await response.json()) as {
          validators: string[];
          heights: (Height & { height: number })[];
        };
      }

      /** A large answer of the page, as JSON text (Playwright's own encoding is slow for it). */
      const json = async <T>(page: Page, expression: string): Promise<T> =>
        JSON.parse(await page.evaluate<string>(`JSON.stringify(${expression})`)) as T;

      /** Every cell element in the page: [validator, height, state]. */
      const cellsOf = (page: Page) =>
        json<[string, number, string][]>(
          page,
          `[...document.querySelectorAll('[data-state]')].map((c) => [c.dataset.validator, Number(c.dataset.height), c.dataset.state])`,
        );

      /**
       * What the eye sees: for every cell position in view (below the header, right of the
       * labels, inside the scrollbars; the body's row × 16 px, the column × 9 px past the 320 px
       * labels), the cell whose box is exactly there — and, at every third row and fifth column,
       * the element the browser finds at its centre (what is on top).
       */
      const inView = (page: Page) =>
        json<{ at: [number, number]; cell: [string, number, string] | null }[]>(
          page,
          `(() => {
          const grid = document.getElementById('grid');
          const body = grid.querySelector('.grid-body').getBoundingClientRect();
          const box = grid.getBoundingClientRect();
          const top = grid.querySelector('.grid-head').getBoundingClientRect().bottom;
          const right = box.left + grid.clientLeft + grid.clientWidth;
          const bottom = box.top + grid.clientTop + grid.clientHeight;
          const data = (e) => e && e.dataset && e.dataset.state ? [e.dataset.validator, Number(e.dataset.height), e.dataset.state] : null;
          const placed = new Map();
          for (const e of grid.querySelectorAll('[data-state]')) {
            const r = e.getBoundingClientRect();
            placed.set((r.top - body.top) / 16 + ',' + (r.left - body.left - 320) / 9, e);
          }
          const out = [];
          for (let row = 0; body.top + row * 16 < bottom; row++)
            for (let column = 0; body.left + 320 + column * 9 < right; column++) {
              const x = body.left + 320 + column * 9 + 4;
              const y = body.top + row * 16 + 8;
              if (y < top || y >= bottom || x < box.left + 320 || x >= right) continue;
              out.push({ at: [row, column], cell: data(placed.get(row + ',' + column)) });
              if (row % 3 === 0 && column % 5 === 0)
                out.push({ at: [row, column], cell: data(document.elementFromPoint(x, y)) });
            }
          return out;
        })()`,
        );

      /**
       * Every cell in the page agrees with the server's read, none twice; every cell position in
       * view shows the cell its position stands for. Returns the heights in view.
       */
      async function expectTrueToTheRead(page: Page): Promise<number[]> {
        // The page's window: the newest 200 heights, the oldest in the first column.
        const oldest = rig.height - 199;
        const answer = await read(oldest, rig.height);
        const states = new Map(answer.heights.map((h) => [h.height, statesAt(h)]));
        const cells = await cellsOf(page);
        const wrong = cells.filter(([v, h, state]) => states.get(h)?.(v) !== state);
        expect(wrong, 'cells whose state is not the read’s').toEqual([]);
        expect(new Set(cells.map(([v, h]) => `${v}@${h}`)).size).toBe(cells.length);
        const seen = await inView(page);
        expect(seen.length).toBeGreaterThan(40 * 100 * (1 + 1 / 15));
        const misplaced = seen.filter(({ at: [row, column], cell }) => {
          const validator = answer.validators[row] ?? '';
          const height = oldest + column;
          return (
            cell?.[0] !== validator ||
            cell[1] !== height ||
            cell[2] !== states.get(height)?.(validator)
          );
        });
        expect(misplaced, 'cell positions in view showing another cell, or none').toEqual([]);
        return [...new Set(seen.map(({ cell }) => cell?.[1] ?? 0))].sort((a, b) => a - b);
      }

      /** Scrolls the grid, then waits for two frames (the scroll's, then the drawing's). */
      async function scrollTo(page: Page, to: { top?: number; left?: number }) {
        await page.evaluate(`(async () => {
          const grid = document.getElementById('grid');
          ${to.top === undefined ? '' : `grid.scrollTop = ${to.top};`}
          ${to.left === undefined ? '' : `grid.scrollLeft = ${to.left};`}
          for (let i = 0; i < 2; i++) await new Promise((resolve) => requestAnimationFrame(resolve));
        })()`);
      }

      it('builds only the rows and heights in view, each cell true to the read and where it stands', async () => {
        const { page, errors } = await open(rig);
        const rows = await page.locator('.row').count();
        expect(rows).toBeGreaterThan(20);
        expect(rows).toBeLessThan(120);
        const columns = await page.locator('[data-validator="0001"]').count();
        expect(columns).toBeGreaterThan(100);
        expect(columns).toBeLessThan(200);
        // Opened at the newest heights: 200 at the right, height 1 not built.
        const shown = await expectTrueToTheRead(page);
        expect(shown.at(-1)).toBe(rig.height);
        expect(await page.locator('[data-height="1"]').count()).toBe(0);
        expect(errors).toEqual([]);
        await page.close();
      });

      it('scrolling sideways shows the older heights, each cell true to the read', async () => {
        const { page, errors } = await open(rig);
        await scrollTo(page, { left: 0 });
        const oldest = await expectTrueToTheRead(page);
        expect(oldest[0]).toBe(rig.height - 199);
        expect(await page.locator(`[data-height="${rig.height}"]`).count()).toBe(0);
        // A wheel notch, a jump, back to the newest.
        for (const left of [120, 900, 1e6]) {
          await scrollTo(page, { left });
          await expectTrueToTheRead(page);
        }
        expect(errors).toEqual([]);
        await page.close();
      });

      it('scrolling down shows the other validators, each cell true to the read', async () => {
        const { page, errors } = await open(rig);
        // A wheel notch, a jump, one notch back up, the end.
        for (const top of [120, 8_000, 7_880, 1e6]) {
          await scrollTo(page, { top });
          await expectTrueToTheRead(page);
        }
        expect(await page.locator('.row[data-row="1000"]').count()).toBe(1);
        expect(await page.locator('.row[data-row="0001"]').count()).toBe(0);
        expect(await page.locator('[data-validator="0001"]').count()).toBe(0);
        expect(errors).toEqual([]);
        await page.close();
      });

      it('jumping to the far corners shows their cells with their data-*, and their hover details', async () => {
        const { page, errors } = await open(rig);
        // From the newest heights of the first validators to the oldest at the top, then to the
        // bottom right (the last validator's newest height) and the bottom left (its oldest):
        // jumps far past the built margin, each straight from another corner.
        const oldest = rig.height - 199;
        const corners = [
          { to: { top: 0, left: 0 }, validator: '0001', height: oldest },
          { to: { top: 1e6, left: 1e6 }, validator: '1000', height: rig.height },
          { to: { top: 1e6, left: 0 }, validator: '1000', height: oldest },
          { to: { top: 0, left: 1e6 }, validator: '0001', height: rig.height },
        ];
        const answer = await read(oldest, rig.height);
        const states = new Map(answer.heights.map((h) => [h.height, statesAt(h)]));
        for (const { to, validator, height } of corners) {
          await scrollTo(page, to);
          const shown = await expectTrueToTheRead(page);
          expect(shown).toContain(height);
          const cell = page.locator(`[data-validator="${validator}"][data-height="${height}"]`);
          expect(await cell.count()).toBe(1);
          expect(await cell.getAttribute('data-state')).toBe(states.get(height)?.(validator));
          await cell.hover();
          await page.waitForSelector('#tip:not([hidden])');
          expect(await page.textContent('#tip')).toMatch(
            new RegExp(`^${validator} at height ${height}: \\w+`),
          );
        }
        expect(errors).toEqual([]);
        await page.close();
      });

      it('a new block: a column at the right where the newest are in view; elsewhere the view keeps still', async () => {
        const { page, errors } = await open(rig);
        await scrollTo(page, { top: 1e6 });
        const next = rig.addHeight();
        await page.waitForSelector(`[data-validator="1000"][data-height="${next}"]`);
        const shown = await expectTrueToTheRead(page);
        expect(shown.at(-1)).toBe(next);
        // Still 200 heights: the oldest left at the left.
        expect(await page.evaluate('window.participation.grid.count')).toBe(200);
        // Older heights in view: the cell under a point stays the same height as blocks come.
        await scrollTo(page, { left: 450 });
        const before = await expectTrueToTheRead(page);
        const after = rig.addHeight();
        await page.waitForFunction(
          (h) =>
            (globalThis as unknown as { participation: { grid: { last: number } } }).participation
              .grid.last === h,
          after,
        );
        await scrollTo(page, {});
        expect(await expectTrueToTheRead(page)).toEqual(before);
        expect(await page.locator(`[data-height="${after}"]`).count()).toBe(0);
        expect(errors).toEqual([]);
        await page.close();
      });

      it('a phase change rewrites its row’s label only', async () => {
        const { page, errors } = await open(rig);
        rig.control.events.emit('phase', {
          key: '0003',
          id: '0003',
          from: 'active',
          to: 'held',
          reason: '<b>held</b> by the operator',
        });
        await page.waitForSelector('.row[data-row="0003"] .phase.p-held');
        expect(await page.textContent('.row[data-row="0003"] .reason')).toBe(
          '<b>held</b> by the operator',
        );
        expect(await page.getAttribute('.row[data-row="0003"] .phase', 'class')).toBe(
          'phase p-held',
        );
        expect(await page.textContent('.row[data-row="0004"] .phase')).toBe('active');
        expect(await page.locator('b').count()).toBe(0);
        expect(errors).toEqual([]);
        await page.close();
      });
    });
  },
);
