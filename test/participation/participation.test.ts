// Participation on a devnet (one devnet for the file, manual pacemaker): the read against the
// chain itself — for every height of a 4 → 6 → 4 scale, signers, absentees, proposer and
// transactions compared with the blocks' quorum certificates, headers and transactions and the
// validator rows, read straight from the node's RPC with fetch (not through the manager's code or
// the protocol library); the CLI grid in an 80-column terminal and in a pipe; the page at
// /ui/#token=… in Debian's Chromium (cells against the read, a new block without a reload, a wrong
// token); and the attacks: the read without a token, a token in the query string, 10,000 event
// streams at once.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Participation } from '../../src/manager/participation/participation.ts';
import { statesAt } from '../../src/manager/ui/cells.js';
import { pending, waitFor } from '../../src/harness/index.ts';
import { useDevnet } from '../integration/support.ts';
import { findChromium, launchChromium, type Browser } from '../support/chromium.ts';
import { runBin } from '../support/run-bin.ts';

const devnet = useDevnet('participation', { pacemaker: 'manual' });

/** One POST to the chain's RPC, as V1 serves it. */
async function query<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(`${devnet.h.info.chainRpcUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

interface RawBlock {
  block_header: {
    proposer_addr: string;
    quorum_cert: { threshold_sig: { signatures: { address: string }[] | null } };
  };
  transactions:
    | { signer_addr: string; message_type: string; result_code: number; tx: { hash: string } }[]
    | null;
}

/** The block at `height` straight from the node (`{"block": …}` on the intended profile). */
async function rawBlock(height: number): Promise<RawBlock> {
  const body = await query<RawBlock | { block: RawBlock }>('/v1/query/block', { height });
  return 'block' in body ? body.block : body;
}

/** Addresses staked (not unstaking, not paused) in the state after block `height`. */
async function stakedAfter(height: number): Promise<string[]> {
  const page = await query<{
    validators: { address: string; unstaking_height: number; paused_height: number }[] | null;
  }>('/v1/query/validators', { height, page: 1, per_page: 1000 });
  return (page.validators ?? [])
    .filter((v) => v.unstaking_height < 0 && v.paused_height < 0)
    .map((v) => v.address);
}

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${devnet.h.info.managerUrl}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
const auth = () => ({ authorization: `Bearer ${devnet.h.info.token ?? ''}` });

/** Waits until the manager has read the chain's current height (its record holds it). */
async function recordCaughtUp(): Promise<Participation> {
  const top = await devnet.h.height();
  return waitFor(
    async () => {
      const read = await devnet.h.participation();
      return (
        (read.recorded?.to ?? 0) >= top ||
        pending(`recorded ${JSON.stringify(read.recorded)}, chain ${top}`)
      );
    },
    { what: `the manager to read height ${top}`, timeoutMs: 15_000 },
  ).then(() => devnet.h.participation());
}

describe('participation on a devnet', { timeout: 180_000 }, () => {
  let scaleFrom = 0;

  it('is a read like every other: 401 without the token, a token in the query string refused', async () => {
    await devnet.h.expectChainProgress(1, 30_000);
    expect((await get('/v1/participation')).status).toBe(401);
    expect((await get(`/v1/participation?token=${devnet.h.info.token ?? ''}`)).status).toBe(401);
    const both = await get(`/v1/participation?token=x`, auth());
    expect(both.status).toBe(400);
    expect((await get(`/ui/?token=x`)).status).toBe(400);
    expect((await get('/ui/')).status).toBe(200);
  });

  it('4 → 6 → 4: agrees with the certificates, headers, transactions and rows at every height', async () => {
    const { h } = devnet;
    const ids = new Map([...(await h.addresses())].map(([id, address]) => [address, id]));
    const name = (address: string): string => ids.get(address) ?? address;
    scaleFrom = await h.height();
    expect((await h.scaleTo(6, { wait: 'active', timeoutSeconds: 90 })).body).toMatchObject({
      done: true,
    });
    expect((await h.scaleTo(4, { wait: 'active', timeoutSeconds: 90 })).body).toMatchObject({
      done: true,
    });
    await h.triggerView();
    const read = await recordCaughtUp();
    const top = read.recorded!.to;
    const window = await h.participation(1, top);
    expect(window.heights.map((x) => x.height)).toEqual(
      Array.from(
        { length: top - window.heights[0]!.height + 1 },
        (_, i) => window.heights[0]!.height + i,
      ),
    );
    const kinds = { MessageStake: 'stake', MessageUnstake: 'unstake' } as Record<string, string>;
    let compared = 0;
    for (const height of window.heights) {
      const block = await rawBlock(height.height);
      const signers = (block.block_header.quorum_cert.threshold_sig.signatures ?? []).map(
        (s) => s.address,
      );
      expect(height.signers, `signers at ${height.height}`).toEqual(signers.map(name).sort());
      expect(height.proposer, `proposer at ${height.height}`).toBe(
        name(block.block_header.proposer_addr),
      );
      expect(height.transactions, `transactions at ${height.height}`).toEqual(
        (block.transactions ?? [])
          .filter((tx) => kinds[tx.message_type] !== undefined)
          .map((tx) => ({
            kind: kinds[tx.message_type],
            validator: name(tx.signer_addr),
            hash: tx.tx.hash,
            resultCode: tx.result_code,
          })),
      );
      // The staked set of a height: the rows after the block before (height 0 is not a query).
      if (height.absent === null) {
        // Only heights the manager read back when it started may lack it.
        expect(height.height, `absent unknown at ${height.height}`).toBeLessThan(scaleFrom);
        continue;
      }
      if (height.height < 2) continue;
      const staked = await stakedAfter(height.height - 1);
      expect(height.absent, `absent at ${height.height}`).toEqual(
        staked
          .filter((a) => !signers.includes(a))
          .map(name)
          .sort(),
      );
      compared++;
    }
    // Every height of the scale was compared, stakes and unstakes of 005 and 006 among them.
    expect(compared).toBeGreaterThanOrEqual(top - Math.max(scaleFrom, 1));
    const txs = window.heights.flatMap((x) => x.transactions).filter((tx) => tx.resultCode === 0);
    expect(txs.map((tx) => `${tx.kind} ${tx.validator}`).sort()).toEqual([
      'stake 005',
      'stake 006',
      'unstake 005',
      'unstake 006',
    ]);
    expect(read.validators).toEqual(
      expect.arrayContaining(['001', '002', '003', '004', '005', '006']),
    );
  });

  it('draws the grid in an 80-column terminal and in a pipe, no line over 80, one row per validator', async () => {
    const { h } = devnet;
    const cli = ['src/bin/cluster-manager.ts', '--devnet', h.info.dir, 'participation'];
    // A real terminal: `script` gives the CLI a pseudo-terminal of 80 columns.
    const command = `stty cols 80 rows 50; ${[process.execPath, ...cli].map((a) => `'${a}'`).join(' ')}`;
    const tty = await runScript(command);
    // eslint-disable-next-line no-control-regex -- the terminal's colour escapes are removed
    const screen = tty.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');
    expect(tty).toContain('\x1b['); // coloured: it knew it was a terminal
    const lines = screen.split('\n').filter((l) => l !== '');
    for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(80);
    const rows = lines.filter((l) => /^\d{3} /.test(l));
    expect(rows.map((r) => r.slice(0, 3))).toEqual(['001', '002', '003', '004', '005', '006']);
    // Every row as wide as the others: the label, a space, one cell per height shown.
    expect(new Set(rows.map((r) => r.length)).size).toBe(1);
    const piped = await runBin('cluster-manager', ['--devnet', h.info.dir, 'participation'], {
      env: { ...process.env, COLUMNS: '' },
    });
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toContain('\x1b');
    for (const line of piped.stdout.split('\n'))
      expect([...line].length, line).toBeLessThanOrEqual(80);
    expect(piped.stdout).toMatch(/^001 +[oPX+\-.?_]+$/m);
    expect(piped.stdout).toContain('o signed');
  });

  describe('the page in Chromium', () => {
    const found = findChromium();
    let browser: Browser | undefined;
    if ('reason' in found) process.stderr.write(`skipped: ${found.reason}\n`);
    beforeAll(async () => {
      if ('path' in found) browser = await launchChromium(found.path);
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    it.skipIf('reason' in found)(
      'shows every cell as the read says, a new block without a reload',
      async () => {
        const { h } = devnet;
        const page = await browser!.context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(`${h.info.managerUrl}/ui/#token=${h.info.token ?? ''}`);
        // In-page code as text where it needs the DOM's types (the test's TypeScript has none).
        await page.waitForFunction(
          () =>
            (globalThis as { participation?: { ready?: boolean } }).participation?.ready === true,
        );
        // The token left the address bar and stays in the tab.
        expect(page.url()).toBe(`${h.info.managerUrl}/ui/`);
        const cells = await page.evaluate<[string, number, string][]>(
          `[...document.querySelectorAll('[data-state]')].map((c) => [c.dataset.validator, Number(c.dataset.height), c.dataset.state])`,
        );
        const heightsShown = [...new Set(cells.map(([, height]) => height))].sort((a, b) => a - b);
        const read = await h.participation(heightsShown[0], heightsShown.at(-1));
        expect(cells).toHaveLength(read.validators.length * heightsShown.length);
        const byHeight = new Map(read.heights.map((x) => [x.height, statesAt(x)]));
        for (const [validator, height, state] of cells)
          expect(state, `${validator} at ${height}`).toBe(
            byHeight.get(height)?.(validator) ?? 'unread',
          );
        expect(new Set(cells.map(([, , state]) => state)).size).toBeGreaterThanOrEqual(2);
        const labels = await page.evaluate(
          `[...document.querySelectorAll('.row .id')].map((e) => e.textContent)`,
        );
        expect(labels).toEqual(read.validators);
        expect(await page.textContent('.row[data-row="001"] .phase')).toBe('active');

        // A new block: a new column, without a reload.
        await page.evaluate('window.notReloaded = true');
        const next = await h.triggerView();
        await page.waitForSelector(`[data-validator="001"][data-height="${next}"]`, {
          timeout: 15_000,
        });
        expect(await page.evaluate('window.notReloaded')).toBe(true);
        expect(await page.textContent('#chain')).toMatch(new RegExp(`height ${next}\\b`));
        expect(errors).toEqual([]);
        await page.close();
      },
    );

    it.skipIf('reason' in found)('says clearly when the token is wrong, or missing', async () => {
      const page = await browser!.context.newPage();
      await page.goto(`${devnet.h.info.managerUrl}/ui/#token=not-the-token-0123456789`);
      await page.waitForSelector('#message:not([hidden])');
      expect(await page.textContent('#message')).toMatch(/refused this token \(401/);
      await page.goto(`${devnet.h.info.managerUrl}/ui/`);
      await page.waitForSelector('#message:not([hidden])');
      expect(await page.textContent('#message')).toMatch(/No token/);
      expect(await page.locator('[data-state]').count()).toBe(0);
      await page.close();
    });
  });

  it('10,000 event streams at once: at most 32 are served, the rest refused, the manager goes on', async () => {
    const { h } = devnet;
    const url = new URL(h.info.managerUrl!);
    const request = `GET /v1/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${h.info.token ?? ''}\r\n\r\n`;
    // One stream opened before the flood keeps getting blocks through it.
    const before = await openStream(url, request);
    const sockets: Socket[] = [];
    const statuses = new Map<string, number>();
    try {
      for (let batch = 0; batch < 10; batch++) {
        const opened = await Promise.all(
          Array.from({ length: 1_000 }, () => openStream(url, request)),
        );
        for (const { socket, status } of opened) {
          sockets.push(socket);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }
      expect(statuses.get('200')).toBe(31);
      // The rest are refused: 503 by the stream limit, or closed by the control server's connection
      // cap (rpc/connection-cap.ts: past 1,024 it closes the oldest connection that has not asked
      // yet, which in a flood is one whose request is still on its way).
      expect((statuses.get('503') ?? 0) + (statuses.get('reset') ?? 0)).toBe(10_000 - 31);
      // Meanwhile the manager answers reads and follows the chain.
      expect((await get('/v1/participation', auth())).status).toBe(200);
      const next = await h.triggerView();
      await waitFor(
        () => before.text().includes(`"height":${next},`) || pending(before.text().slice(-200)),
        {
          what: `the stream opened before the flood to carry block ${next}`,
          timeoutMs: 15_000,
        },
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      before.socket.destroy();
    }
    // The slots come back once the clients are gone.
    await waitFor(
      async () =>
        (await openStream(url, request).then((s) => (s.socket.destroy(), s.status))) === '200' ||
        pending('no slot yet'),
      {
        what: 'a stream slot to be free again',
        timeoutMs: 10_000,
      },
    );
  });
});

/** Opens one raw HTTP request and resolves with its status once the head arrived. */
function openStream(
  url: URL,
  request: string,
): Promise<{ socket: Socket; status: string; text: () => string }> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(Number(url.port), url.hostname, () => socket.write(request));
    socket.setEncoding('utf8');
    let done = false;
    socket.on('data', (chunk: string) => {
      received += chunk;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
      if (!done && status !== undefined) {
        done = true;
        resolve({ socket, status, text: () => received });
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (done) return;
      done = true;
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE')
        resolve({ socket, status: 'reset', text: () => received });
      else reject(error);
    });
    // The connection cap destroys the socket: an RST, or a plain close when nothing was unread.
    socket.on('close', () => {
      if (done) return;
      done = true;
      resolve({ socket, status: 'reset', text: () => received });
    });
  });
}

/** Runs `command` under `script` (a pseudo-terminal) and returns what it printed. */
async function runScript(command: string): Promise<string> {
  const { spawn } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: new URL('../../', import.meta.url).pathname,
      env: { ...process.env, TERM: 'xterm-256color' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}
