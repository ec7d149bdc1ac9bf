// Pocket V1's stake as data (`StakeParams`, model.ts): an amount of uPOKT and one field of its
// own, the relay chains a validator's MessageStake lists (utility/types/proto/message.proto at
// 58c9b650: `repeated string chains`).
import type { StakeParams } from '../../model.ts';

/** The smallest unit of POKT; an amount is a whole number of it. */
export const UPOKT = 'upokt';

/**
 * Pocket V1's stake of `amount` uPOKT for `relayChains`. Its `inputs` are the text fingerprints
 * carried before stakes became data (`150000000001|0001,0021`), so a journal's held failures
 * still match after an upgrade.
 */
export function pocketStake(amount: string, relayChains: readonly string[]): StakeParams {
  const chains = relayChains.join(',');
  return {
    amount,
    denomination: UPOKT,
    fields: { chains: [...relayChains] },
    inputs: `${amount}|${chains}`,
    shown: `${amount}${UPOKT} for relay chains ${chains === '' ? '(none)' : chains}`,
  };
}

/** The relay chains a stake lists (none when the field is missing). */
export function relayChainsOf(stake: StakeParams): readonly string[] {
  const chains = stake.fields.chains;
  if (chains === undefined) return [];
  return typeof chains === 'string' ? [chains] : chains;
}
