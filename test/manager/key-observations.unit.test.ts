// When each validator id's current key was first seen (src/manager/keys/key-observations.ts), kept
// in the journal: a restarted manager keeps the time of a key that did not change while it was
// down, and counts a key that did (or one it has no record of) as seen at its start.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { V1Secret } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { Journal, JOURNAL_SCHEMA_VERSION } from '../../src/manager/journal/journal.ts';
import { KeyObservations } from '../../src/manager/keys/key-observations.ts';
import { secretWrittenBy } from '../../src/manager/discovery/secret-written.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { keyOf } from '../support/plan-fixture.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function journalPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cm-key-observations-'));
  dirs.push(dir);
  return join(dir, 'journal.sqlite');
}

const hex = (id: string): string => keyOf(id).exportPrivateKeyHex();

/** The keys Secret with `values` (id → key hex, or raw text for a bad one). */
function keys(values: Record<string, string>): KeyStore {
  const store = new KeyStore(pocketIds, pocketKeys);
  store.update(
    keySetOfSecret({
      metadata: { resourceVersion: '1' },
      data: Object.fromEntries(
        Object.entries(values).map(([id, v]) => [id, Buffer.from(v).toString('base64')]),
      ),
    }),
  );
  return store;
}

/** A manager's start: the journal opened, the keys observed once. */
function start(
  path: string,
  clock: ManualClock,
  values: Record<string, string>,
): { journal: Journal; observations: KeyObservations; fresh: string[] } {
  const journal = Journal.open(path, clock);
  const observations = new KeyObservations({ store: journal, clock });
  const fresh = observations.observe(keys(values).entries());
  return { journal, observations, fresh };
}

