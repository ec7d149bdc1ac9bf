// Key sets for a localnet's Secret: random, or derived from a seed phrase for reproducible nets.
import { bytesToHex } from './bytes.ts';
import { randomSeed, sha256Digest } from './crypto.ts';
import { ValidatorKey } from './keys.ts';

/** A validator id as the Secret names it: three digits, "001" … "999". */
export type ValidatorId = string;

/** Formats a 1-based index as a V1 validator id ("001"). */
export function formatValidatorId(index: number): ValidatorId {
  if (!Number.isInteger(index) || index < 1 || index > 999) {
    throw new RangeError(`validator index ${index} is outside 1…999`);
  }
  return String(index).padStart(3, '0');
}

export interface GenerateKeysOptions {
  /** How many keys, ids "001" onwards. 1…999. */
  count: number;
  /** When given, keys are derived deterministically from it (SHA-256 of a labelled string). */
  seed?: string | undefined;
  /** First index (default 1). */
  firstIndex?: number;
}

/**
 * Generates `count` validator keys keyed by id. With `seed`, id N's Ed25519 seed is
 * SHA-256("cluster-manager/validator-key/v1/" + seed + "/" + N), so the same seed always gives
 * the same Secret; without it, seeds come from the CSPRNG.
 */
export function generateKeys(options: GenerateKeysOptions): Map<ValidatorId, ValidatorKey> {
  const first = options.firstIndex ?? 1;
  const keys = new Map<ValidatorId, ValidatorKey>();
  for (let index = first; index < first + options.count; index++) {
    const id = formatValidatorId(index);
    const seed =
      options.seed === undefined
        ? randomSeed()
        : sha256Digest(
            new TextEncoder().encode(`cluster-manager/validator-key/v1/${options.seed}/${id}`),
          );
    keys.set(id, ValidatorKey.fromSeed(seed));
  }
  return keys;
}

/** Hex of a key's public half, for manifests' comments. */
export function describeKey(key: ValidatorKey): string {
  return `${key.address} (${bytesToHex(key.publicKey)})`;
}
