// The soak's duplicate-key race (test/soak/soak.ts, fault "duplicate key"), on a devnet with real
// node processes and the manual pacemaker: 006 holds 005's key in the Secret while the
// StatefulSet scales 4 → 6, so pod validator-5 starts and its node loads 005's key; then the key
// is given back. The code before staked 006 with its own key once it was back, and no node ever
// signed as 006 (the soak: "007: wanted but staked (Ready true)", scale waits timed out). Now the
// manager sees that the pod started before 006's key, deletes it once, its StatefulSet starts it
// again with 006's key, and 006 ends active under its own address, staked once (docs/adr/0022).
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/index.ts';
import { parsePrivateKey } from '../../src/pocket/index.ts';
import { useDevnet } from './support.ts';

// A deleted validator pod's node keeps voting for its drain; 2 s is enough here.
const devnet = useDevnet('stale-key', { nodeShutdownDrainMs: 2_000 });
const GENESIS = ['001', '002', '003', '004'];

/** The address the node of validator `id`'s pod signs with (the stand-in's debug state). */
async function nodeAddress(id: string): Promise<string | null> {
  const response = await fetch(`${await devnet.h.nodeRpcUrl(id)}/v1/debug/state`);
  return ((await response.json()) as { address: string | null }).address;
}

async function pod(id: string): Promise<{ uid: string; startedAt: number } | undefined> {
  const found = await devnet.h.core
    .readNamespacedPod({ name: devnet.h.podOf(id), namespace: devnet.h.info.namespace })
    .catch(() => undefined);
  const started = found?.status?.containerStatuses?.[0]?.state?.running?.startedAt;
  if (found?.metadata?.uid === undefined || started === undefined) return undefined;
  return { uid: found.metadata.uid, startedAt: new Date(started).getTime() };
}

const metric = (series: string): Promise<number | undefined> => devnet.h.metric(series);

/**
 * Gives `id` the key of `owner` in the Secret, and waits until the manager counts both as key
 * problems (KEY_DUPLICATE; neither is wanted yet, so neither has a status row to say it).
 */
async function shareKey(id: string, owner: string, keys: Map<string, string>): Promise<void> {
  await devnet.h.patchKeys({ [id]: keys.get(owner) ?? '' });
  await waitFor(
    async () =>
      (await metric('cluster_manager_key_problems')) === 2 || pending('no key problem yet'),
    {
      what: `the manager to see ${owner} and ${id} share a key`,
      timeoutMs: 30_000,
      intervalMs: 100,
    },
  );
}

