// A manager whose journal fails (issue 30, item 9), on a real cluster (the emulator) and chain (two
// localnet nodes): a journal that fills up (its size limit, which SQLite reports exactly as a full
// disk) names JOURNAL_FULL, its file and SQLite's words in `/readyz`, in the plan and the status of
// the validator it cannot stake, and as the metric's code — before, they went on saying "stake"
// and "ready", and the code was `ERR_SQLITE_ERROR`; once there is room the stake goes, once. A
// damaged journal at start is moved aside (readyz, status), instead of `unexpected Error`.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { runBin } from '../support/run-bin.ts';
import { startControlFixture, type ControlFixture } from './support/control-fixture.ts';

let fixture: ControlFixture;

beforeAll(async () => {
  fixture = await startControlFixture();
  await fixture.commitBlock(); // block 1: the journal binds to this chain
});

afterAll(async () => {
  await fixture.stop();
});

/**
 * Fills the journal at `path` up to `maxBytes` (another connection) with old history, as a journal
 * fills in use: committed actions of validators long gone, to the last byte a row fits.
 */
function fill(path: string, maxBytes: number): void {
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA max_page_count = ${maxBytes / 4096}`);
  const insert = db.prepare(
    `INSERT INTO actions (validator_id, address, kind, state, mode, fingerprint, reason, prepared_height, created_at, updated_at)
       VALUES (?, 'old', 'stake', 'committed', 'rpc', 'f', ?, 0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
  );
  let i = 0;
  for (const size of [2_000, 500, 100, 1]) {
    try {
      for (;;) insert.run(`old-${i++}`, 'x'.repeat(size));
    } catch (error: unknown) {
      expect(error).toMatchObject({ errstr: 'database or disk is full' });
    }
  }
  db.close();
}

describe('a journal that fails', { timeout: 120_000 }, () => {
  it('full: JOURNAL_FULL with its file in readyz, plan, status and the metric; with room again the stake goes once', async () => {
    const path = join(fixture.dir, 'full-journal.sqlite');
    const first = await fixture.startManager({ CM_JOURNAL_PATH: path });
    await waitFor(() => first.manager.isSynced() || pending('not synced'), {
      what: 'the first manager to bind its journal',
      timeoutMs: 20_000,
    });
    await first.stop();
    const maxBytes = 128 * 1024;
    fill(path, maxBytes);

    const m = await fixture.startManager({
      CM_JOURNAL_PATH: path,
      CM_JOURNAL_MAX_BYTES: String(maxBytes),
    });
    try {
      await waitFor(() => m.manager.isSynced() || pending('not synced'), {
        what: 'the manager to sync',
        timeoutMs: 20_000,
      });
      await fixture.apps.patchNamespacedStatefulSetScale(
        { name: 'validator', namespace: fixture.namespace, body: { spec: { replicas: 2 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const failure = await waitFor(
        () =>
          m.control.readiness().journal.failure ??
          pending(`no journal failure yet; plan ${JSON.stringify(m.control.plan().actions)}`),
        { what: 'the journal failure in readyz', timeoutMs: 20_000 },
      );
      expect(failure, JSON.stringify(failure)).toMatchObject({
        code: 'JOURNAL_FULL',
        message: expect.stringContaining(
          `could not write the journal ${path}: database or disk is full`,
        ) as string,
      });
      const readyz = await m.app.inject({ method: 'GET', url: '/readyz' });
      expect(readyz.json()).toMatchObject({ journal: { failure: { code: 'JOURNAL_FULL' } } });
      const planned = m.control.plan().actions.find((a) => a.id === '002');
      expect(planned?.reason).toMatch(
        /^JOURNAL_FULL: could not write the journal .*; would stake: /,
      );
      const row = m.control.validators().find((v) => v.key === '002');
      expect(row?.reason).toMatch(/^JOURNAL_FULL: /);
      const metrics = (await m.control.metrics()).body;
      expect(metrics).toMatch(
        /cluster_manager_reconcile_errors_total\{code="JOURNAL_FULL"\} [1-9]/,
      );
      expect(metrics).not.toContain('ERR_SQLITE');
      expect(m.manager.book.open.size).toBe(0); // nothing written, so nothing sent

      // Room again: the filler goes; the manager's next try writes, sends, and the failure clears.
      const other = new DatabaseSync(path);
      other.exec("DELETE FROM actions WHERE validator_id LIKE 'old-%'");
      other.close();
      await fixture.commitUntil(
        () =>
          m.control.validators().find((v) => v.key === '002')?.phase === 'active' ||
          pending('002 not active'),
        { what: '002 staked and active', timeoutMs: 30_000 },
      );
      expect(m.control.readiness().journal.failure).toBeNull();
      const stakes = [];
      for (let h = 1; h <= (await fixture.chain.height()); h++)
        for (const tx of (await fixture.chain.block(h)).transactions ?? [])
          if (tx.message_type === 'MessageStake') stakes.push(tx);
      expect(stakes).toHaveLength(1);
    } finally {
      await m.stop();
    }
  });

  it('damaged at start: moved aside, shown in readyz; the manager runs on a new journal', async () => {
    const path = join(fixture.dir, 'damaged-journal.sqlite');
    writeFileSync(path, Buffer.alloc(8_192, 0x5a));
    const m = await fixture.startManager({ CM_JOURNAL_PATH: path });
    try {
      const aside = m.control.readiness().journal.setAside;
      expect(aside?.reason).toMatch(
        /could not open the journal .*damaged-journal\.sqlite: file is not a database .*moved aside, a new journal started$/,
      );
      expect(readdirSync(fixture.dir)).toContain(aside?.to.split('/').at(-1));
      expect(m.logs.join('')).toContain('"code":"JOURNAL_CORRUPT"');
      await waitFor(() => m.manager.isSynced() || pending('not synced'), {
        what: 'the manager to sync on its new journal',
        timeoutMs: 20_000,
      });
    } finally {
      await m.stop();
    }
  });

  it('`cluster-manager run` with a journal it cannot open says which and why, exit 1 (was "unexpected Error")', async () => {
    const notADir = join(fixture.dir, 'a-file');
    writeFileSync(notADir, 'x');
    const result = await runBin(
      'cluster-manager',
      ['run', '--journal', join(notADir, 'journal.sqlite'), '--rpc-port', '0'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          KUBECONFIG: join(fixture.dir, 'kubeconfig'),
          CM_NAMESPACE: fixture.namespace,
          CM_CHAIN_RPC_URL: fixture.chain.baseUrl,
          CM_RPC_TOKEN: 'a-token-of-at-least-16-chars',
          CM_RPC_HOST: '127.0.0.1',
        },
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error: the manager could not start: JOURNAL_UNAVAILABLE: could not open the journal ${join(notADir, 'journal.sqlite')}`,
    );
    expect(result.stderr).not.toContain('unexpected');
  });
});
