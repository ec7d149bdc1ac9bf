// What the debug CLI shows and whom it asks (issue 17, items 6–8): the manager found without
// --server or env (./.devnet, --devnet), `status`'s chain line, `watch` printing changes rather
// than every height, and what is still going on after a scale's wait ended early.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DevnetInfo } from '../../src/cli/devnet-file.ts';
import { parseChainTime } from '../../src/manager/chain/pocket/chain-time.ts';
import { ageText, summaryLines } from '../../src/manager/cli/render.ts';
import { commandPrefix, stillHappening } from '../../src/manager/cli/scale-command.ts';
import { DEFAULT_SERVER, resolveTarget } from '../../src/manager/cli/server-target.ts';
import { WatchPrinter } from '../../src/manager/cli/watch-printer.ts';
import type { ValidatorStatus } from '../../src/manager/status.ts';
import { writeDevnetLock } from '../support/devnet-lock-fixture.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A folder holding `.devnet/devnet.json` of a devnet whose manager is at `managerUrl`, and its
 * lock: held by a devnet that runs (this process), left by one that was killed, or none (stopped).
 */
function withDevnet(
  managerUrl: string | null,
  extra: Partial<DevnetInfo> = {},
  holder: 'running' | 'gone' | 'stopped' = 'running',
): string {
  const cwd = mkdtempSync(join(tmpdir(), 'cli-target-'));
  dirs.push(cwd);
  mkdirSync(join(cwd, '.devnet'));
  const written = holder === 'stopped' ? {} : writeDevnetLock(join(cwd, '.devnet'), holder);
  const info = {
    ...written,
    kubeApi: 'http://127.0.0.1:1',
    kubeconfig: join(cwd, '.devnet', 'kubeconfig'),
    namespace: 'devnet',
    statefulSet: 'validator',
    validators: 4,
    keys: 32,
    pacemaker: 'manual',
    blockIntervalMs: 1000,
    txMode: 'rpc',
    chainRpcUrl: 'http://127.0.0.1:2',
    managerUrl,
    token: 'devnet-token',
    managerLog: null,
    dir: join(cwd, '.devnet'),
    ...extra,
  };
  writeFileSync(join(cwd, '.devnet', 'devnet.json'), JSON.stringify(info));
  return cwd;
}

