// V1's module pools: names, and addresses (the ASCII name zero-padded to 20 bytes).

export const PoolName = {
  dao: 'DAO',
  feeCollector: 'FeeCollector',
  appStake: 'AppStakePool',
  validatorStake: 'ValidatorStakePool',
  servicerStake: 'ServicerStakePool',
  fishermanStake: 'FishermanStakePool',
} as const;
export type PoolName = (typeof PoolName)[keyof typeof PoolName];

/** Pools in V1's genesis order. */
export const POOL_NAMES: readonly PoolName[] = Object.values(PoolName);

/** Hex address of a pool, e.g. `44414f00…` for DAO. */
export function poolAddress(name: PoolName): string {
  return Buffer.from(name, 'ascii').toString('hex').padEnd(40, '0');
}

/** The pool whose hex address is `address`, if any. */
export function poolByAddress(address: string): PoolName | undefined {
  return POOL_NAMES.find((name) => poolAddress(name) === address.toLowerCase());
}
