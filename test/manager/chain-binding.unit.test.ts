// The journal's binding to its chain (issue 17, item 1): a journal written for another chain is
// set aside — renamed with its pause, stake heights and actions — and a new one is used; a file
// of schema 0 is migrated and judged by its committed transactions; a newer schema is refused.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChainFacts } from '../../src/manager/chain/chain-facts.ts';
import { bindJournalToChain } from '../../src/manager/journal/chain-binding.ts';
import {
  Journal,
  JOURNAL_SCHEMA_VERSION,
  JournalVersionError,
  type ChainIdentity,
} from '../../src/manager/journal/journal.ts';
import { ActionBook } from '../../src/manager/reconcile/action-book.ts';
import { ManualClock } from '../support/manual-clock.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function journalPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cm-binding-'));
  dirs.push(dir);
  return join(dir, 'journal.sqlite');
}

const OLD: ChainIdentity = { chainId: 'testnet', genesisHash: 'aa'.repeat(32) };
const NEW: ChainIdentity = { chainId: 'testnet', genesisHash: 'bb'.repeat(32) };

/** A chain as the binding sees it: its height, its identity, the transactions it committed. */
function chain(
  height: number,
  identity: ChainIdentity | undefined,
  txs: Record<string, number> = {},
): ChainFacts {
  return {
    height: () => Promise.resolve(height),
    identity: () => Promise.resolve(identity),
    committedAt: (hash) => Promise.resolve(txs[hash]),
  };
}

/** A journal with 005 staked at height 40 (tx `h40`) and the manager paused. */
function oldJournal(path: string, bind: ChainIdentity | undefined): Journal {
  const journal = Journal.open(path, new ManualClock());
  const action = journal.prepare({
    validatorId: '005',
    address: 'aa'.repeat(20),
    kind: 'stake',
    mode: 'rpc',
    txHash: 'h40',
    fingerprint: 'f',
    reason: 'wanted',
    preparedHeight: 39,
  });
  journal.markSent(action.seq, { height: 39 });
  journal.markCommitted(action.seq, { height: 40, resultCode: 0 });
  journal.setSetting('paused', 'true');
  if (bind !== undefined) journal.bindChain(bind);
  return journal;
}

describe('binding the journal to its chain', () => {
  it('sets aside a journal of another chain: a new file, no stake heights, no pause; the old one renamed', async () => {
    const path = journalPath();
    const journal = oldJournal(path, OLD);
    const book = new ActionBook(journal);
    expect(book.stakeHeights.get('005')).toBe(40);

    const outcome = await bindJournalToChain(journal, chain(3, NEW));
    expect(outcome).toMatchObject({ kind: 'set-aside', chain: NEW });
    if (outcome.kind !== 'set-aside') return;
    expect(outcome.reason).toMatch(/written for chain testnet, genesis aaaa/);
    expect(outcome.setAsideTo).toMatch(/journal\.sqlite\.other-chain-\d{4}-/);
    book.reload();
    expect(book.stakeHeights.size).toBe(0);
    expect(journal.count()).toBe(0);
    expect(journal.getSetting('paused')).toBeUndefined();
    expect(journal.chain()).toEqual(NEW);
    // The old journal is intact under its new name.
    const aside = Journal.open(outcome.setAsideTo, new ManualClock());
    expect(aside.count()).toBe(1);
    expect(aside.getSetting('paused')).toBe('true');
    expect(aside.chain()).toEqual(OLD);
    aside.close();
    journal.close();
  });

  it('keeps a journal of the same chain, and sets one aside when the chain has no block yet', async () => {
    const path = journalPath();
    const journal = oldJournal(path, OLD);
    expect(await bindJournalToChain(journal, chain(50, OLD))).toEqual({ kind: 'same', chain: OLD });
    expect(journal.count()).toBe(1);
    const outcome = await bindJournalToChain(journal, chain(0, undefined));
    expect(outcome.kind).toBe('set-aside');
    expect(journal.count()).toBe(0);
    journal.close();
  });

  it('binds a new journal at once, or once the chain has its first block', async () => {
    const journal = Journal.open(journalPath(), new ManualClock());
    expect(await bindJournalToChain(journal, chain(0, undefined))).toEqual({ kind: 'pending' });
    expect(journal.chain()).toBeUndefined();
    expect(await bindJournalToChain(journal, chain(1, NEW))).toEqual({ kind: 'bound', chain: NEW });
    expect(journal.chain()).toEqual(NEW);
    journal.close();
  });

  it('judges a journal that recorded no chain by its newest committed transaction', async () => {
    // Its transaction is on this chain at the recorded height: the same chain, now bound.
    const same = oldJournal(journalPath(), undefined);
    expect(await bindJournalToChain(same, chain(45, NEW, { h40: 40 }))).toEqual({
      kind: 'bound',
      chain: NEW,
    });
    expect(same.count()).toBe(1);
    same.close();
    // Not on this chain, or above its height: another chain's.
    for (const facts of [chain(45, NEW), chain(45, NEW, { h40: 41 }), chain(12, NEW)]) {
      const other = oldJournal(journalPath(), undefined);
      const outcome = await bindJournalToChain(other, facts);
      expect(outcome.kind).toBe('set-aside');
      expect(other.count()).toBe(0);
      other.close();
    }
  });

  it('migrates a file of schema 0 (no user_version, no chain) and judges it by its actions', async () => {
    const path = journalPath();
    oldJournal(path, undefined).close();
    const raw = new DatabaseSync(path);
    raw.exec('PRAGMA user_version = 0');
    raw.close();

    const journal = Journal.open(path, new ManualClock());
    const version = new DatabaseSync(path, { readOnly: true });
    expect(
      (version.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
    ).toBe(JOURNAL_SCHEMA_VERSION);
    version.close();
    expect(journal.count()).toBe(1);
    const outcome = await bindJournalToChain(journal, chain(60, NEW));
    expect(outcome.kind).toBe('set-aside');
    journal.close();
  });

  it('refuses a file of a newer schema, leaving it untouched', () => {
    const path = journalPath();
    const raw = new DatabaseSync(path);
    raw.exec(`PRAGMA user_version = ${JOURNAL_SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => Journal.open(path, new ManualClock())).toThrow(JournalVersionError);
    expect(existsSync(path)).toBe(true);
  });
});
