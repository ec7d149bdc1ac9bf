// The pacemaker and the debug actions on two in-process validators: a TriggerView while a round
// is stuck moves to the next round, a late node syncs and unblocks the chain, automatic mode
// commits on its own, and toggle/reset reach the peer.
import type { Server } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/pocket/index.ts';
import { buildGenesis, type Genesis } from '../../src/localnet/genesis.ts';
import { startNode, type RunningNode, type StartNodeOptions } from '../../src/localnet/server.ts';
import { client, inEveryMempool, stakeTx, triggerView } from './support/chain.ts';
import { ownedPort } from '../support/owned-ports.ts';
import { waitFor } from '../../src/harness/wait.ts';

const keys = generateKeys({ count: 3, seed: 'pacemaker' });
const running: RunningNode[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((node) => node.stop()));
});

/** A genesis of two validators and their p2p sockets, listening already (each node takes its own). */
async function twoValidators(): Promise<{ genesis: Genesis; ports: [Server, Server] }> {
  const owned = [await ownedPort(), await ownedPort()];
  const genesis = buildGenesis({
    keys,
    validators: 2,
    serviceUrl: (slot) => `127.0.0.1:${owned[slot.ordinal]?.port ?? 0}`,
  });
  return { genesis, ports: [owned[0]!.server, owned[1]!.server] };
}

async function node(
  genesis: Genesis,
  options: Partial<StartNodeOptions> & Pick<StartNodeOptions, 'p2pPort'>,
): Promise<RunningNode> {
  const started = await startNode({
    debugRoutes: true,
    genesis,
    host: '127.0.0.1',
    rpcPort: 0,
    roundTimeoutMs: 200,
    logger: pino({ level: 'silent' }),
    ...options,
  });
  running.push(started);
  return started;
}

const post = async (url: string): Promise<unknown> => (await fetch(url, { method: 'POST' })).json();

