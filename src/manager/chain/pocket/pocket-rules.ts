// Pocket V1's side of the chain port's rules: the fee every message pays and what a committed
// result code means for the manager's stakes and unstakes.
import { V1Code } from '../../../pocket/index.ts';
import { ActionKind } from '../../model.ts';
import type { ChainRules, CommittedFailure } from '../port.ts';
import { resultCodeError } from './tx-errors.ts';

/**
 * The fee of a stake or unstake: V1's genesis files set `message_stake_validator_fee` (and every
 * other `message_*_fee`) to 10000 (build/config/genesis.json:1685 at 58c9b650; the stand-in's
 * params.ts does the same). A signer below it cannot pay.
 */
const MIN_FEE = 10_000n;

export const pocketRules: ChainRules = {
  requiredBalance(kind, stake) {
    return MIN_FEE + (kind === ActionKind.stake ? BigInt(stake.amount) : 0n);
  },
  committedFailure(kind, resultCode): CommittedFailure {
    const failure = resultCodeError(resultCode, kind);
    // 54 (invalid status) on an unstake: the validator is already unstaking; its effect is there.
    const benign = kind === ActionKind.unstake && resultCode === V1Code.invalidStatus;
    return { error: failure, terminal: !benign && failure.terminal };
  },
};