describe('key observations', () => {
  it('a first start sees every key now, and records each by its address', () => {
    const path = journalPath();
    const clock = new ManualClock();
    const t0 = clock.now();
    const { journal, observations, fresh } = start(path, clock, {
      '005': hex('005'),
      '006': hex('006'),
    });
    expect(fresh).toEqual(['005', '006']);
    expect(observations.observed.get('005')).toEqual({
      address: keyOf('005').address,
      observedAt: t0,
    });
    expect(journal.keyObservations()).toEqual(observations.observed);
    journal.close();
  });

  it('observed is a live view: a reader that took it before the first observation sees the records', async () => {
    const path = journalPath();
    const clock = new ManualClock();
    const t0 = clock.now();
    start(path, clock, { '005': hex('005') }).journal.close();
    await clock.advance(10_000);
    const journal = Journal.open(path, clock);
    const observations = new KeyObservations({ store: journal, clock });
    const view = observations.observed;
    observations.observe(keys({ '005': hex('005') }).entries());
    expect(view.get('005')?.observedAt).toBe(t0);
    journal.close();
  });

  it('after a restart, an unchanged key keeps its time and a key changed meanwhile is seen now', async () => {
    const path = journalPath();
    const clock = new ManualClock();
    const t0 = clock.now();
    start(path, clock, { '005': hex('005'), '006': hex('006') }).journal.close();

    await clock.advance(60_000);
    // While the manager was down, 006 was given 007's key.
    const { journal, observations, fresh } = start(path, clock, {
      '005': hex('005'),
      '006': hex('007'),
    });
    expect(fresh).toEqual(['006']);
    expect(observations.observed.get('005')?.observedAt).toBe(t0);
    expect(observations.observed.get('006')).toEqual({
      address: keyOf('007').address,
      observedAt: t0 + 60_000,
    });
    journal.close();

    // And the next restart keeps both of those times.
    await clock.advance(60_000);
    const again = start(path, clock, { '005': hex('005'), '006': hex('007') });
    expect(again.fresh).toEqual([]);
    expect(again.observations.observed.get('006')?.observedAt).toBe(t0 + 60_000);
    again.journal.close();
  });

  it("a key borrowed from another id and given back is seen anew at each step; a malformed or missing key leaves the last one's time", async () => {
    const path = journalPath();
    const clock = new ManualClock();
    const { journal, observations } = start(path, clock, {
      '005': hex('005'),
      '006': hex('006'),
    });
    const seen = (id: string) => observations.observed.get(id);
    const t0 = clock.now();

    await clock.advance(1_000); // 006 := 005's key: a duplicate, whose node would load 005's key
    expect(observations.observe(keys({ '005': hex('005'), '006': hex('005') }).entries())).toEqual([
      '006',
    ]);
    expect(seen('006')).toEqual({ address: keyOf('005').address, observedAt: t0 + 1_000 });
    expect(seen('005')?.observedAt).toBe(t0);

    await clock.advance(3_000); // given back
    observations.observe(keys({ '005': hex('005'), '006': hex('006') }).entries());
    expect(seen('006')).toEqual({ address: keyOf('006').address, observedAt: t0 + 4_000 });

    await clock.advance(1_000); // malformed, then missing, then back: no new key in between
    observations.observe(keys({ '005': hex('005'), '006': 'zz' }).entries());
    observations.observe(keys({ '005': hex('005') }).entries());
    expect(observations.observe(keys({ '005': hex('005'), '006': hex('006') }).entries())).toEqual(
      [],
    );
    expect(seen('006')?.observedAt).toBe(t0 + 4_000);
    expect(journal.keyObservations().get('006')?.observedAt).toBe(t0 + 4_000);
    journal.close();
  });

  it('writes addresses and times to the journal file, never a key', () => {
    const path = journalPath();
    const { journal } = start(path, new ManualClock(), { '005': hex('005') });
    journal.close();
    const bytes = readFileSync(path).toString('latin1');
    expect(bytes).toContain(keyOf('005').address);
    expect(bytes.toLowerCase()).not.toContain(hex('005').toLowerCase().slice(0, 64));
    expect(bytes).not.toContain(Buffer.from(hex('005'), 'hex').subarray(0, 32).toString('latin1'));
  });

  it('migrates a journal of schema 1: no records, so every key is seen at this start', () => {
    const path = journalPath();
    Journal.open(path, new ManualClock()).close();
    const raw = new DatabaseSync(path);
    raw.exec('DROP TABLE key_observations; PRAGMA user_version = 1');
    raw.close();

    const clock = new ManualClock();
    const { journal, fresh } = start(path, clock, { '005': hex('005') });
    expect(fresh).toEqual(['005']);
    const version = new DatabaseSync(path, { readOnly: true });
    expect(
      (version.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
    ).toBe(JOURNAL_SCHEMA_VERSION);
    version.close();
    expect(JOURNAL_SCHEMA_VERSION).toBe(3); // 3: transport names are the chain's (journal.unit.test.ts)
    journal.close();
  });

  it('rewrite() puts every observation into a new journal file (one set aside)', () => {
    const path = journalPath();
    const clock = new ManualClock();
    const { journal, observations } = start(path, clock, { '005': hex('005') });
    journal.setAside('other-chain');
    expect(journal.keyObservations().size).toBe(0);
    observations.rewrite();
    expect(journal.keyObservations()).toEqual(observations.observed);
    journal.close();
  });

  it("dates a newly seen key by the Secret's last write when that is earlier than now, never later", async () => {
    const path = journalPath();
    const clock = new ManualClock();
    const t0 = clock.now();
    const journal = Journal.open(path, clock);
    const observations = new KeyObservations({ store: journal, clock });
    // A first start: the Secret was last written a minute before (the end of that second).
    const written = t0 - 60_000 + 999;
    observations.observe(keys({ '005': hex('005') }).entries(), written);
    expect(observations.observed.get('005')?.observedAt).toBe(written);
    // A bound past the manager's clock (a skewed server) is capped at now.
    await clock.advance(1_000);
    observations.observe(keys({ '005': hex('005'), '006': hex('006') }).entries(), t0 + 90_000);
    expect(observations.observed.get('006')?.observedAt).toBe(t0 + 1_000);
    // An unchanged key keeps its time whatever the bound says now.
    observations.observe(keys({ '005': hex('005'), '006': hex('006') }).entries(), t0 + 500);
    expect(observations.observed.get('005')?.observedAt).toBe(written);
    expect(journal.keyObservations().get('005')?.observedAt).toBe(written);
    journal.close();
  });
});

describe('secretWrittenBy', () => {
  const secret = (times: unknown[]): V1Secret =>
    ({
      metadata: { managedFields: times.map((time, i) => ({ manager: `m${i}`, time })) },
    }) as V1Secret;

  it('is the end of the second of the latest managedFields time, as Date (a list) or text (a watch)', () => {
    const early = Date.parse('2026-12-02T10:00:00Z');
    expect(
      secretWrittenBy(secret([new Date(early), '2026-12-02T10:00:07Z', '2026-12-02T09:59:59Z'])),
    ).toBe(early + 7_999);
    expect(secretWrittenBy(secret([new Date(early)]))).toBe(early + 999);
  });

  it("a Secret not written since the second it was created gives that second's start: its keys came with it", () => {
    const created = Date.parse('2026-12-02T10:00:07Z');
    const fresh = { ...secret([new Date(created)]) };
    fresh.metadata = { ...fresh.metadata, creationTimestamp: new Date(created) };
    expect(secretWrittenBy(fresh)).toBe(created);
    // Written in a later second: the end of that second.
    const later = secret([new Date(created), '2026-12-02T10:00:09Z']);
    later.metadata = { ...later.metadata, creationTimestamp: new Date(created) };
    expect(secretWrittenBy(later)).toBe(created + 2_999);
  });

  it('is undefined when no entry has a usable time, or there is no Secret', () => {
    expect(secretWrittenBy(undefined)).toBeUndefined();
    expect(secretWrittenBy({ metadata: {} })).toBeUndefined();
    expect(secretWrittenBy(secret([undefined, 'not a time', 42]))).toBeUndefined();
  });
});