describe('which manager the CLI asks', () => {
  it("finds ./.devnet by itself: its manager's URL and its token, with nothing exported", async () => {
    const cwd = withDevnet('http://127.0.0.1:8123');
    const target = await resolveTarget({}, {}, cwd);
    expect([target.server, target.token, target.devnet?.explicit]).toEqual([
      'http://127.0.0.1:8123',
      'devnet-token',
      false,
    ]);
  });

  it('takes --server, then --devnet, then CLUSTER_MANAGER_URL, then ./.devnet, then the default', async () => {
    const cwd = withDevnet('http://127.0.0.1:8123');
    const other = withDevnet('http://127.0.0.1:9000');
    const env = { CLUSTER_MANAGER_URL: 'http://env:1', CLUSTER_MANAGER_TOKEN: 'env-token' };
    const server = await resolveTarget(
      { server: 'http://flag:1', devnet: join(other, '.devnet') },
      env,
      cwd,
    );
    // A devnet's token never goes to another server.
    expect([server.server, server.token]).toEqual(['http://flag:1', 'env-token']);
    const devnet = await resolveTarget({ devnet: join(other, '.devnet') }, env, cwd);
    expect([devnet.server, devnet.token]).toEqual(['http://127.0.0.1:9000', 'devnet-token']);
    const fromEnv = await resolveTarget({}, env, cwd);
    expect([fromEnv.server, fromEnv.token]).toEqual(['http://env:1', 'env-token']);
    const empty = mkdtempSync(join(tmpdir(), 'cli-target-'));
    dirs.push(empty);
    expect((await resolveTarget({}, {}, empty)).server).toBe(DEFAULT_SERVER);
  });

  it('uses the URL a --no-manager devnet wrote for a manager of your own', async () => {
    const cwd = withDevnet(null, { managerRpcUrl: 'http://127.0.0.1:8124' });
    expect((await resolveTarget({}, {}, cwd)).server).toBe('http://127.0.0.1:8124');
  });

  it('never sends the token of a devnet that does not run: one stopped, one killed, or another one starting there', async () => {
    const stopped = withDevnet('http://127.0.0.1:8123', {}, 'stopped');
    await expect(resolveTarget({}, {}, stopped)).rejects.toThrow(
      `the devnet in ${join(stopped, '.devnet')} is not running (it was stopped); \`npm start\` starts one (\`--resume\` tries to bring its chain back); pass --server to ask another manager`,
    );
    const killed = withDevnet('http://127.0.0.1:8123', {}, 'gone');
    await expect(resolveTarget({ devnet: join(killed, '.devnet') }, {}, '/')).rejects.toThrow(
      `the devnet in ${join(killed, '.devnet')} is not running: its process (pid ${process.pid}) was killed; \`npx cluster-manager devnet --dir ${join(killed, '.devnet')}\` starts a new one (and stops what the killed one left)`,
    );
    // A devnet runs there, but the file is an earlier one's: it is starting, not ready.
    const starting = withDevnet('http://127.0.0.1:8123', { startedAt: 'earlier' });
    await expect(resolveTarget({}, {}, starting)).rejects.toThrow(/is starting \(pid \d+\)/);
    // --server and CLUSTER_MANAGER_URL do not look at the devnet at all.
    expect((await resolveTarget({ server: 'http://flag:1' }, {}, stopped)).token).toBeUndefined();
  });

  it('names a --devnet folder that holds no devnet', async () => {
    await expect(resolveTarget({ devnet: '/nonexistent/x' }, {}, '/')).rejects.toThrow(
      /no devnet in \/nonexistent\/x \(no devnet.json\)/,
    );
  });

  it('tells follow-up commands how to reach the same manager', async () => {
    const cwd = withDevnet('http://127.0.0.1:8123');
    expect(commandPrefix(await resolveTarget({}, {}, cwd))).toBe('npx cluster-manager');
    expect(commandPrefix(await resolveTarget({ devnet: join(cwd, '.devnet') }, {}, '/'))).toBe(
      `npx cluster-manager --devnet ${join(cwd, '.devnet')}`,
    );
    expect(commandPrefix(await resolveTarget({ server: 'http://m:1' }, {}, '/'))).toBe(
      'cluster-manager --server http://m:1',
    );
  });
});

describe("status's chain line", () => {
  const now = Date.parse('2026-11-29T12:00:10Z');
  const chain = { healthy: true, height: 41, lastError: null, lastBlockAt: '2026-11-29T12:00:07Z' };
  it('shows the height, the last block age and whether the manager acts', () => {
    expect(summaryLines({ paused: false, synced: true, chain }, now)).toEqual([
      'chain height 41, last block 3.0 s ago · manager acting',
    ]);
  });
  it('says PAUSED and how to resume, and a journal set aside at start', () => {
    expect(
      summaryLines(
        {
          paused: true,
          synced: true,
          chain,
          journal: { setAside: { to: '/j.sqlite.other-chain-x', reason: 'written for chain t' } },
        },
        now,
      ),
    ).toEqual([
      'chain height 41, last block 3.0 s ago · PAUSED: no action is taken (cluster-manager resume)',
      'journal of another chain set aside at start: /j.sqlite.other-chain-x (written for chain t)',
    ]);
  });
  it('shows an informer whose last list or watch failed (a 403 names the missing rule)', () => {
    const lastError =
      'KUBE_FORBIDDEN: pods is forbidden: User "system:serviceaccount:ns:cm" cannot list resource "pods" in API group "" in the namespace "ns" (the Role needs a rule with apiGroups [""], resources ["pods"], verbs ["list"])';
    expect(
      summaryLines(
        {
          paused: false,
          synced: false,
          chain,
          informers: [
            { name: 'pods', synced: false, lastError },
            { name: 'statefulsets', synced: true, lastError: null },
          ],
        },
        now,
      ),
    ).toEqual([
      'chain height 41, last block 3.0 s ago · manager not synced yet',
      `problem: pods: ${lastError}`,
    ]);
  });
  it('reads V1 header times (Go time.String) and RFC 3339', () => {
    expect(parseChainTime('2026-11-29 12:00:07.5 +0000 UTC')).toBe(
      Date.parse('2026-11-29T12:00:07.500Z'),
    );
    expect(parseChainTime('2026-11-29 14:00:07.123456789 +0200 CEST m=+3.1')).toBe(
      Date.parse('2026-11-29T12:00:07.123Z'),
    );
    expect(parseChainTime('2026-11-29T12:00:07Z')).toBe(Date.parse('2026-11-29T12:00:07Z'));
    expect(parseChainTime('yesterday')).toBeUndefined();
    expect([ageText(400), ageText(42_000), ageText(300_000), ageText(7_500_000)]).toEqual([
      '0.4 s',
      '42 s',
      '5 min',
      '2 h 5 min',
    ]);
  });
});

