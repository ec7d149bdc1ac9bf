// The work of `cluster-manager tx` (tx-commands.ts declares the commands and checks their
// arguments): building and signing a V1 stake or unstake, and decoding a transaction.
import { UsageError } from '../../../../cli/program.ts';
import {
  describeTransaction,
  hexToBytes,
  signTransaction,
  stakeMessage,
  unstakeMessage,
  V1Error,
  type ValidatorKey,
} from '../../../../pocket/index.ts';

export { parseKey } from './keys-actions.ts';

/** `tx build`: the signed transaction as hex (arguments already checked by the command). */
export function buildTransaction(
  kind: 'stake' | 'unstake',
  options: {
    amount: string;
    chains: string;
    serviceUrl?: string | undefined;
    nonce?: string | undefined;
  },
  key: ValidatorKey,
): string {
  const message =
    kind === 'stake'
      ? stakeMessage({
          publicKey: key.publicKey,
          amount: options.amount,
          chains: options.chains.split(',').filter((chain) => chain !== ''),
          serviceUrl: options.serviceUrl ?? '',
          outputAddress: key.addressBytes,
          signer: key.addressBytes,
        })
      : unstakeMessage({ address: key.addressBytes, signer: key.addressBytes });
  return signTransaction({ message, key, nonce: options.nonce }).hex;
}

/** `tx decode`: what a transaction (hex) holds; a malformed one is a usage error. */
export function decodeTransaction(hex: string): unknown {
  try {
    return describeTransaction(hexToBytes(hex));
  } catch (error: unknown) {
    if (error instanceof V1Error) throw new UsageError(error.text);
    throw error;
  }
}
