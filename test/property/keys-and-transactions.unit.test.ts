// Bad input, property-based (fast-check): key parsing and transaction decoding either succeed or
// fail with a named error — never a crash of another kind, never key material in a message.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  admitTransaction,
  bytesToHex,
  decodeTransaction,
  describeTransaction,
  generateKeys,
  isPocketError,
  parsePrivateKey,
  PocketErrorCode,
  signTransaction,
  stakeMessage,
  unstakeMessage,
  V1Error,
} from '../../src/pocket/index.ts';

const CODES = new Set<string>(Object.values(PocketErrorCode));
const [KEY] = generateKeys({ count: 1, seed: 'property' }).values();
if (KEY === undefined) throw new Error('no key');
const KEY_HEX = KEY.exportPrivateKeyHex();

/** parsePrivateKey's outcome: a key, or the code of the named error it threw. */
function parseOutcome(text: unknown): { key: string } | { code: string } {
  try {
    return { key: parsePrivateKey(text).address };
  } catch (error: unknown) {
    if (!isPocketError(error)) throw error;
    return { code: error.code };
  }
}

const hexChar = fc.constantFrom(...'0123456789abcdefABCDEF');
const hexString = (min: number, max: number) =>
  fc.array(hexChar, { minLength: min, maxLength: max }).map((chars) => chars.join(''));

/** Near-misses of a valid key: one character changed, cut, doubled, padded, or re-cased. */
const nearMiss = fc.oneof(
  fc
    .tuple(fc.nat(127), fc.constantFrom(...'0123456789abcdefgxz -\n\t\u00e9'))
    .map(([at, c]) => KEY_HEX.slice(0, at) + c + KEY_HEX.slice(at + 1)),
  fc.nat(127).map((n) => KEY_HEX.slice(0, n)),
  fc.nat(127).map((n) => KEY_HEX + KEY_HEX.slice(0, n + 1)),
  fc.constantFrom(` ${KEY_HEX}`, `${KEY_HEX}\n`, KEY_HEX.toUpperCase(), `0x${KEY_HEX}`),
);

describe('key parsing (property)', () => {
  it('any value either parses or fails with a named key error that never echoes it', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string(), hexString(0, 200), nearMiss), (input) => {
        let outcome: ReturnType<typeof parseOutcome>;
        try {
          outcome = parseOutcome(input);
        } catch (error: unknown) {
          throw new Error(`parsePrivateKey crashed with ${String(error)}`, { cause: error });
        }
        if ('code' in outcome) {
          expect(CODES.has(outcome.code)).toBe(true);
          try {
            parsePrivateKey(input);
          } catch (error: unknown) {
            const text = typeof input === 'string' ? input : '';
            if (text.length >= 16) expect((error as Error).message).not.toContain(text);
            expect((error as Error).message).not.toContain(KEY_HEX.slice(0, 16));
          }
        } else {
          expect(outcome.key).toMatch(/^[0-9a-f]{40}$/);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('a valid key parses the same in any letter case, and its seed alone gives the same address', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 128, maxLength: 128 }), (upper) => {
        const mixed = [...KEY_HEX].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
        expect(parsePrivateKey(mixed).address).toBe(KEY.address);
        expect(parsePrivateKey(mixed.slice(0, 64)).address).toBe(KEY.address);
      }),
      { numRuns: 200 },
    );
  });
});

/** V1 error codes a decode or admission can fail with. */
function v1Outcome(run: () => unknown): 'ok' | number {
  try {
    run();
    return 'ok';
  } catch (error: unknown) {
    if (error instanceof V1Error) return error.code;
    throw new Error(`crashed with ${String(error)}`, { cause: error });
  }
}

const signed = [
  signTransaction({
    key: KEY,
    message: stakeMessage({
      publicKey: KEY.publicKey,
      amount: '150000000001',
      chains: ['0001'],
      serviceUrl: '127.0.0.1:42069',
      outputAddress: KEY.addressBytes,
      signer: KEY.addressBytes,
    }),
  }),
  signTransaction({
    key: KEY,
    message: unstakeMessage({ address: KEY.addressBytes, signer: KEY.addressBytes }),
  }),
];

/** A valid transaction with bytes flipped, cut, or inserted. */
const mutated = fc
  .tuple(
    fc.constantFrom(...signed.map((s) => s.bytes)),
    fc.array(
      fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'cut', 'insert')),
      {
        minLength: 1,
        maxLength: 4,
      },
    ),
  )
  .map(([bytes, edits]) => {
    let out = Uint8Array.from(bytes);
    for (const [at, value, kind] of edits) {
      const i = at % Math.max(1, out.length);
      if (kind === 'set') out[i] = value;
      else if (kind === 'cut') out = Uint8Array.from([...out.slice(0, i), ...out.slice(i + 1)]);
      else out = Uint8Array.from([...out.slice(0, i), value, ...out.slice(i)]);
    }
    return out;
  });

describe('transaction decoding (property)', () => {
  it('arbitrary or mutated bytes decode, or fail with a V1 error code; never a crash', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 512 }), mutated), (bytes) => {
        const decoded = v1Outcome(() => decodeTransaction(bytes));
        const described = v1Outcome(() => describeTransaction(bytes));
        const admitted = v1Outcome(() => admitTransaction(bytes));
        for (const outcome of [decoded, described, admitted])
          if (outcome !== 'ok') expect(outcome).toBeGreaterThan(0);
        // Admission implies a full decode; a failed decode fails admission with the same code.
        if (admitted === 'ok') expect(described).toBe('ok');
        if (decoded !== 'ok') expect(admitted).toBe(decoded);
      }),
      { numRuns: 1_500 },
    );
  });

  it('a mutated transaction is never admitted under the original signer with different bytes', () => {
    fc.assert(
      fc.property(mutated, (bytes) => {
        let admitted: ReturnType<typeof admitTransaction> | undefined;
        try {
          admitted = admitTransaction(bytes);
        } catch {
          return;
        }
        if (admitted.signerAddress !== KEY.address) return;
        // Only an encoding of the same signed content can verify (protobuf may accept
        // reordered or duplicated fields): the signed message and nonce must be the original's.
        const original = signed.map((s) => decodeTransaction(s.bytes));
        expect(
          original.some(
            (tx) =>
              tx.nonce === admitted.nonce &&
              bytesToHex(tx.signature?.signature ?? new Uint8Array()) ===
                bytesToHex(admitted.tx.signature?.signature ?? new Uint8Array()),
          ),
        ).toBe(true);
      }),
      { numRuns: 800 },
    );
  });
});