describe('pacemaker', () => {
  it('moves a stuck round to the next on TriggerView; a late validator syncs and unblocks it', async () => {
    const { genesis, ports } = await twoValidators();
    const a = await node(genesis, { key: keys.get('001'), p2pPort: ports[0] });
    const stuck = await triggerView(a.rpcUrl, 500);
    expect(stuck).toEqual({ status: 504, height: 0 });
    const before = (await client(a.rpcUrl).consensusState()).round;
    await post(`${a.rpcUrl}/v1/debug/trigger_view`);
    expect((await client(a.rpcUrl).consensusState()).round).toBeGreaterThan(before);

    const b = await node(genesis, { key: keys.get('002'), p2pPort: ports[1] });
    await waitFor(async () => (await client(b.rpcUrl).height()) === 1, {
      timeoutMs: 10_000,
      what: 'the stuck height to commit once the second validator is up',
    });
    expect(await client(a.rpcUrl).height()).toBe(1);
    const block = await client(b.rpcUrl).block(1);
    expect(block.block_header.quorum_cert.threshold_sig.signatures).toHaveLength(2);
  });

  it('a trigger for a height committed already commits nothing (a trigger sent again after a slow one)', async () => {
    const { genesis, ports } = await twoValidators();
    const a = await node(genesis, { key: keys.get('001'), p2pPort: ports[0] });
    await node(genesis, { key: keys.get('002'), p2pPort: ports[1] });
    expect((await triggerView(a.rpcUrl)).height).toBe(1);
    const again = await fetch(`${a.rpcUrl}/v1/debug/trigger_view?wait=true&height=1`, {
      method: 'POST',
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ height: 1 });
    // Anything but a whole number is refused, not read as "no height" (which would trigger).
    for (const bad of ['-1', '2abc', '1.5', '0x2', '1e3', '', '%20', '1'.repeat(30)]) {
      const refused = await fetch(`${a.rpcUrl}/v1/debug/trigger_view?height=${bad}`, {
        method: 'POST',
      });
      expect(refused.status, bad).toBe(400);
      expect(await refused.text()).toMatch(/^height must be a whole number/);
    }
    // Height 2 is not started (step 1 = idle, node.ts): before, this trigger committed block 2.
    expect(await client(a.rpcUrl).consensusState()).toMatchObject({ height: 2, round: 0, step: 1 });
    const next = await fetch(`${a.rpcUrl}/v1/debug/trigger_view?wait=true&height=2`, {
      method: 'POST',
    });
    expect(await next.json()).toEqual({ height: 2 });
  });

  it('a validator polls its peers less while the chain is idle; a full node or a validator out of the set does not, and a trigger brings the fast poll back', async () => {
    const { genesis, ports } = await twoValidators();
    const a = await node(genesis, { key: keys.get('001'), p2pPort: ports[0] });
    await node(genesis, { key: keys.get('002'), p2pPort: ports[1] });
    const full = await node(genesis, { p2pPort: 0 });
    // A validator not in the set (003 is not staked at genesis) gets no consensus messages either.
    const joining = await node(genesis, { key: keys.get('003'), p2pPort: 0 });
    const pollMs = async (url: string): Promise<number> =>
      ((await (await fetch(`${url}/v1/debug/state`)).json()) as { syncPollMs: number }).syncPollMs;
    await waitFor(async () => (await pollMs(a.rpcUrl)) === 4_000, {
      timeoutMs: 10_000,
      what: 'the idle validator to poll every 4 s',
    });
    // The full node learns of blocks only by polling (validators send consensus messages to
    // validators): before, it slowed down too, and saw a block up to 4 s late.
    expect(await pollMs(full.rpcUrl)).toBe(500);
    expect(await pollMs(joining.rpcUrl)).toBe(500);
    expect((await triggerView(a.rpcUrl)).height).toBe(1);
    expect(await pollMs(a.rpcUrl)).toBeLessThan(4_000);
    await waitFor(async () => (await client(full.rpcUrl).height()) === 1, {
      timeoutMs: 5_000,
      what: 'the full node to see block 1',
    });
  });

  it('commits the next block of the chain when triggered through a full node that just started', async () => {
    const { genesis, ports } = await twoValidators();
    const a = await node(genesis, { key: keys.get('001'), p2pPort: ports[0] });
    await node(genesis, { key: keys.get('002'), p2pPort: ports[1] });
    for (const height of [1, 2, 3]) expect((await triggerView(a.rpcUrl)).height).toBe(height);
    const full = await node(genesis, { p2pPort: 0 });
    expect(await triggerView(full.rpcUrl)).toEqual({ status: 200, height: 4 });
    await waitFor(async () => (await client(a.rpcUrl).height()) === 4, {
      timeoutMs: 5_000,
      what: 'the validators to commit height 4',
    });
  });

  it('commits on its own in auto mode, and a toggle on one node reaches the other', async () => {
    const { genesis, ports } = await twoValidators();
    const auto = { pacemaker: 'auto' as const, blockIntervalMs: 50 };
    const a = await node(genesis, { ...auto, key: keys.get('001'), p2pPort: ports[0] });
    const b = await node(genesis, { ...auto, key: keys.get('002'), p2pPort: ports[1] });
    await waitFor(async () => (await client(b.rpcUrl).height()) >= 3, {
      timeoutMs: 10_000,
      what: 'three blocks without any trigger',
    });
    expect(await post(`${b.rpcUrl}/v1/debug/toggle_pacemaker_mode`)).toEqual({ mode: 'manual' });
    await waitFor(() => a.node.pacemakerMode === 'manual', {
      timeoutMs: 5_000,
      what: 'the toggle to reach the peer',
    });
    // A height started before the toggle still commits; then both wait for a trigger.
    const idle = async (n: RunningNode) => (await client(n.rpcUrl).consensusState()).step === 1;
    await waitFor(
      async () =>
        (await idle(a)) &&
        (await idle(b)) &&
        (await client(a.rpcUrl).height()) === (await client(b.rpcUrl).height()),
      { timeoutMs: 5_000, what: 'both nodes idle at the same height' },
    );
    const settled = await client(a.rpcUrl).height();
    expect((await triggerView(a.rpcUrl)).height).toBe(settled + 1);
  });

  it('resets both nodes to genesis from one, dropping later stakes and the mempool', async () => {
    const { genesis, ports } = await twoValidators();
    const a = await node(genesis, { key: keys.get('001'), p2pPort: ports[0] });
    const b = await node(genesis, { key: keys.get('002'), p2pPort: ports[1] });
    const third = keys.get('003')!;
    const stake = stakeTx(third, '127.0.0.1:1');
    await client(a.rpcUrl).broadcast(stake);
    await inEveryMempool([a.rpcUrl, b.rpcUrl], stake.hash);
    await triggerView(a.rpcUrl);
    expect(await client(b.rpcUrl).validator(third.address)).toBeDefined();
    await client(a.rpcUrl).broadcast(stakeTx(third, '127.0.0.1:2'));

    expect(await post(`${a.rpcUrl}/v1/debug/reset_to_genesis`)).toEqual({ height: 0 });
    await waitFor(async () => (await client(b.rpcUrl).height()) === 0, {
      timeoutMs: 5_000,
      what: 'the peer to reset too',
    });
    expect(await client(a.rpcUrl).validator(third.address)).toBeUndefined();
    expect(await client(a.rpcUrl).unconfirmedTransactions()).toEqual([]);
    expect((await triggerView(b.rpcUrl)).height).toBe(1);
    expect((await client(a.rpcUrl).block(1)).transactions).toEqual([]);
  });
});
