// The library's digests (node:crypto) against published vectors and against noble's.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../../src/pocket/bytes.ts';
import { sha256Digest, sha3Digest, sha3Hex } from '../../src/pocket/crypto.ts';
import { transactionHash } from '../../src/pocket/transaction.ts';
import { nobleSha256, nobleSha3Hex } from '../support/noble-digests.ts';

const ascii = (text: string) => new TextEncoder().encode(text);

describe('digests', () => {
  it('match the FIPS 202 / FIPS 180 example values', () => {
    // SHA3-256 and SHA-256 of "" and "abc" (NIST CSRC example values), not Keccak-256.
    expect(sha3Hex(ascii(''))).toBe(
      'a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a',
    );
    expect(sha3Hex(ascii('abc'))).toBe(
      '3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532',
    );
    expect(bytesToHex(sha256Digest(ascii('abc')))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('agree with noble on any input, as bytes and as hex', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (data) => {
        const hex = nobleSha3Hex(data);
        expect(sha3Hex(data)).toBe(hex);
        expect(bytesToHex(sha3Digest(data))).toBe(hex);
        expect(transactionHash(data)).toBe(hex);
        expect(sha256Digest(data)).toEqual(nobleSha256(data));
      }),
    );
  });

  it('return plain Uint8Arrays whose slices are copies', () => {
    const digest = sha256Digest(ascii('abc'));
    expect(Object.getPrototypeOf(digest)).toBe(Uint8Array.prototype);
    const head = digest.slice(0, 20);
    head[0] = (head[0] ?? 0) ^ 0xff;
    expect(digest[0]).toBe(0xba);
  });
});
