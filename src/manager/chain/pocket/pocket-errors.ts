// The error codes only Pocket V1's side of the chain port raises, declared as data beside the
// core's catalogue (errors.ts): what a committed result code of V1 names (utility/types/error.go
// at 58c9b650; src/pocket/v1-errors.ts), and what its CLI transport can fail with.
import { declareErrors } from '../../errors.ts';

export const PocketErrors = declareErrors({
  STAKE_BELOW_MINIMUM: {
    status: 409,
    retryable: false,
    meaning: "the stake amount is below the chain's `validator_minimum_stake` (V1 code 45)",
  },
  ACTOR_EXISTS: {
    status: 409,
    retryable: false,
    meaning: 'the chain already has this actor and refuses to stake it again (V1 code 60)',
  },
  CLI_FAILED: {
    status: 502,
    retryable: true,
    meaning: 'the node CLI (cli mode) exited non-zero or printed no status',
  },
  CLI_TIMEOUT: {
    status: 504,
    retryable: true,
    meaning: 'the node CLI did not finish within its time limit; the transaction may have gone out',
  },
});
