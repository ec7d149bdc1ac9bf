// V1's consensus as its code runs it, on node processes (`localnet-node net --fidelity v1
// --validators 5 --staked 4`), views triggered V1's way (a debug message to each validator of the
// address book, as `p1 Debug TriggerView` does). V1's leader never counts its own vote nor its
// NewRound (RainTree's `sendInternal` drops a send to self: p2p/raintree/router.go:172-179;
// consensus/hotstuff_leader.go:96-102, 147-153, 198-204), and a height needs `num > 2/3 × all
// rows` (consensus/helpers.go:119-134), every row ever staked (persistence/types/
// actor_shared_sql.go:87-94). So 4 of 4 genesis validators make blocks, each certificate signed by
// the three that did not lead the round; staking 005 by hand — a late joiner that never syncs or
// votes (consensus/state_sync/module.go:47-55) — makes 5 rows, and 3 others of 5 is not > 10/3:
// the chain halts for good. Before a trigger, V1's consensus says height 0 and bumps its round
// every timeout (consensus/module.go:116, 298-302; consensus/pacemaker/module.go:172-224).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { startNet, type LocalNet } from '../../src/localnet/net.ts';
import { generateKeys, type Block, type ValidatorKey } from '../../src/pocket/index.ts';
import {
  client,
  inEveryMempool,
  nextV1Block,
  sendDebugMessage,
  signers,
  stakeTx,
} from './support/chain.ts';

const keys = generateKeys({ count: 5, seed: 'v1-consensus' });
const key = (id: string): ValidatorKey => keys.get(id)!;
const GENESIS = ['001', '002', '003', '004'];
const ROUND_TIMEOUT_MS = 300;
let net: LocalNet;

beforeAll(async () => {
  net = await startNet({
    keys,
    validators: 5,
    staked: 4,
    fidelity: 'v1',
    roundTimeoutMs: ROUND_TIMEOUT_MS,
    startTimeoutMs: 90_000,
  });
}, 120_000);
afterAll(async () => {
  await net.stop();
});

const node = (id: string) => net.nodes.find((n) => n.id === id)!;
const rpc = (id: string) => client(node(id).rpcUrl);

interface ConsensusState {
  height: number;
  round: number;
  step: number;
}
const state = async (id: string): Promise<ConsensusState> =>
  (await fetch(`${node(id).rpcUrl}/v1/consensus/state`)).json() as Promise<ConsensusState>;

/** `p1 Debug TriggerView`: the address book's validators each get a debug message. */
async function triggerView(): Promise<void> {
  const book = await rpc('001').addressBook({ actorType: 'validator' });
  await sendDebugMessage((book.actors ?? []).map((a) => a.service_url));
}

/** Views, V1's way, until the genesis validators hold one more block (a round may split). */
const nextBlock = (): Promise<number> =>
  nextV1Block(
    GENESIS.map((id) => node(id).serviceUrl),
    GENESIS.map((id) => node(id).rpcUrl),
  );

/** The leader of (height, round): V1's round-robin over the address-sorted rows of the height. */
function leaderOf(block: Block, rows: readonly ValidatorKey[]): string {
  const sorted = rows.map((k) => k.address).sort();
  const { height, round } = block.block_header.quorum_cert;
  return sorted[(height + round) % sorted.length]!;
}

describe('V1 consensus on node processes (fidelity v1)', () => {
  it('says height 0 and bumps its round every timeout before the first trigger', async () => {
    expect((await state('001')).height).toBe(0);
    const idle = await waitFor(
      async () => {
        const each = await Promise.all(GENESIS.map(state));
        return each.every((s) => s.height === 0 && s.step === 1 && s.round >= 2)
          ? each
          : pending(JSON.stringify(each));
      },
      { timeoutMs: 10_000, what: 'every validator idle at height 0, two rounds on' },
    );
    expect(idle.map((s) => s.height)).toEqual([0, 0, 0, 0]);
  });

  it('makes blocks with 4 of 4; each certificate holds the three that did not lead its round', async () => {
    expect(await nextBlock()).toBe(1);
    expect(await nextBlock()).toBe(2);
    const rows = GENESIS.map(key);
    for (const height of [1, 2]) {
      const block = await rpc('001').block(height);
      const who = signers(block);
      expect(who.sort()).toEqual(
        rows
          .map((k) => k.address)
          .filter((a) => a !== leaderOf(block, rows))
          .sort(),
      );
    }
    // The next height starts at once and waits for its trigger, its round going up meanwhile.
    await waitFor(
      async () => {
        const s = await state('002');
        return (s.height === 3 && s.step === 1 && s.round >= 2) || pending(JSON.stringify(s));
      },
      { timeoutMs: 10_000, what: 'height 3 waiting, two rounds on' },
    );
  });

  it('halts for good once 005 is staked by hand: 3 others of 5 rows is not > 10/3', async () => {
    const stake = stakeTx(key('005'), node('005').serviceUrl);
    await rpc('001').broadcast(stake);
    await inEveryMempool(
      GENESIS.map((id) => node(id).rpcUrl),
      stake.hash,
    );
    const staked = await nextBlock();
    expect((await rpc('001').transaction(stake.hash))?.result_code).toBe(0);
    expect((await rpc('001').validatorsPage({ page: 1, perPage: 10 })).total_validators).toBe(5);
    // Each trigger starts a new round on every genesis validator. Its leader never gets NewRound
    // from 4 others (3 live besides it, 005 silent), so it never proposes; once all four are past
    // the round's propose step, that round can no longer commit. Five such rounds, and no block.
    for (let round = 0; round < 5; round++) {
      const before = await Promise.all(GENESIS.map(state));
      await triggerView();
      await waitFor(
        async () => {
          const now = await Promise.all(GENESIS.map(state));
          return (
            now.every((s, i) => s.round > before[i]!.round && s.step >= 3) ||
            pending(JSON.stringify(now))
          );
        },
        { timeoutMs: 10_000, what: `round ${round + 1} after the stake past its proposal` },
      );
      for (const id of GENESIS) expect(await rpc(id).height(), id).toBe(staked);
    }
    expect(await rpc('005').height()).toBe(0); // a late joiner never syncs
  });
});
