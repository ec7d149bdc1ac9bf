// V1 actor types: protobuf numbers, RPC names, parameter prefixes, stake pools, fee parameters.
import { PoolName } from './pools.ts';

export const ActorKind = { application: 1, servicer: 2, fisherman: 3, validator: 4 } as const;
export type ActorKind = (typeof ActorKind)[keyof typeof ActorKind];

export const ACTOR_KINDS: readonly ActorKind[] = [1, 2, 3, 4];

interface ActorTypeInfo {
  /** Prefix of its parameters (`validator_minimum_stake`) and fee names. */
  paramPrefix: string;
  /** Name in fee parameters (`message_stake_validator_fee`). */
  feeName: string;
  pool: PoolName;
  /** Key of its actors in a V1 genesis. */
  genesisKey: 'applications' | 'servicers' | 'fishermen' | 'validators';
}

const INFO: Record<ActorKind, ActorTypeInfo> = {
  1: { paramPrefix: 'app', feeName: 'app', pool: PoolName.appStake, genesisKey: 'applications' },
  2: {
    paramPrefix: 'servicer',
    feeName: 'servicer',
    pool: PoolName.servicerStake,
    genesisKey: 'servicers',
  },
  3: {
    paramPrefix: 'fisherman',
    feeName: 'fisherman',
    pool: PoolName.fishermanStake,
    genesisKey: 'fishermen',
  },
  4: {
    paramPrefix: 'validator',
    feeName: 'validator',
    pool: PoolName.validatorStake,
    genesisKey: 'validators',
  },
};

export function isActorKind(value: number): value is ActorKind {
  return value === 1 || value === 2 || value === 3 || value === 4;
}

export function actorTypeInfo(kind: ActorKind): ActorTypeInfo {
  return INFO[kind];
}
