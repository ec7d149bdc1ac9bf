// `scale` tells the truth early (issue 17, items 3, 6 and 8) — the real binary against a real
// manager on a chain with a manual pacemaker: without --drive no block comes, so a timeout names
// --drive, a long wait fails fast with NO_BLOCKS, Ctrl-C says what the manager still does (and it
// does it: checked on the chain), and `status` shows a pause.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { startService, type RunningService } from '../../src/manager/run.ts';
import { lines, runCli, startCli } from './support/cli.ts';
import {
  SERVICE_URL_TEMPLATE,
  startControlFixture,
  TOKEN,
  type ControlFixture,
} from './support/control-fixture.ts';

let fixture: ControlFixture;
let service: RunningService;
let env: Record<string, string>;

beforeAll(async () => {
  fixture = await startControlFixture();
  service = await startService({
    env: {
      KUBECONFIG: join(fixture.dir, 'kubeconfig'),
      CM_NAMESPACE: fixture.namespace,
      CM_CHAIN_RPC_URL: fixture.chain.baseUrl,
      CM_SERVICE_URL_TEMPLATE: SERVICE_URL_TEMPLATE,
      CM_JOURNAL_PATH: join(fixture.dir, 'truth-journal.sqlite'),
      CM_READY_DEBOUNCE: '50ms',
      CM_CHAIN_POLL_INTERVAL: '100ms',
      CM_SYNC_CHECK: 'false',
      CM_PACING: 'off',
      CM_RPC_HOST: '127.0.0.1',
      CM_RPC_PORT: '0',
      CM_RPC_TOKEN: TOKEN,
      CM_LOG_LEVEL: 'silent',
      CM_SHUTDOWN_TIMEOUT: '2s',
    },
  });
  env = { CLUSTER_MANAGER_URL: service.rpcUrl ?? '', CLUSTER_MANAGER_TOKEN: TOKEN };
  await waitFor(() => (service.manager.isReady() ? true : pending('not ready')), {
    what: 'the manager to be ready',
  });
});

afterAll(async () => {
  await service.stop();
  await fixture.stop();
});

const address002 = (): string => fixture.keys.get('002')!.address;

describe('scale on a chain that makes no block by itself', () => {
  it('a timeout names --drive and says what the manager goes on doing', async () => {
    const result = await runCli(['scale', '2', '--wait', 'active', '--timeout', '3'], { env });
    expect(result.code).toBe(3);
    const errors = lines(result.stderr).filter((l) => l.startsWith('error:'));
    expect(errors).toEqual([
      expect.stringMatching(
        /^error: timed out after \d+ s; not there yet: .*002 \(.*\); no block came while waiting: a chain with a manual pacemaker needs --drive$/,
      ),
    ]);
    expect(result.stderr).toMatch(/not there yet; the manager goes on: .*002 staking/);
    expect(result.stderr).toContain('follow it: cluster-manager watch');
  });

  it('a long wait without --drive fails fast with NO_BLOCKS instead of waiting 300 s', async () => {
    const started = performance.now();
    const result = await runCli(['scale', '2', '--wait', 'active'], { env, timeoutMs: 60_000 });
    const seconds = (performance.now() - started) / 1000;
    expect(result.code, result.stderr).toBe(1);
    expect(seconds).toBeLessThan(40);
    expect(lines(result.stderr).filter((l) => l.startsWith('error:'))).toEqual([
      expect.stringMatching(
        /^error: SCALE_BLOCKED: validator is set to 2 replicas, but the wait cannot end: the chain has made no block in the last \d+ s and this scale needs blocks; a chain with a manual pacemaker makes them only when driven: pass --drive/,
      ),
    ]);
  });

  it('Ctrl-C ends the wait with 130 and says what goes on; the manager does it', async () => {
    const scale = startCli(['scale', '2', '--wait', 'active'], { env });
    await waitFor(() => (scale.stderr.includes('scaling to 2') ? true : pending(scale.stderr)), {
      what: 'the scale to start waiting',
    });
    scale.child.kill('SIGINT');
    const result = await scale.exited;
    expect(result.code).toBe(130);
    const out = lines(result.stderr);
    expect(out.at(-1)).toBe('error: interrupted; the scale to 2 goes on in the manager');
    expect(result.stderr).toMatch(/interrupted by SIGINT; the manager goes on: .*002 /);
    expect(result.stderr).toContain(
      'follow it: cluster-manager watch   (or: cluster-manager status)',
    );
    // It goes on: as blocks come, 002 is staked and signs.
    await fixture.commitUntil(
      async () => {
        const height = await fixture.chain.height();
        if (height < 1) return pending('no block yet');
        const { signatures } = (await fixture.chain.block(height)).block_header.quorum_cert
          .threshold_sig;
        return signatures?.some((s) => s.address === address002()) || pending('002 has not signed');
      },
      { what: '002 to be staked and sign after the interrupted scale' },
    );
  });
});

describe('status', () => {
  it('shows the chain height, the last block age, and PAUSED while paused', async () => {
    const height = await fixture.commitBlock();
    await waitFor(() => (service.manager.chain.height >= height ? true : pending('behind')), {
      what: `the manager to read height ${height}`,
    });
    expect((await runCli(['pause'], { env })).code).toBe(0);
    try {
      const result = await runCli(['status'], { env });
      expect(result.code).toBe(0);
      expect(lines(result.stdout)[0]).toMatch(
        new RegExp(
          `^chain height ${height}, last block [\\d.]+ s ago · PAUSED: no action is taken \\(cluster-manager resume\\)$`,
        ),
      );
      const json = JSON.parse((await runCli(['status', '--json'], { env })).stdout) as {
        paused: boolean;
        chain: { height: number; lastBlockAt: string };
      };
      expect(json.paused).toBe(true);
      expect(json.chain.height).toBe(height);
      const header = (await fixture.chain.block(height)).block_header.timestamp;
      expect(
        Math.abs(
          Date.parse(json.chain.lastBlockAt) -
            Date.parse(header.replace(' +0000 UTC', 'Z').replace(' ', 'T')),
        ),
      ).toBeLessThan(1);
    } finally {
      await runCli(['resume'], { env });
    }
  });
});
