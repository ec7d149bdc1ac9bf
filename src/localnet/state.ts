// Chain state: accounts, pools and actor rows, versioned by height (V1 keeps a row per height
// too), plus the working overlay a block is executed against before it commits.
import { createHash } from 'node:crypto';
import { ACTOR_KINDS, actorTypeInfo, type ActorKind } from './actor-types.ts';
import type { Genesis } from './genesis.ts';
import { poolByAddress, type PoolName } from './pools.ts';
import { VersionedMap } from './versioned-map.ts';

/** An actor row. Heights: −1 = not used; `unstakingHeight` > h = unstaking, ≤ h = unstaked. */
export interface Actor {
  address: string;
  actorType: ActorKind;
  publicKey: string;
  chains: string[] | null;
  serviceUrl: string;
  stakedAmount: bigint;
  pausedHeight: number;
  unstakingHeight: number;
  output: string;
}

/** V1's staking status numbers (error 54 prints them). */
export const StakingStatus = { unknown: 0, unstaking: 1, staked: 2, unstaked: 3 } as const;
export type StakingStatus = (typeof StakingStatus)[keyof typeof StakingStatus];

/** Status of a row as seen at `height`. */
export function stakingStatus(actor: Actor | undefined, height: number): StakingStatus {
  if (actor === undefined) return StakingStatus.unknown;
  if (actor.unstakingHeight === -1) return StakingStatus.staked;
  return actor.unstakingHeight > height ? StakingStatus.unstaking : StakingStatus.unstaked;
}

/** Read access shared by committed state and the working overlay. */
export interface StateReader {
  param(name: string): string | undefined;
  account(address: string): bigint;
  pool(name: PoolName): bigint;
  actor(kind: ActorKind, address: string): Actor | undefined;
  actors(kind: ActorKind): Actor[];
}

/** Everything a block changed, in a canonical order (what the state hash commits to). */
export interface StateDelta {
  accounts: [string, bigint][];
  pools: [string, bigint][];
  actors: Actor[];
}

