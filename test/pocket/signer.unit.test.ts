// The signer (ed25519SignerOfSeed: noble, the seed expanded once) against noble's own `sign` and OpenSSL's Ed25519:
// the same public key and byte-identical signatures, for random seeds and messages of any length.
import { inspect } from 'node:util';
import { sha512 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ed25519SignerOfSeed, publicKeyOfSeed, signEd25519 } from '../../src/pocket/crypto.ts';
import { parsePrivateKey, ValidatorKey } from '../../src/pocket/index.ts';
import { nodeSign, nodeVerify } from '../support/node-crypto.ts';
import { KEY_VECTORS } from '../support/pocket-vectors.ts';

const seeds = fc.uint8Array({ minLength: 32, maxLength: 32 });
const messages = fc.uint8Array({ minLength: 0, maxLength: 600 });

describe('ed25519SignerOfSeed', () => {
  it('signs exactly as noble and OpenSSL do', () => {
    fc.assert(
      fc.property(seeds, fc.array(messages, { minLength: 1, maxLength: 3 }), (seed, list) => {
        const signer = ed25519SignerOfSeed(seed);
        expect(signer.publicKey).toEqual(publicKeyOfSeed(seed));
        for (const message of list) {
          const signature = signer.sign(message);
          expect(signature).toEqual(signEd25519(message, seed));
          expect(Buffer.from(signature)).toEqual(Buffer.from(nodeSign(seed, message)));
          expect(nodeVerify(signer.publicKey, message, signature)).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('signs edge seeds (all zero, all 0xff) and a large message', () => {
    const big = new Uint8Array(100_000).map((_, i) => i % 251);
    for (const fill of [0x00, 0xff]) {
      const seed = new Uint8Array(32).fill(fill);
      const signer = ed25519SignerOfSeed(seed);
      for (const message of [new Uint8Array(0), big]) {
        expect(Buffer.from(signer.sign(message))).toEqual(Buffer.from(nodeSign(seed, message)));
      }
    }
  });

  it('rejects a seed that is not 32 bytes', () => {
    expect(() => ed25519SignerOfSeed(new Uint8Array(31))).toThrow();
    expect(() => ed25519SignerOfSeed(new Uint8Array(64))).toThrow();
    // Not bytes at all: before, a 32-character string became the all-zero seed.
    expect(() => ed25519SignerOfSeed('a'.repeat(32) as never)).toThrow(TypeError);
    expect(() => ed25519SignerOfSeed(Array.from({ length: 32 }, () => 1) as never)).toThrow(
      TypeError,
    );
  });

  it('backs ValidatorKey.sign without exposing the expanded secret', () => {
    const vector = KEY_VECTORS[0];
    const key = parsePrivateKey(vector.privateKey);
    const seed = Buffer.from(vector.privateKey.slice(0, 64), 'hex');
    const message = new TextEncoder().encode('stake');
    expect(Buffer.from(key.sign(message))).toEqual(Buffer.from(nodeSign(seed, message)));
    expect(ValidatorKey.fromSeed(seed).sign(message)).toEqual(key.sign(message));
    const shown = JSON.stringify(key) + String(key) + Object.keys(key).join();
    expect(shown).not.toContain(vector.privateKey.slice(0, 16));
    expect(Object.values(key).some((v) => typeof v === 'bigint')).toBe(false);
    // Nor does the deepest inspection: neither the seed nor its expansion (the scalar's and the
    // prefix's bytes, SHA-512 of the seed) appear.
    const head = Buffer.from(sha512(seed)).toString('hex');
    for (const subject of [key, ed25519SignerOfSeed(seed)]) {
      const deep = inspect(subject, { showHidden: true, depth: Infinity, getters: true });
      for (const secret of [vector.privateKey.slice(0, 64), head.slice(0, 32), head.slice(64, 96)])
        expect(deep).not.toContain(secret);
    }
  });
});
