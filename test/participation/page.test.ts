// The participation page in Debian's Chromium against the real server with a synthetic record
// (test/support/participation-rig.ts): what a devnet cannot easily make — HTML in a validator's
// reason and on-chain service URL (shown as text, never run) — and 1,000 validators × 200
// heights (only the rows in view are built; scrolling builds the others; a block adds a column).
// Skipped, with the reason printed, where no Chromium is installed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

      it('builds the rows in view only, each with every height; scrolling and a block add the rest', async () => {
        const { page, errors } = await open(rig);
        const rows = await page.locator('.row').count();
        expect(rows).toBeGreaterThan(20);
        expect(rows).toBeLessThan(120);
        expect(await page.locator('.row[data-row="0001"] [data-state]').count()).toBe(200);
        await page.evaluate(`document.getElementById('grid').scrollTop = 1e6`);
        await page.waitForSelector('.row[data-row="1000"]');
        expect(await page.locator('.row[data-row="0001"]').count()).toBe(0);
        expect(await page.locator('[data-validator="1000"][data-state]').count()).toBe(200);
        const next = rig.addHeight();
        await page.waitForSelector(`[data-validator="1000"][data-height="${next}"]`);
        // Still 200 heights: the oldest left at the left.
        expect(await page.locator('[data-validator="1000"][data-state]').count()).toBe(200);
        expect(await page.locator('[data-validator="1000"][data-height="1"]').count()).toBe(0);
        expect(errors).toEqual([]);
        await page.close();
      });
    });
  },
);
