// The participation read and page at 1,000 validators × 200 heights (issue 28): the real control
// server over a ParticipationRecord fed as the chain view feeds it (test/support/participation-
// rig.ts), the page in Debian's Chromium. Each figure against a floor measured in the same run:
//
// - the read, GET /v1/participation (200 heights): p50 latency of 30 calls after 5 warm-up calls;
//   floor: the same JSON bytes served as a static file (read from disk per request by a bare
//   node:http server on loopback), p50 of as many calls;
// - the page's first drawing: from navigation to the first frame after the grid was drawn
//   (`participation.drawnAt`: its three reads, the modules, the rows in view), median of 5
//   loads; floor: a bare page from the static server that fetches the same JSON as a static file
//   and parses it (navigation to the first frame after), median of 5 loads;
// - a scroll step (120 px, a wheel notch; 60 steps): p95 of the grid's own drawing time
//   (`grid.renderTimes`: building the rows that came into view, and their layout); floor: the browser's frame interval in the same page (median of 60
//   requestAnimationFrame intervals) — a ratio under 1 means each step is drawn within a frame.
//
// Skipped (no results) where no Chromium is installed. Run alone:
// `npx node bench/participation.bench.ts`.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium, launchChromium } from '../test/support/chromium.ts';
import { startParticipationRig } from '../test/support/participation-rig.ts';
import { duration, percentile, round, runAlone, type BenchResult } from './bench-types.ts';

const VALIDATORS = 1_000;
const HEIGHTS = 200;
const CALLS = 30;
const LOADS = 5;
const SCROLLS = 60;
/** One wheel notch, as Chromium scrolls it. */
const WHEEL_PX = 120;

const FLOOR_PAGE = `<!doctype html><meta charset="utf-8"><title>floor</title>
<script type="module">
const response = await fetch('/participation.json');
const read = await response.json();
requestAnimationFrame(() => { window.floor = { drawnAt: performance.now(), heights: read.heights.length }; });
</script>`;

async function timed(url: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return performance.now() - started;
}

async function p50(url: string, headers: Record<string, string> = {}): Promise<number> {
  for (let i = 0; i < 5; i++) await timed(url, headers);
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) times.push(await timed(url, headers));
  return percentile(times, 50);
}

/** A bare static server: each request reads its file from disk, as a static file server does. */
async function staticServer(dir: string): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const name = request.url === '/floor.html' ? 'floor.html' : 'participation.json';
    void readFile(join(dir, name)).then((body) => {
      response.writeHead(200, {
        'content-type': name.endsWith('.html') ? 'text/html' : 'application/json',
      });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}` };
}

export async function run(): Promise<BenchResult[]> {
  const chromium = findChromium();
  if ('reason' in chromium) {
    process.stderr.write(`participation bench skipped: ${chromium.reason}\n`);
    return [];
  }
  const rig = await startParticipationRig({ validators: VALIDATORS, heights: HEIGHTS });
  const dir = await mkdtemp(join(tmpdir(), 'cm-participation-bench-'));
  const auth = { authorization: `Bearer ${rig.token}` };
  const readUrl = `${rig.url}/v1/participation?from=1&to=${HEIGHTS}`;
  const json = Buffer.from(await (await fetch(readUrl, { headers: auth })).arrayBuffer());
  await writeFile(join(dir, 'participation.json'), json);
  await writeFile(join(dir, 'floor.html'), FLOOR_PAGE);
  const floorServer = await staticServer(dir);
  const browser = await launchChromium(chromium.path, { width: 1280, height: 800 });
  try {
    const readMs = await p50(readUrl, auth);
    const staticMs = await p50(`${floorServer.url}/participation.json`);

    const pageLoads: number[] = [];
    const floorLoads: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const floor = await browser.context.newPage();
      await floor.goto(`${floorServer.url}/floor.html`);
      await floor.waitForFunction(() => (globalThis as { floor?: unknown }).floor !== undefined);
      floorLoads.push(await floor.evaluate<number>('window.floor.drawnAt'));
      await floor.close();
      const page = await browser.context.newPage();
      await page.goto(`${rig.url}/ui/#token=${rig.token}`);
      await page.waitForFunction(
        () => (globalThis as { participation?: { ready?: boolean } }).participation?.ready === true,
      );
      pageLoads.push(await page.evaluate<number>('window.participation.drawnAt'));
      if (i < LOADS - 1) await page.close();
      else {
        // Scrolling: one screen per step, each drawn by the grid; the frame interval beside it.
        const cells = await page.locator('[data-state]').count();
        const frame = await page.evaluate<number>(`new Promise((resolve) => {
          const times = [];
          const step = (t) => { times.push(t); if (times.length < 61) requestAnimationFrame(step);
            else { const d = times.slice(1).map((x, i) => x - times[i]).sort((a, b) => a - b); resolve(d[30]); } };
          requestAnimationFrame(step);
        })`);
        const scroll = (step: string, steps: number) =>
          page.evaluate<number[]>(`(async () => {
          const grid = window.participation.grid;
          const root = document.getElementById('grid');
          const out = [];
          for (let i = 0; i < ${steps}; i++) {
            const before = grid.renderTimes.length;
            root.scrollTop += ${step};
            await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
            out.push(...grid.renderTimes.slice(before));
          }
          return out;
        })()`);
        const renders = await scroll(String(WHEEL_PX), SCROLLS);
        const pages = await scroll('root.clientHeight', 10);
        await page.close();
        const scrollP95 = percentile(renders, 95);
        const notes = `${renders.length} drawings in ${SCROLLS} steps of ${WHEEL_PX} px (a wheel notch), p50 ${round(percentile(renders, 50), 2)} ms; a whole screen down (800 px, 10 steps): p50 ${round(percentile(pages, 50), 1)} ms, p95 ${round(percentile(pages, 95), 1)} ms; ${cells} cells built at first (the rows in view and a margin, of ${VALIDATORS * HEIGHTS})`;
        const floors = {
          read: {
            name: 'the same JSON as a static file (bare node:http, read from disk per request), p50',
            value: staticMs,
          },
          page: {
            name: 'a bare page fetching the same JSON as a static file and parsing it, median',
            value: percentile(floorLoads, 50),
          },
          frame: { name: "the browser's frame interval in the same page (median)", value: frame },
        };
        return [
          duration(
            `participation: GET /v1/participation, ${VALIDATORS} validators × ${HEIGHTS} heights (p50)`,
            readMs,
            floors.read,
            `${round(json.length / 1024 / 1024, 2)} MiB of JSON; ${CALLS} calls after 5 warm-up calls, one at a time`,
          ),
          duration(
            `participation page: navigation → grid drawn, ${VALIDATORS} × ${HEIGHTS} (median of ${LOADS})`,
            percentile(pageLoads, 50),
            floors.page,
            `loads ${pageLoads.map((x) => round(x)).join(', ')} ms; floor loads ${floorLoads.map((x) => round(x)).join(', ')} ms; the page reads /v1/participation twice (to learn the height, then 200 heights) and /v1/validators`,
          ),
          duration(
            `participation page: one wheel step of scrolling drawn, ${VALIDATORS} × ${HEIGHTS} (p95)`,
            scrollP95,
            floors.frame,
            notes,
          ),
        ];
      }
    }
    return [];
  } finally {
    await browser.close();
    await new Promise((resolve) => floorServer.server.close(resolve));
    await rig.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await runAlone(run, import.meta);
