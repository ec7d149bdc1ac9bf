import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  bytesToHex,
  KeyError,
  parsePrivateKey,
  PocketErrorCode,
  ValidatorKey,
} from '../../src/pocket/index.ts';
import { nodeSha256 } from '../support/node-crypto.ts';
import { KEY_VECTORS } from '../support/pocket-vectors.ts';

describe('parsePrivateKey', () => {
  it.each(KEY_VECTORS)('derives the public key and address of LocalNet validator $id', (vector) => {
    const key = parsePrivateKey(vector.privateKey);
    expect(key.publicKeyHex).toBe(vector.publicKey);
    expect(key.address).toBe(vector.address);
    expect(bytesToHex(nodeSha256(key.publicKey).subarray(0, 20))).toBe(vector.address);
  });

  it('accepts a bare 64-hex seed and upper-case hex', () => {
    const vector = KEY_VECTORS[0];
    expect(parsePrivateKey(vector.privateKey.slice(0, 64)).address).toBe(vector.address);
    expect(parsePrivateKey(vector.privateKey.toUpperCase()).address).toBe(vector.address);
  });

  const full = KEY_VECTORS[1].privateKey;
  const wrongPublicHalf = full.slice(0, 64) + KEY_VECTORS[0].publicKey;
  const cases: [string, unknown, string][] = [
    ['empty input', '', PocketErrorCode.keyEmpty],
    ['a trailing newline', `${full}\n`, PocketErrorCode.keyWhitespace],
    ['an inner space', `${full.slice(0, 10)} ${full.slice(10)}`, PocketErrorCode.keyWhitespace],
    ['a non-hex character', `${full.slice(0, 127)}g`, PocketErrorCode.keyNotHex],
    ['a 0x prefix', `0x${full.slice(2)}`, PocketErrorCode.keyNotHex],
    ['126 characters', full.slice(0, 126), PocketErrorCode.keyBadLength],
    ['130 characters', `${full}ab`, PocketErrorCode.keyBadLength],
    ['an odd length', full.slice(0, 63), PocketErrorCode.keyBadLength],
    ['a public half of another key', wrongPublicHalf, PocketErrorCode.keyPublicMismatch],
    ['a number', 42, PocketErrorCode.keyNotString],
    ['null', null, PocketErrorCode.keyNotString],
  ];

  it.each(cases)(
    'rejects %s with a named error that does not echo the key',
    (_label, input, code) => {
      let caught: unknown;
      try {
        parsePrivateKey(input);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(KeyError);
      const error = caught as KeyError;
      expect(error.code).toBe(code);
      expect(error.message).toMatch(/expected|corrupt/);
      if (typeof input === 'string' && input.length > 16) {
        expect(error.message).not.toContain(input.slice(0, 16));
        expect(error.message).not.toContain(full.slice(0, 16));
      }
    },
  );
});

describe('ValidatorKey', () => {
  const key = parsePrivateKey(KEY_VECTORS[0].privateKey);
  const seedHex = KEY_VECTORS[0].privateKey.slice(0, 64);

  it('keeps its seed out of JSON, inspection and string conversion', () => {
    for (const text of [
      JSON.stringify(key),
      inspect(key),
      String(key),
      JSON.stringify({ nested: [key] }),
    ]) {
      expect(text).not.toContain(seedHex);
      expect(text).toContain(key.address);
    }
  });

  it('exports the 128-hex V1 form only when asked', () => {
    expect(key.exportPrivateKeyHex()).toBe(KEY_VECTORS[0].privateKey);
  });

  it('refuses seeds that are not 32 bytes', () => {
    expect(() => ValidatorKey.fromSeed(new Uint8Array(31))).toThrow(KeyError);
  });
});
