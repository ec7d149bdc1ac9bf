// `cluster-manager run` with a journal of another chain (issue 17, item 1, on any cluster) — one
// written by today's manager, which records no chain: the journal is set aside at start — renamed, logged, shown in /readyz and `status` — so a pause,
// stake heights and actions of a dead chain do not carry over; on the new chain the manager acts
// at once and a re-staked validator counts as active from its first signature.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { Journal } from '../../src/manager/journal/journal.ts';
import { startService, type RunningService } from '../../src/manager/run.ts';
import { systemClock } from '../../src/manager/clock.ts';
import { lines, runCli } from './support/cli.ts';
import {
  SERVICE_URL_TEMPLATE,
  startControlFixture,
  TOKEN,
  type ControlFixture,
} from './support/control-fixture.ts';

let fixture: ControlFixture;
let service: RunningService;
let env: Record<string, string>;
let journalPath: string;

beforeAll(async () => {
  fixture = await startControlFixture();
  // The journal today's manager left on a dead chain (schema 0: it names no chain): paused, and
  // 002 staked there at height 40 by a transaction this chain never saw.
  journalPath = join(fixture.dir, 'old-journal.sqlite');
  const old = Journal.open(journalPath, systemClock);
  const action = old.prepare({
    validatorId: '002',
    address: fixture.keys.get('002')!.address,
    kind: 'stake',
    mode: 'rpc',
    txHash: 'ab'.repeat(32),
    fingerprint: 'old',
    reason: 'wanted',
    preparedHeight: 39,
  });
  old.markSent(action.seq, { height: 39 });
  old.markCommitted(action.seq, { height: 40, resultCode: 0 });
  old.setSetting('paused', 'true');
  old.close();
  const raw = new DatabaseSync(journalPath);
  raw.exec('PRAGMA user_version = 0');
  raw.close();
  // A block on this chain, so it has an identity to compare with.
  await fixture.commitBlock();

  service = await startService({
    env: {
      KUBECONFIG: join(fixture.dir, 'kubeconfig'),
      CM_NAMESPACE: fixture.namespace,
      CM_CHAIN_RPC_URL: fixture.chain.baseUrl,
      CM_SERVICE_URL_TEMPLATE: SERVICE_URL_TEMPLATE,
      CM_JOURNAL_PATH: journalPath,
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

describe('a journal written for another chain', () => {
  it('is set aside at start: renamed, shown in /readyz and status, and its pause is gone', async () => {
    const ready = (await (await fetch(`${service.rpcUrl ?? ''}/readyz`)).json()) as {
      paused: boolean;
      journal: {
        chain: { genesisHash: string } | null;
        setAside: { to: string; reason: string } | null;
      };
    };
    expect(ready.paused).toBe(false);
    const block1 = (await fixture.chain.block(1)).block_header;
    expect(ready.journal.chain?.genesisHash).toBe(block1.prev_state_hash);
    expect(ready.journal.setAside?.to).toMatch(/old-journal\.sqlite\.other-chain-/);
    expect(ready.journal.setAside?.reason).toMatch(
      /^its action 1 committed at height 40, and this chain is at \d$/,
    );
    expect(existsSync(ready.journal.setAside!.to)).toBe(true);

    const status = await runCli(['status'], { env });
    expect(lines(status.stdout).slice(0, 2)).toEqual([
      expect.stringMatching(/ · manager acting$/),
      `journal of another chain set aside at start: ${ready.journal.setAside!.to} (${ready.journal.setAside!.reason})`,
    ]);
    const actions = await runCli(['actions', '--json'], { env });
    expect((JSON.parse(actions.stdout) as { actions: unknown[] }).actions).toEqual([]);
  });

  it("lets the manager act at once, and counts 002 active from its first signature here (not after the dead chain's height 40)", async () => {
    const scale = await runCli(['scale', '2', '--wait', 'active', '--drive', '--timeout', '60'], {
      env,
      timeoutMs: 90_000,
    });
    expect(scale.code, scale.stderr).toBe(0);
    expect(lines(scale.stderr).at(-1)).toMatch(
      /^validator: 1 → 2; done in [\d.]+ s at height (\d+)$/,
    );
    const height = Number(/at height (\d+)$/.exec(lines(scale.stderr).at(-1) ?? '')?.[1]);
    expect(height).toBeLessThan(40);
  });
});
