// Turning chain answers into the manager's error catalogue: which V1 codes are terminal for a
// validator and which are worth a retry.
import { RpcError, V1Code } from '../../../pocket/index.ts';
import { ManagerError } from '../../errors.ts';
import { PocketErrors } from './pocket-errors.ts';

/** The error for a transaction included in a block with a non-zero `result_code`. */
export function resultCodeError(code: number, kind: string): ManagerError {
  switch (code) {
    case V1Code.minimumStake:
      return new ManagerError(
        PocketErrors.STAKE_BELOW_MINIMUM,
        `the stake amount is below the chain's minimum stake (code ${code})`,
        { details: { resultCode: code } },
      );
    case V1Code.insufficientAmount:
      return new ManagerError(
        'INSUFFICIENT_FUNDS',
        `the validator's account cannot pay the ${kind} (code ${code})`,
        { details: { resultCode: code } },
      );
    case V1Code.alreadyExists:
      return new ManagerError(
        PocketErrors.ACTOR_EXISTS,
        `the chain already has this actor and does not re-stake it (code ${code})`,
        { details: { resultCode: code } },
      );
    default:
      return new ManagerError(
        'TX_REJECTED',
        `the chain applied the ${kind} with result code ${code}`,
        { details: { resultCode: code } },
      );
  }
}

/** The error for a broadcast the node refused or that did not reach it. */
export function broadcastError(error: unknown, kind: string): ManagerError {
  if (error instanceof RpcError) {
    if (error.isTransport) {
      return new ManagerError(
        'CHAIN_UNAVAILABLE',
        `could not broadcast the ${kind}: ${error.message}`,
        { cause: error },
      );
    }
    if (error.v1Code !== undefined) {
      return new ManagerError(
        'TX_REJECTED',
        `the node refused the ${kind}: V1 error ${error.v1Code} (${error.v1Message ?? ''})`,
        {
          cause: error,
          details: { v1Code: error.v1Code },
        },
      );
    }
    return new ManagerError(
      'CHAIN_UNAVAILABLE',
      `the node answered the ${kind} with HTTP ${error.status ?? '?'}`,
      { cause: error },
    );
  }
  return new ManagerError('INTERNAL', `broadcast of the ${kind} failed unexpectedly`, {
    cause: error,
  });
}