describe('a validator pod that started while its id held another key', { timeout: 180_000 }, () => {
  it('is restarted once, and its validator ends active under its own address, staked once', async () => {
    const { h } = devnet;
    // Read once, before the Secret changes: the harness keeps them.
    const addresses = await h.addresses();
    const keys = await h.privateKeys();
    for (const id of GENESIS)
      await h.waitForValidator(id, (row) => row.phase === 'active', 'active', { drive: true });
    const from = await h.height();
    // 006 := 005's key, and the manager has seen 006's key change.
    await shareKey('006', '005', keys);
    // Scaled up inside that window: pod validator-5 starts, and its node loads 005's key.
    await h.kubectlScale(6);
    await h.waitForValidator('006', (row) => row.ready, 'Ready', { timeoutMs: 30_000 });
    const stale = await pod('006');
    expect(stale).toBeDefined();
    expect(await nodeAddress('006')).toBe(addresses.get('005'));

    // The key given back: 006's node still holds 005's key.
    const restoredAt = Date.now();
    await h.patchKeys({ '006': keys.get('006') ?? '' });
    expect(stale?.startedAt).toBeLessThan(restoredAt);

    // On the chain: 005 and 006 sign blocks, each under its own address. (The code before staked
    // 006 while its node still signed as 005: this timed out with "006 is staked".)
    const at = await h.height();
    await h.expectActive('006', { since: at + 1, timeoutMs: 60_000 });
    await h.expectActive('005', { since: at + 1 });

    // Because the manager deleted that pod, and its StatefulSet started it again with 006's key.
    const replaced = await pod('006');
    expect(replaced?.uid).not.toBe(stale?.uid);
    expect(replaced?.startedAt).toBeGreaterThanOrEqual(Math.floor(restoredAt / 1000) * 1000);
    expect(await nodeAddress('006')).toBe(addresses.get('006'));

    // Nothing doubled: one stake each, nothing unstaked, the set is what the cluster wants.
    expect(await h.stakedValidators()).toEqual([...GENESIS, '005', '006']);
    const txs = (await h.committedTransactions()).filter((t) => t.height > from);
    expect(txs.map((t) => `${t.id} ${t.type}`).sort()).toEqual([
      '005 MessageStake',
      '006 MessageStake',
    ]);
    const row = await h.validator('006');
    expect(row).toMatchObject({ phase: 'active', address: addresses.get('006') });
    expect((await h.actions()).filter((a) => a.validatorId === '006')).toEqual([
      expect.objectContaining({ kind: 'stake', state: 'committed', attempts: 1 }),
    ]);

    // Once: one delete, a log line, an Event on the pod, the metric.
    expect(await metric('cluster_manager_stale_key_pods_total{action="restarted"}')).toBe(1);
    const events = await h.core.listNamespacedEvent({ namespace: h.info.namespace });
    const restarts = events.items.filter((e) => e.reason === 'StaleKeyRestart');
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'Pod', name: h.podOf('006'), uid: stale?.uid },
    });
    // The node said which key it holds (005's): no guess from the times (docs/adr/0028).
    expect(restarts[0]?.message).toBe(
      `validator 006: the node of pod validator-5 signs with ${addresses.get('005') ?? '?'}, not with its current key (the node says so); deleted it (uid ${stale?.uid ?? '?'}) for its StatefulSet to start it again with the current key`,
    );
    const log = await readFile(h.info.managerLog ?? '', 'utf8');
    expect(
      log.split('\n').filter((l) => l.includes('for its StatefulSet to start it again')),
    ).toHaveLength(1);
    await h.expectChainProgress(2, 20_000);
  });

  it('a pod started while the manager was away, its key unchanged, is not restarted (a fresh journal)', async () => {
    // The manager's first look at the keys (no record: a fresh journal, as when an emptyDir goes
    // with its pod) dates each key by the Secret's last write, not by its own start: a key seen
    // "now" made every unstaked pod started before the manager look older than its key, and a
    // 4 → 999 scale right after a start restarted 261 pods (docs/adr/0022).
    const { h } = devnet;
    await h.killManager('SIGTERM');
    for (const suffix of ['', '-wal', '-shm'])
      await rm(join(h.info.dir, `journal.sqlite${suffix}`), { force: true });
    await h.kubectlScale(7);
    const started = await waitFor(async () => (await pod('007')) ?? pending('no running pod'), {
      what: 'pod validator-6 to run',
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    const restartedAt = Date.now();
    expect(started.startedAt).toBeLessThan(restartedAt);
    await h.restartManager();

    const at = await h.height();
    await h.expectActive('007', { since: at + 1, timeoutMs: 60_000 });
    expect((await pod('007'))?.uid).toBe(started.uid);
    expect([undefined, 0]).toContain(
      await metric('cluster_manager_stale_key_pods_total{action="restarted"}'),
    );
    const events = await h.core.listNamespacedEvent({ namespace: h.info.namespace });
    expect(
      events.items.filter(
        (e) => e.reason === 'StaleKeyRestart' && e.involvedObject.name === h.podOf('007'),
      ),
    ).toEqual([]);
    expect(await h.stakedValidators()).toEqual([...GENESIS, '005', '006', '007']);
  });

  it('a drained validator scaled back while its key flapped: its new pod is restarted, not staked as it is', async () => {
    // The soak's halt (seed 450279): 008 drained (its row unstaking), then scaled back while 008
    // held 003's key, so its new pod's node loaded 003's key. The rule left a validator whose own
    // address was leaving unjudged, so the stake that reactivated 008 went out once the key was
    // back: a member no node signed for, and the chain halted. And the next soak (seed 476482):
    // another drained validator, leaving with no pod, held that restart for its whole unstaking
    // ("006: wanted but pending"). Here 006 and 007 are drained, and only 006 comes back, while
    // it holds 005's key (docs/adr/0022).
    const { h } = devnet;
    const addresses = await h.addresses();
    const keys = await h.privateKeys();
    expect((await h.scaleTo(5, { wait: 'active', timeoutSeconds: 60 })).body).toMatchObject({
      done: true,
      drained: ['006', '007'],
    });
    const from = await h.height();
    await shareKey('006', '005', keys);
    const restartsBefore =
      (await metric('cluster_manager_stale_key_pods_total{action="restarted"}')) ?? 0;
    await h.kubectlScale(6);
    await h.waitForValidator('006', (row) => row.ready, 'Ready', { timeoutMs: 30_000 });
    const stale = await pod('006');
    expect(await nodeAddress('006')).toBe(addresses.get('005'));
    await h.patchKeys({ '006': keys.get('006') ?? '' });

    const at = await h.height();
    await h.expectActive('006', { since: at + 1, timeoutMs: 60_000 });
    await h.expectActive('005', { since: at + 1 });
    expect((await pod('006'))?.uid).not.toBe(stale?.uid);
    expect(await nodeAddress('006')).toBe(addresses.get('006'));
    expect(await metric('cluster_manager_stale_key_pods_total{action="restarted"}')).toBe(
      restartsBefore + 1,
    );
    // One stake brought it back; nothing else moved.
    const txs = (await h.committedTransactions()).filter((t) => t.height > from);
    expect(txs.map((t) => `${t.id} ${t.type}`)).toEqual(['006 MessageStake']);
    expect(await h.stakedValidators()).toEqual([...GENESIS, '005', '006']);
    await h.expectChainProgress(2, 20_000);
    // Seven again for the next case.
    expect((await h.scaleTo(7, { wait: 'active', timeoutSeconds: 60 })).body).toMatchObject({
      done: true,
    });
  });

  it('keys of three staked voters rotated in the Secret: each old address is unstaked before its pod restarts, the chain keeps committing', async () => {
    // Three of the seven members given other (funded) keys: their pods' nodes still vote with the
    // old ones. Deleting them first (as the first version of the stale-key rule did) takes three of
    // seven voters away and the chain halts; the second version only reported them and left the
    // old rows staked for good. Now each is a planned rotation (docs/adr/0029): the old address is
    // unstaked with the old key the manager holds in memory, then the pod restarts on the new key,
    // then the new address is staked — paced by the minimum set and pacing, exactly once each.
    const { h } = devnet;
    const rotated = ['001', '002', '003'];
    const keys = await h.privateKeys();
    const old = new Map(rotated.map((id) => [id, parsePrivateKey(keys.get(id) ?? '').address]));
    const spares = ['020', '021', '022'];
    const fresh = new Map(
      rotated.map((id, i) => [id, parsePrivateKey(keys.get(spares[i] ?? '') ?? '').address]),
    );
    const from = await h.height();
    await h.patchKeys({
      ...Object.fromEntries(rotated.map((id, i) => [id, keys.get(spares[i] ?? '') ?? ''])),
      ...Object.fromEntries(spares.map((id) => [id, null])),
    });
    for (const id of rotated)
      await h.waitForValidator(
        id,
        (row) => row.phase === 'active' && row.address === fresh.get(id),
        'active under its new key',
        { timeoutMs: 120_000, drive: true },
      );
    await h.expectChainProgress(3, 30_000);
    // On the chain, per address: each old one unstaked once, each new one staked once, in order.
    const txs: string[] = [];
    for (const block of await h.ledger.blocks(from + 1, await h.height()))
      for (const tx of block.transactions ?? []) txs.push(`${tx.signer_addr} ${tx.message_type}`);
    for (const id of rotated) {
      const mine = txs.filter(
        (t) => t.startsWith(old.get(id) ?? '-') || t.startsWith(fresh.get(id) ?? '-'),
      );
      expect(mine, id).toEqual([`${old.get(id)} MessageUnstake`, `${fresh.get(id)} MessageStake`]);
    }
    expect(txs).toHaveLength(6);
  });
});