describe('watch', () => {
  function printer(options: { heights?: boolean; json?: boolean } = {}) {
    const out: string[] = [];
    let now = Date.parse('2026-11-29T12:00:00Z');
    const p = new WatchPrinter({
      out: (line) => out.push(line),
      server: 'http://m',
      heights: options.heights ?? false,
      json: options.json ?? false,
      now: () => now,
    });
    p.stop();
    return { p, out, advance: (ms: number) => (now += ms) };
  }

  it('prints what a hostile server sends without terminal escapes, and survives data that is not an object', () => {
    const { p, out } = printer();
    p.event('hello', null);
    p.event('phase', { id: '005', to: 'active', reason: 'x\u001b[2J\u001b]0;title\u0007y' });
    expect(out).toHaveLength(2);
    expect(out[1]).toContain('x\\u001b[2J\\u001b]0;title\\u0007y');
    expect(out.join('')).not.toContain('\u001b');
  });

  it('prints changes with the time and height, not a line per block', () => {
    const { p, out } = printer();
    p.event('hello', { height: 40, paused: false });
    for (let h = 41; h <= 45; h++) p.event('height', { height: h });
    p.event('phase', {
      key: '005',
      id: '005',
      from: 'pending',
      to: 'staking',
      reason: 'stake sent at height 45',
    });
    p.event('action', {
      validatorId: '005',
      kind: 'stake',
      state: 'sent',
      txHash: '52e2d1cb180527ce99',
      errorCode: null,
    });
    p.event('paused', { paused: true });
    expect(out).toEqual([
      '12:00:00 h40 following http://m',
      '12:00:00 h45 005 pending → staking: stake sent at height 45',
      '12:00:00 h45 005 stake sent 52e2d1cb180527ce',
      '12:00:00 h45 paused',
    ]);
  });

  it('says once when the chain stops making blocks, and when it starts again', () => {
    const { p, out, advance } = printer();
    p.event('hello', { height: 7, paused: false });
    advance(9_000);
    p.tick();
    advance(1_000);
    p.tick();
    p.tick();
    p.event('height', { height: 8 });
    expect(out.slice(1)).toEqual([
      '12:00:10 h7 no new block for 10 s (a manual pacemaker makes blocks only on trigger-view or scale --drive)',
      '12:00:10 h8 blocks again',
    ]);
  });

  it('prints every height with --heights, and every event as one JSON line with --json', () => {
    const heights = printer({ heights: true });
    heights.p.event('hello', { height: 1, paused: false });
    heights.p.event('height', { height: 2 });
    expect(heights.out.at(-1)).toBe('12:00:00 h2 new block');
    const json = printer({ json: true });
    json.p.event('height', { height: 2 });
    expect(JSON.parse(json.out[0] ?? '')).toEqual({
      time: '2026-11-29T12:00:00.000Z',
      event: 'height',
      data: { height: 2 },
    });
  });
});

describe('what is still happening after a scale stopped waiting', () => {
  const row = (id: string, wanted: boolean, phase: string, chain: string, reason: string) =>
    ({
      key: id,
      id,
      wanted,
      phase,
      reason,
      ready: true,
      pod: `validator-${Number(id) - 1}`,
      chain: { status: chain },
    }) as unknown as ValidatorStatus;
  it('lists who is not where the scale wants them, with the reason', () => {
    const rows = [
      row('001', true, 'active', 'staked', 'signing'),
      row('005', true, 'staked', 'staked', 'staked; waiting for its first signature'),
      row('006', true, 'staking', 'absent', 'stake sent at height 9'),
      row('007', false, 'active', 'staked', 'still staked on chain'),
      row('008', false, 'unstaked', 'unstaking', 'gone'),
    ];
    expect(stillHappening(rows, 'active')).toEqual([
      '005 staked (staked; waiting for its first signature)',
      '006 staking (stake sent at height 9)',
      '007 active (still staked on chain)',
    ]);
    expect(stillHappening(rows, 'staked')).toHaveLength(2);
  });
});
