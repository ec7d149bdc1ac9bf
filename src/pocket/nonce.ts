// Transaction nonces as V1 makes them: a uniform random uint64 in [1, 2^64 - 1), decimal.
import { getRandomValues } from 'node:crypto';

const MAX = 2n ** 64n - 1n;

/** A fresh nonce from the CSPRNG, as a decimal string (V1 `shared/crypto/rand.go`). */
export function randomNonce(): string {
  const buffer = new BigUint64Array(1);
  for (;;) {
    getRandomValues(buffer);
    const value = buffer[0] ?? 0n;
    if (value >= 1n && value < MAX) return value.toString(10);
  }
}

/** True when `text` is a decimal uint64 (what `--nonce` accepts). */
export function isValidNonce(text: string): boolean {
  return /^(0|[1-9]\d{0,19})$/.test(text) && BigInt(text) <= MAX;
}
