// Pocket V1's validator ids: the keys Secret of its LocalNet names each key by three digits,
// "001" … "999" (pod validator-4 holds key 005; src/pocket/key-generation.ts writes them so). The
// rest of the manager reads this as data (IdFormatSpec, model.ts) through the chain's definition.
import { idFormatOf } from '../../id-format.ts';
import type { IdFormatSpec } from '../../model.ts';

export const POCKET_ID_SPEC: IdFormatSpec = { prefix: '', width: 3, min: 1, max: 999 };

export const pocketIds = idFormatOf(POCKET_ID_SPEC);
