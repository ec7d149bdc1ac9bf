// The Pocket side of the chain port receives keys as the core's `ChainKey`; they are the
// protocol library's `ValidatorKey`s the key store parsed. Anything else is a wiring bug.
import { parsePrivateKey, ValidatorKey } from '../../../pocket/index.ts';
import { ManagerError } from '../../errors.ts';
import type { ChainKey } from '../../model.ts';
import type { KeyCodec } from '../port.ts';

/** Pocket V1's keys: the hex of a 64-byte ed25519 private key (seed and public key), as its
 * LocalNet's Secret holds them; a bad one throws the protocol library's named PocketError. */
export const pocketKeys: KeyCodec<ValidatorKey> = { parse: (text) => parsePrivateKey(text) };

export function pocketKey(key: ChainKey): ValidatorKey {
  if (key instanceof ValidatorKey) return key;
  throw new ManagerError('INTERNAL', 'the Pocket chain was given a key it did not parse');
}
