// What each pod's node says it signs with (keys/node-keys.ts), and the keys the manager holds for a
// rotation (keys/key-store.ts) and remembers by address (keys/key-observations.ts): read once per
// run of a node, again after it restarts, retried with a growing delay when the node does not
// answer; an old key kept in memory only while the Secret no longer has it; the former keys'
// addresses kept in the journal, never a key.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { Journal } from '../../src/manager/journal/journal.ts';
import { KeyObservations } from '../../src/manager/keys/key-observations.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { NodeKeys } from '../../src/manager/keys/node-keys.ts';
import type { DesiredState } from '../../src/manager/model.ts';
import { keyOf, wanted } from '../support/plan-fixture.ts';
import { flush, ManualClock } from '../support/manual-clock.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const desired = (...pods: Parameters<typeof wanted>[]): DesiredState => ({
  validators: new Map(pods.map((args) => [args[0], wanted(...args)])),
  unresolvedWanted: [],
  problems: [],
});

describe('NodeKeys', () => {
  it('reads each running node once, again after a restart, and retries one that does not answer', async () => {
    const clock = new ManualClock();
    const asked: string[] = [];
    let down = true;
    const changed: string[] = [];
    const keys = new NodeKeys({
      read: (url) => {
        asked.push(url);
        if (url === 'v006:42069' && down) return Promise.reject(new Error('ECONNREFUSED'));
        return Promise.resolve(keyOf(url === 'v005:42069' ? '005' : '006').address);
      },
      clock,
      logger: pino({ level: 'silent' }),
      onRead: (id) => changed.push(id),
    });
    const first = desired(['005', { startedAt: 1_000 }], ['006', { startedAt: 1_000 }]);
    keys.observe(first);
    await flush();
    expect(keys.known.get('uid-005')).toEqual({ address: keyOf('005').address, startedAt: 1_000 });
    expect(keys.known.has('uid-006')).toBe(false);
    // The same pods again: nothing is asked twice.
    keys.observe(first);
    await flush();
    expect(asked).toEqual(['v005:42069', 'v006:42069']);
    // 006's node answers its retry after a second.
    down = false;
    await clock.advance(1_000);
    await flush();
    expect(keys.known.get('uid-006')?.address).toBe(keyOf('006').address);
    expect(changed).toEqual(['005', '006']);
    // 005's container restarted: its new run is asked again.
    keys.observe(desired(['005', { startedAt: 9_000 }], ['006', { startedAt: 1_000 }]));
    await flush();
    expect(asked.filter((u) => u === 'v005:42069')).toHaveLength(2);
    // A pod gone is forgotten; a pod not Ready is not asked.
    keys.observe(desired(['006', { startedAt: 1_000, ready: false }]));
    expect(keys.known.has('uid-005')).toBe(false);
    keys.stop();
  });
});

describe('the keys the manager holds and remembers', () => {
  const secret = (values: Record<string, string>) => ({
    metadata: { resourceVersion: '1' },
    data: Object.fromEntries(
      Object.entries(values).map(([id, of]) => [
        id,
        Buffer.from(keyOf(of).exportPrivateKeyHex()).toString('base64'),
      ]),
    ),
  });

  it('an old key stays in memory while the Secret does not have it, and is forgotten when it comes back', () => {
    const store = new KeyStore(pocketIds, pocketKeys);
    store.update(keySetOfSecret(secret({ '005': '005', '006': '006' })));
    expect(store.heldFor(keyOf('005').address)).toBeUndefined();
    store.update(keySetOfSecret(secret({ '005': '015', '006': '006' })));
    expect(store.heldFor(keyOf('005').address)).toBe('005');
    expect(store.signingKey(keyOf('005').address)?.address).toBe(keyOf('005').address);
    // Moved to another id: the Secret has it again, nothing is held.
    store.update(keySetOfSecret(secret({ '005': '015', '006': '005' })));
    expect(store.heldFor(keyOf('005').address)).toBeUndefined();
    expect(store.heldFor(keyOf('006').address)).toBe('006');
    expect(store.signingKey(keyOf('005').address)?.address).toBe(keyOf('005').address);
    store.release(keyOf('006').address);
    expect(store.signingKey(keyOf('006').address)).toBeUndefined();
  });

  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('the former keys are remembered by address across a restart, and no key reaches the journal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cm-former-'));
    dirs.push(dir);
    const path = join(dir, 'journal.sqlite');
    const clock = new ManualClock(1_000_000);
    const entries = (of: string) => {
      const store = new KeyStore(pocketIds, pocketKeys);
      store.update(keySetOfSecret(secret({ '005': of })));
      return [...store.entries()];
    };
    let journal = Journal.open(path, clock);
    let observed = new KeyObservations({ store: journal, clock });
    observed.observe(entries('005'));
    await clock.advance(1_000_000);
    observed.observe(entries('015'));
    expect(observed.former.get('005')).toEqual([
      { address: keyOf('005').address, observedAt: 1_000_000, replacedAt: 2_000_000 },
    ]);
    journal.close();
    // Restarted; the key changed again while it was down.
    journal = Journal.open(path, clock);
    observed = new KeyObservations({ store: journal, clock });
    await clock.advance(1_000_000);
    observed.observe(entries('016'));
    expect(observed.former.get('005')?.map((f) => f.address)).toEqual([
      keyOf('005').address,
      keyOf('015').address,
    ]);
    journal.close();
    const bytes =
      readFileSync(path).toString('latin1') +
      readFileSync(`${path}-wal`, { flag: 'a+' }).toString('latin1');
    for (const id of ['005', '015', '016'])
      expect(bytes.includes(keyOf(id).exportPrivateKeyHex())).toBe(false);
  });
});
