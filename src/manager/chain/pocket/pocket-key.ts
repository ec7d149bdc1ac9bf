// The Pocket side of the chain port receives keys as the core's `ChainKey`; they are the
// protocol library's `ValidatorKey`s the key store parsed. Anything else is a wiring bug.
import { ValidatorKey } from '../../../pocket/index.ts';
import { ManagerError } from '../../errors.ts';
import type { ChainKey } from '../../model.ts';

export function pocketKey(key: ChainKey): ValidatorKey {
  if (key instanceof ValidatorKey) return key;
  throw new ManagerError('INTERNAL', 'the Pocket chain was given a key it did not parse');
}
