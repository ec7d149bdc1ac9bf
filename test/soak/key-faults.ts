// The soak's operator moves on the keys of staked validators (issue 30): a key rotated and back, a
// key moved to another staked id and back, a key removed and put back. Each fault waits for the
// manager's planned rotation to finish (the old address out, the new one staked) before it undoes
// its change, so that the step's convergence and the soak's per-id tallies stay exact; it adds the
// stakes and unstakes the rotations make to the tallies (a spare key is counted under its own id).
// Kept apart from soak.ts's other faults so that each file grows on its own.
import { pending, waitFor, type Harness } from '../../src/harness/index.ts';
import { parsePrivateKey } from '../../src/pocket/index.ts';

/** What a key fault needs of the soak: where it may record what the run should see on chain. */
export interface KeyFaultContext {
  /** The fault makes `id` join (`stakes`) and leave (`unstakes`) this many more times. */
  adjust(id: string, stakes: number, unstakes: number): void;
  /** Picks one of `items` (the soak's seeded random). */
  pick<T>(items: readonly T[]): T;
}

type KeyFault = (h: Harness, target: number, context: KeyFaultContext) => Promise<void>;

/** Every rotation settles within this (unstake, restart, stake, each a few blocks). */
const ROTATION_MS = 120_000;
/** Ids of the Secret handed out as spare keys so far (each at most once per run). */
const used = new Set<string>();

const ids = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));

async function staked(h: Harness, address: string): Promise<boolean> {
  const row = await h.chain.validator(address).catch(() => undefined);
  return row !== undefined && row.unstaking_height < 0;
}

/** Waits until every address of `on` is staked and every one of `off` is not. */
async function settle(h: Harness, on: string[], off: string[], what: string): Promise<void> {
  await waitFor(
    async () => {
      for (const a of on) if (!(await staked(h, a))) return pending(`${a} not staked yet`);
      for (const a of off) if (await staked(h, a)) return pending(`${a} still staked`);
      return true;
    },
    { what, timeoutMs: ROTATION_MS, intervalMs: 250 },
  );
}

/** A spare id (beyond the soak's) whose funded key no id holds. */
async function spare(h: Harness, max: number): Promise<{ id: string; hex: string } | undefined> {
  const keys = await h.privateKeys();
  for (const [id, hex] of keys)
    if (Number(id) > max && !used.has(id)) {
      used.add(id);
      return { id, hex };
    }
  return undefined;
}

const address = (hex: string): string => parsePrivateKey(hex).address;

/**
 * Runs a fault's waits; if one times out (or anything throws), the Secret is put back as it was
 * before the fault (`before`) and only then the error goes on: the step is reported, and the
 * steps after it start from a cluster whose keys are the run's own (seed 245363 step 9's aborted
 * move stayed in place and every later step inherited it).
 */
async function undoing(
  h: Harness,
  before: Record<string, string>,
  run: () => Promise<void>,
): Promise<void> {
  try {
    await run();
  } catch (error: unknown) {
    await h.patchKeys(before).catch(() => undefined);
    throw error;
  }
}

/** The key faults, for a soak whose ids go up to `max`. */
export function keyFaults(max: number): Record<string, KeyFault> {
  return {
    'key rotated and back': async (h, target, context) => {
      const id = context.pick(ids(Math.min(target, max)));
      const keys = await h.privateKeys();
      const own = keys.get(id);
      const other = await spare(h, max);
      if (own === undefined || other === undefined) return;
      await settle(h, [address(own)], [], `${id} staked before its rotation`);
      await undoing(h, { [id]: own, [other.id]: other.hex }, async () => {
        await h.patchKeys({ [id]: other.hex, [other.id]: null });
        await settle(h, [address(other.hex)], [address(own)], `${id} rotated to ${other.id}'s key`);
        await h.patchKeys({ [id]: own });
        await settle(h, [address(own)], [address(other.hex)], `${id} rotated back`);
      });
      context.adjust(id, 1, 1);
      context.adjust(other.id, 1, 1);
    },
    'key moved and back': async (h, target, context) => {
      const candidates = ids(Math.min(target, max));
      if (candidates.length < 2) return;
      const a = context.pick(candidates);
      const b = context.pick(candidates.filter((id) => id !== a));
      const keys = await h.privateKeys();
      const [ka, kb] = [keys.get(a), keys.get(b)];
      const other = await spare(h, max);
      if (ka === undefined || kb === undefined || other === undefined) return;
      await settle(h, [address(ka), address(kb)], [], `${a} and ${b} staked before the move`);
      // b takes a's key, a takes a spare; b's own key goes out.
      await undoing(h, { [a]: ka, [b]: kb, [other.id]: other.hex }, async () => {
        await h.patchKeys({ [b]: ka, [a]: other.hex, [other.id]: null });
        await settle(
          h,
          [address(ka), address(other.hex)],
          [address(kb)],
          `${a}'s key moved to ${b}`,
        );
        await h.patchKeys({ [a]: ka, [b]: kb });
        await settle(h, [address(ka), address(kb)], [address(other.hex)], `the move undone`);
      });
      // a's address: unstaked, staked by b, unstaked, staked by a again; b's and the spare's once.
      context.adjust(a, 2, 2);
      context.adjust(b, 1, 1);
      context.adjust(other.id, 1, 1);
    },
    'key removed and back': async (h, target, context) => {
      // A wanted validator whose key is removed is left alone (KEY_MISSING): nothing on chain.
      const id = context.pick(ids(Math.min(target, max)));
      const own = (await h.privateKeys()).get(id);
      if (own === undefined) return;
      await undoing(h, { [id]: own }, async () => {
        await h.patchKeys({ [id]: null });
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        await h.patchKeys({ [id]: own });
      });
    },
  };
}
