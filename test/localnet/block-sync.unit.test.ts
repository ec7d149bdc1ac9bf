// Block sync's poll over a fake peer client and vitest's fake timers: every `intervalMs` while
// blocks come, slowing down (doubling up to `idleIntervalMs`) while polls find nobody ahead, and
// back to the fast period as soon as a consensus message arrives.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BlockSync } from '../../src/localnet/block-sync.ts';
import type { PeerClient } from '../../src/localnet/p2p-client.ts';

/** A node at `state.height` with one peer at `state.peerHeight`; counts the status polls. */
function syncOver(
  state: { height: number; peerHeight: number; polls: number[] },
  mayIdle?: () => boolean,
) {
  const client = {
    get: (_peer: string, path: string) => {
      if (path === '/p2p/v1/status') {
        state.polls.push(Date.now());
        return Promise.resolve({ nodeId: 'peer', genesisHash: 'g', height: state.peerHeight });
      }
      // The blocks the peer has: this fake hands out none, the node "catches up" in apply below.
      state.height = state.peerHeight;
      return Promise.resolve({ blocks: [] });
    },
  } as unknown as PeerClient;
  return new BlockSync({
    client,
    nodeId: 'self',
    genesisHash: () => 'g',
    peers: () => ['peer:1'],
    height: () => state.height,
    apply: () => undefined,
    markSelf: () => undefined,
    warn: () => undefined,
    intervalMs: 500,
    idleIntervalMs: 4_000,
    ...(mayIdle === undefined ? {} : { mayIdle }),
  });
}

/** A node at height 10 whose one peer is there too, polling from now on. */
function startedIdle(mayIdle?: () => boolean) {
  const state = { height: 10, peerHeight: 10, polls: [] as number[] };
  const sync = syncOver(state, mayIdle);
  sync.start();
  return { state, sync };
}

/** The gaps between consecutive polls, in ms. */
const gaps = (polls: number[]): number[] => polls.slice(1).map((t, i) => t - (polls[i] ?? 0));

describe('BlockSync polling', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('slows down while nobody is ahead: 500 ms, then 1, 2 and 4 s, and stays at 4 s', async () => {
    const { state, sync } = startedIdle();
    await vi.advanceTimersByTimeAsync(20_000);
    sync.stop();
    expect(gaps(state.polls).slice(0, 7)).toEqual([500, 1_000, 2_000, 4_000, 4_000, 4_000, 4_000]);
  });

  it('polls at the fast period again once a consensus message arrives, and while blocks come', async () => {
    const { state, sync } = startedIdle();
    await vi.advanceTimersByTimeAsync(7_600); // polls at 0, 0.5, 1.5, 3.5, 7.5 s: next due at 11.5
    state.polls.length = 0;
    // A message of the next height arrives: the peer has moved on, and keeps moving.
    sync.activity();
    for (let i = 0; i < 5; i++) {
      state.peerHeight++;
      await vi.advanceTimersByTimeAsync(500);
    }
    sync.stop();
    expect(state.polls[0]).toBe(1_000_000 + 7_600 + 500);
    expect(gaps(state.polls)).toEqual([500, 500, 500, 500]);
    expect(state.height).toBe(15);
  });

  it('a node that may not idle (not in the active set: no consensus messages) keeps 500 ms', async () => {
    let member = false;
    const { state, sync } = startedIdle(() => member);
    await vi.advanceTimersByTimeAsync(5_100);
    expect(gaps(state.polls)).toEqual(Array.from({ length: 10 }, () => 500));
    expect(sync.pollMs).toBe(500);
    // Once in the set it slows down like any member.
    member = true;
    await vi.advanceTimersByTimeAsync(4_000);
    expect(sync.pollMs).toBe(4_000);
    sync.stop();
  });

  it('polls no more once stopped', async () => {
    const { state, sync } = startedIdle();
    await vi.advanceTimersByTimeAsync(600);
    sync.stop();
    sync.activity();
    const seen = state.polls.length;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(state.polls).toHaveLength(seen);
  });
});