/** The committed state at every height from genesis (0) to `height`. */
export class ChainState {
  readonly #params: ReadonlyMap<string, string>;
  readonly #accounts = new VersionedMap<bigint>();
  readonly #pools = new VersionedMap<bigint>();
  readonly #actors: Record<ActorKind, VersionedMap<Actor>> = {
    1: new VersionedMap<Actor>(),
    2: new VersionedMap<Actor>(),
    3: new VersionedMap<Actor>(),
    4: new VersionedMap<Actor>(),
  };
  #height = 0;

  private constructor(params: ReadonlyMap<string, string>) {
    this.#params = params;
  }

  static fromGenesis(genesis: Genesis): ChainState {
    const state = new ChainState(
      new Map(Object.entries(genesis.params).map(([name, value]) => [name, String(value)])),
    );
    for (const account of genesis.accounts) {
      state.#accounts.set(account.address, 0, BigInt(account.amount));
    }
    for (const pool of genesis.pools) {
      const name = poolByAddress(pool.address);
      if (name !== undefined) state.#pools.set(name, 0, BigInt(pool.amount));
    }
    for (const kind of ACTOR_KINDS) {
      for (const row of genesis[actorTypeInfo(kind).genesisKey]) {
        state.#actors[kind].set(row.address, 0, {
          address: row.address,
          actorType: kind,
          publicKey: row.public_key,
          chains: row.chains,
          serviceUrl: row.service_url ?? '',
          stakedAmount: BigInt(row.staked_amount),
          pausedHeight: row.paused_height,
          unstakingHeight: row.unstaking_height,
          output: row.output,
        });
      }
    }
    return state;
  }

  /** Last committed height (0 = genesis). */
  get height(): number {
    return this.#height;
  }

  /** Parameters in genesis order (they never change on this chain). */
  params(): [string, string][] {
    return [...this.#params];
  }

  /** A reader of the state as it was after block `height` (default: latest). */
  at(height = this.#height): StateReader {
    const h = Math.min(height, this.#height);
    return {
      param: (name) => this.#params.get(name),
      account: (address) => this.#accounts.get(address, h) ?? 0n,
      pool: (name) => this.#pools.get(name, h) ?? 0n,
      actor: (kind, address) => this.#actors[kind].get(address, h),
      actors: (kind) =>
        [...this.#actors[kind].entries(h)]
          .map(([, actor]) => actor)
          .sort((a, b) => compare(a.address, b.address)),
    };
  }

  /** Every account with a balance record at `height`, address-sorted. */
  accounts(height = this.#height): [string, bigint][] {
    return [...this.#accounts.entries(height)].sort((a, b) => compare(a[0], b[0]));
  }

  /** Records a block's changes as the state at `height` (must be the next height). */
  apply(delta: StateDelta, height: number): void {
    if (height !== this.#height + 1) {
      throw new RangeError(`cannot apply height ${height} on top of ${this.#height}`);
    }
    for (const [address, amount] of delta.accounts) this.#accounts.set(address, height, amount);
    for (const [name, amount] of delta.pools) this.#pools.set(name, height, amount);
    for (const actor of delta.actors) {
      this.#actors[actor.actorType].set(actor.address, height, actor);
    }
    this.#height = height;
  }
}

/**
 * Writes on top of a reader without touching it: the state of a block being built or checked.
 * Discarded when the block does not commit; turned into a `StateDelta` when it does.
 */
export class WorkingState implements StateReader {
  readonly #base: StateReader;
  readonly #accounts = new Map<string, bigint>();
  readonly #pools = new Map<PoolName, bigint>();
  readonly #actors = new Map<string, Actor>();

  constructor(base: StateReader) {
    this.#base = base;
  }

  param(name: string): string | undefined {
    return this.#base.param(name);
  }

  account(address: string): bigint {
    return this.#accounts.get(address) ?? this.#base.account(address);
  }

  setAccount(address: string, amount: bigint): void {
    this.#accounts.set(address, amount);
  }

  pool(name: PoolName): bigint {
    return this.#pools.get(name) ?? this.#base.pool(name);
  }

  setPool(name: PoolName, amount: bigint): void {
    this.#pools.set(name, amount);
  }

  actor(kind: ActorKind, address: string): Actor | undefined {
    return this.#actors.get(actorKey(kind, address)) ?? this.#base.actor(kind, address);
  }

  setActor(actor: Actor): void {
    this.#actors.set(actorKey(actor.actorType, actor.address), actor);
  }

  actors(kind: ActorKind): Actor[] {
    const merged = new Map(this.#base.actors(kind).map((a) => [a.address, a]));
    for (const actor of this.#actors.values()) {
      if (actor.actorType === kind) merged.set(actor.address, actor);
    }
    return [...merged.values()].sort((a, b) => compare(a.address, b.address));
  }

  delta(): StateDelta {
    return {
      accounts: [...this.#accounts].sort((a, b) => compare(a[0], b[0])),
      pools: [...this.#pools].sort((a, b) => compare(a[0], b[0])),
      actors: [...this.#actors.values()].sort(
        (a, b) => a.actorType - b.actorType || compare(a.address, b.address),
      ),
    };
  }
}

function actorKey(kind: ActorKind, address: string): string {
  return `${kind}/${address}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The state hash after a block: SHA-256 over the previous hash and the block's canonical delta. */
export function nextStateHash(previous: string, delta: StateDelta): string {
  const hash = createHash('sha256').update(previous);
  for (const [address, amount] of delta.accounts) hash.update(`\na:${address}=${amount}`);
  for (const [name, amount] of delta.pools) hash.update(`\np:${name}=${amount}`);
  for (const a of delta.actors) {
    hash.update(
      `\nv:${a.actorType}:${a.address}=${a.publicKey},${(a.chains ?? []).join('|')},${a.serviceUrl},${a.stakedAmount},${a.pausedHeight},${a.unstakingHeight},${a.output}`,
    );
  }
  return hash.digest('hex');
}
