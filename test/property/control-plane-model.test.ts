// The model-based test of the control plane, short: one fixed seed, a handful of random commands
// (scales to 0 and below the minimum set, overlapping scales, kubectl scale behind the manager's
// back, pod deletions, duplicate and bad keys, keys rotated, moved and removed, manager kills, the
// chain RPC node restarted from an old snapshot) on one devnet, then every invariant read on the
// chain. `npm run soak -- --model` runs the long one (test/support/control-plane-model.ts).
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { useDevnet } from '../integration/support.ts';
import {
  commandsOf,
  finalInvariants,
  type Model,
  type Real,
} from '../support/control-plane-model.ts';
import { spareKeysOf } from '../support/key-moves.ts';

/**
 * A seed whose commands meet several kinds: a pod deleted, a staked validator's key rotated (the
 * manager unstakes the old address, restarts the pod, stakes the new one: key-moves.ts), scale 5,
 * the chain RPC node restarted from an old snapshot; the end restores every key (another rotation).
 */
const SEED = 13;
const GENESIS = ['001', '002', '003', '004'];
const devnet = useDevnet('model', { pacemaker: 'auto', blockIntervalMs: 400 });

it(
  'keeps the chain live, unforked and staked once per join under random intents and faults',
  { timeout: 120_000 },
  async () => {
    const { h } = devnet;
    const lines: string[] = [];
    await h.waitForHeight(3);
    const real: Real = {
      h,
      snapshot: await h.snapshotChainRpcNode(),
      keys: new Map([...(await h.privateKeys())].filter(([id]) => Number(id) <= 6)),
      spareKeys: spareKeysOf(await h.privateKeys(), 6),
      spares: [...spareKeysOf(await h.privateKeys(), 6).keys()],
      minimum: 3,
      checkedTo: 0,
      log: (line) => lines.push(line),
      until: Date.now() + 30_000,
    };
    await fc.assert(
      fc.asyncProperty(commandsOf(6, 5), async (commands) => {
        await fc.asyncModelRun(
          () => ({ model: { replicas: 4, broken: new Set() } satisfies Model, real }),
          commands,
        );
      }),
      { seed: SEED, numRuns: 1, endOnFailure: true },
    );
    const violations = await finalInvariants(real, 5, GENESIS);
    process.stdout.write(`${lines.join('\n')}\n`);
    expect(violations, lines.join('\n')).toEqual([]);
  },
);
