// The operator's moves on keys of staked validators (issue 30), as commands of the model-based
// test of the control plane (control-plane-model.ts): a key rotated (the id given a spare key,
// funded in the genesis, taken out of the Secret so that nothing is shared), a key moved to
// another id (which gives its own up for a spare), a key removed. The manager must rotate — the old
// address unstaked with the old key, the pod restarted, the new address staked — or, for a removed
// key, leave the validator alone; the model's invariants are read on the chain after each command
// (no stall the manager caused) and at the end (no fork, nothing doubled). Kept apart from the
// other commands so that each file grows on its own.
import fc from 'fast-check';
import { pending, waitFor, type Harness } from '../../src/harness/index.ts';
import { parsePrivateKey } from '../../src/pocket/index.ts';
import { checkAfterCommand, type Model, type Real } from './control-plane-model.ts';

/** What these commands need of the real side besides the harness. */
export interface KeyMovesReal {
  h: Harness;
  /** Keys (hex) of ids beyond the model's, funded in the genesis: free to hand out, each once. */
  spareKeys?: Map<string, string> | undefined;
  /** The spare ids not handed out yet. */
  spares?: string[] | undefined;
  log: (line: string) => void;
}

type Cmd = fc.AsyncCommand<Model, Real>;

/** A rotation (unstake, restart, stake) settles within this. */
const SETTLE_MS = 90_000;

/**
 * Waits until each of `ids` that the model's replicas want is active under the key the Secret
 * gives it now: the manager's planned rotation is done, so the next command does not race it (a
 * pod started meanwhile with a key another node still signs with would sign twice, which nothing
 * but the operator can prevent). A rotation that does not settle is the manager's failure.
 */
async function settled(r: KeyMovesReal, m: Readonly<Model>, ids: readonly string[]): Promise<void> {
  const wanted = ids.filter((id) => Number(id) <= m.replicas && !m.broken.has(id));
  if (wanted.length === 0) return;
  await waitFor(
    async () => {
      const keys = await r.h.privateKeys();
      const rows = await r.h.validators();
      for (const id of wanted) {
        const hex = keys.get(id);
        const row = rows.find((x) => x.id === id);
        const address = hex === undefined ? undefined : parsePrivateKey(hex).address;
        const done =
          row?.phase === 'active' &&
          row.address === address &&
          row.chain.status === 'staked' &&
          row.pendingAction === null;
        if (!done)
          return pending(
            `${id} is ${row?.phase ?? '?'} at ${row?.address ?? '?'}: ${row?.reason ?? ''}`,
          );
      }
      return true;
    },
    {
      what: `${wanted.join(', ')} active under their new keys`,
      timeoutMs: SETTLE_MS,
      intervalMs: 500,
    },
  );
}

/** One spare key taken out of the Secret's free ones (its entry removed: no duplicate). */
function takeSpare(r: KeyMovesReal): { id: string; hex: string } | undefined {
  const id = r.spares?.shift();
  const hex = id === undefined ? undefined : r.spareKeys?.get(id);
  return id === undefined || hex === undefined ? undefined : { id, hex };
}

abstract class KeyMove implements Cmd {
  check(m: Readonly<Model>): boolean {
    return this.ids().every((id) => !m.broken.has(id));
  }
  abstract ids(): string[];
  abstract apply(m: Model, r: Real & KeyMovesReal): Promise<void>;
  async run(m: Model, r: Real): Promise<void> {
    if (Date.now() > r.until) return;
    r.log(`  ${this.toString()}`);
    await this.apply(m, r);
    await checkAfterCommand(r);
  }
  abstract toString(): string;
}

/** `id`'s key rotated: a spare key in its place. */
class RotateKey extends KeyMove {
  readonly id: string;
  constructor(id: string) {
    super();
    this.id = id;
  }
  ids(): string[] {
    return [this.id];
  }
  async apply(m: Model, r: Real & KeyMovesReal): Promise<void> {
    const spare = takeSpare(r);
    if (spare === undefined) return r.log('    (no spare key left)');
    await r.h.patchKeys({ [this.id]: spare.hex, [spare.id]: null });
    await settled(r, m, [this.id]);
  }
  toString(): string {
    return `rotate key ${this.id} (a spare key in its place)`;
  }
}

/** `from`'s key moved to `to`; `from` gets a spare key. */
class MoveKey extends KeyMove {
  readonly from: string;
  readonly to: string;
  constructor(from: string, to: string) {
    super();
    this.from = from;
    this.to = to;
  }
  ids(): string[] {
    return [this.from, this.to];
  }
  override check(m: Readonly<Model>): boolean {
    // Both pods there: a pod started later with the moved key while the other still signs with
    // it would sign twice, which only the operator can prevent (the scaler refuses such a scale).
    return (
      this.from !== this.to &&
      Number(this.from) <= m.replicas &&
      Number(this.to) <= m.replicas &&
      super.check(m)
    );
  }
  async apply(m: Model, r: Real & KeyMovesReal): Promise<void> {
    const spare = takeSpare(r);
    if (spare === undefined) return r.log('    (no spare key left)');
    const now = await r.h.privateKeys();
    await r.h.patchKeys({
      [this.to]: now.get(this.from) ?? '',
      [this.from]: spare.hex,
      [spare.id]: null,
    });
    await settled(r, m, [this.from, this.to]);
  }
  toString(): string {
    return `move key ${this.from} → ${this.to} (${this.from} gets a spare key)`;
  }
}

/** `id`'s key removed from the Secret (KEY_MISSING while it is wanted). */
class RemoveKey extends KeyMove {
  readonly id: string;
  constructor(id: string) {
    super();
    this.id = id;
  }
  ids(): string[] {
    return [this.id];
  }
  async apply(m: Model, r: Real & KeyMovesReal): Promise<void> {
    await r.h.patchKeys({ [this.id]: null });
    m.broken.add(this.id);
  }
  toString(): string {
    return `remove key ${this.id}`;
  }
}

/** The key commands over ids 001…`max`. */
export function keyMoveCommands(max: number): fc.Arbitrary<Cmd>[] {
  const id = fc.integer({ min: 1, max }).map((n) => String(n).padStart(3, '0'));
  return [
    id.map((i) => new RotateKey(i)),
    fc.tuple(id, id).map(([a, b]) => new MoveKey(a, b)),
    id.map((i) => new RemoveKey(i)),
  ];
}

/** The keys of the Secret beyond id `max` (funded in the genesis: spare keys to hand out). */
export function spareKeysOf(keys: ReadonlyMap<string, string>, max: number): Map<string, string> {
  return new Map(
    [...keys].filter(([id]) => Number(id) > max).sort(([a], [b]) => a.localeCompare(b)),
  );
}
