// Pocket V1's validator ids: the keys Secret of its LocalNet names each key by three digits,
// "001" … "999" (pod validator-4 holds key 005). The rest of the manager reads this as data
// (IdFormat, model.ts) through the chain port.
import type { IdFormat, ValidatorId } from '../../model.ts';

const MIN = 1;
const MAX = 999;
const WIDTH = 3;

function fromNumber(n: number): ValidatorId | undefined {
  return Number.isInteger(n) && n >= MIN && n <= MAX ? String(n).padStart(WIDTH, '0') : undefined;
}

export const pocketIds: IdFormat = {
  fromNumber,
  // "5", "05" and "005" all name 005; longer texts or anything but digits name none.
  fromText: (text) => (/^\d{1,3}$/.test(text) ? fromNumber(Number(text)) : undefined),
  // As the key store always picked them: any three digits ("000" too, reported as it parses).
  isId: (name) => /^\d{3}$/.test(name),
  range: { min: MIN, max: MAX },
  example: '005',
};
