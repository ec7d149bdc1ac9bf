// The validator set of a height: the validator rows after the previous block that the fidelity
// profile counts (intended: staked, not unstaking, not paused; v1: every row), address-sorted;
// its quorum (strictly more than 2/3) and round-robin leader.
import { createHash } from 'node:crypto';
import { hexToBytes } from '../pocket/index.ts';
import { ActorKind } from './actor-types.ts';
import { INTENDED_PROFILE, type FidelityProfile } from './fidelity.ts';
import type { StateReader } from './state.ts';

export interface ValidatorInfo {
  address: string;
  publicKey: Uint8Array;
  publicKeyHex: string;
  serviceUrl: string;
}

export class ValidatorSet {
  readonly members: readonly ValidatorInfo[];
  readonly #byAddress: ReadonlyMap<string, ValidatorInfo>;
  readonly hash: string;

  constructor(members: readonly ValidatorInfo[]) {
    this.members = [...members].sort((a, b) => (a.address < b.address ? -1 : 1));
    this.#byAddress = new Map(this.members.map((m) => [m.address, m]));
    const hash = createHash('sha256');
    for (const m of this.members) hash.update(`${m.address}:${m.publicKeyHex}\n`);
    this.hash = hash.digest('hex');
  }

  /** The set as of a state: the validator rows the profile counts (default: staked ones). */
  static fromState(state: StateReader, profile: FidelityProfile = INTENDED_PROFILE): ValidatorSet {
    return new ValidatorSet(
      state
        .actors(ActorKind.validator)
        .filter((v) => profile.inValidatorSet(v))
        .map((v) => ({
          address: v.address,
          publicKey: hexToBytes(v.publicKey),
          publicKeyHex: v.publicKey,
          serviceUrl: v.serviceUrl,
        })),
    );
  }

  get size(): number {
    return this.members.length;
  }

  /** Votes needed to decide: strictly more than 2/3 of the set. */
  get quorum(): number {
    return Math.floor((2 * this.size) / 3) + 1;
  }

  /** Votes that prove at least one non-faulty member is in a round (f + 1). */
  get skipThreshold(): number {
    return this.size - this.quorum + 1;
  }

  has(address: string): boolean {
    return this.#byAddress.has(address);
  }

  get(address: string): ValidatorInfo | undefined {
    return this.#byAddress.get(address);
  }

  /** Leader of (height, round): round-robin over the address-sorted set. */
  proposer(height: number, round: number): string | undefined {
    if (this.size === 0) return undefined;
    return this.members[(height + round) % this.size]?.address;
  }
}
