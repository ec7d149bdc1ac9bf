// Pocket V1 validator keys: parse the Secret's hex value, derive public key and address.
import { bytesEqual, bytesToHex, hexToBytes, isHex } from './bytes.ts';
import { ed25519SignerOfSeed, sha256Digest, type Ed25519Signer } from './crypto.ts';
import { KeyError, PocketErrorCode } from './errors.ts';

/** Hex length of a full V1 private key (32-byte seed || 32-byte public key). */
export const PRIVATE_KEY_HEX_LENGTH = 128;
/** Hex length of a bare 32-byte Ed25519 seed, also accepted. */
export const SEED_HEX_LENGTH = 64;
/** Byte length of a V1 address. */
export const ADDRESS_LENGTH = 20;

const EXPECTED = `expected ${PRIVATE_KEY_HEX_LENGTH} hex characters (32-byte seed followed by its 32-byte public key) or ${SEED_HEX_LENGTH} (the seed alone)`;
const inspectSymbol = Symbol.for('nodejs.util.inspect.custom');

/** V1 address of a public key: the first 20 bytes of SHA-256(public key), as bytes. */
export function addressOf(publicKey: Uint8Array): Uint8Array {
  return sha256Digest(publicKey).slice(0, ADDRESS_LENGTH);
}

/** V1 address of a public key as lowercase hex. */
export function addressHexOf(publicKey: Uint8Array): string {
  return bytesToHex(addressOf(publicKey));
}

/**
 * A validator's private key held in memory. The seed is private: it never appears in
 * `JSON.stringify`, `util.inspect` or string conversion; only `exportPrivateKeyHex()` reveals it,
 * for the one caller that must hand it on (a keybase import through a private file).
 */
export class ValidatorKey {
  readonly #seed: Uint8Array;
  /** The seed's signer, built once when the key is read (its expanded form; crypto.ts). */
  readonly #signer: Ed25519Signer;
  readonly publicKey: Uint8Array;
  readonly publicKeyHex: string;
  readonly addressBytes: Uint8Array;
  readonly address: string;

  private constructor(seed: Uint8Array, signer: Ed25519Signer) {
    this.#seed = seed;
    this.#signer = signer;
    const publicKey = signer.publicKey;
    this.publicKey = publicKey;
    this.publicKeyHex = bytesToHex(publicKey);
    this.addressBytes = addressOf(publicKey);
    this.address = bytesToHex(this.addressBytes);
  }

  /** Builds a key from a 32-byte seed. */
  static fromSeed(seed: Uint8Array): ValidatorKey {
    if (seed.length !== 32) {
      throw new KeyError(
        PocketErrorCode.keyBadLength,
        `seed has ${seed.length} bytes; expected 32`,
      );
    }
    const copy = Uint8Array.from(seed);
    return new ValidatorKey(copy, ed25519SignerOfSeed(copy));
  }

  /** Parses the Secret's value; see `parsePrivateKey`. */
  static parse(text: unknown): ValidatorKey {
    return parsePrivateKey(text);
  }

  /** Pure Ed25519 signature of `message`. */
  sign(message: Uint8Array): Uint8Array {
    return this.#signer.sign(message);
  }

  /** The 128-hex V1 form (seed || public key). Handle as a secret. */
  exportPrivateKeyHex(): string {
    return bytesToHex(this.#seed) + this.publicKeyHex;
  }

  toJSON(): { address: string; publicKey: string } {
    return { address: this.address, publicKey: this.publicKeyHex };
  }

  toString(): string {
    return `ValidatorKey(${this.address})`;
  }

  [inspectSymbol](): string {
    return this.toString();
  }
}

/**
 * Parses a V1 private key as stored in the validators Secret: 128 hex characters (seed || public
 * key, checked to agree) or a bare 64-hex seed. Rejects empty input, whitespace anywhere,
 * non-hex characters, other lengths and a public half that does not match the seed, each with
 * its own `KeyError` code; messages describe the input's shape only.
 */
export function parsePrivateKey(text: unknown): ValidatorKey {
  if (typeof text !== 'string') {
    throw new KeyError(
      PocketErrorCode.keyNotString,
      `key is ${text === null ? 'null' : typeof text}; ${EXPECTED}`,
    );
  }
  if (text.length === 0) throw new KeyError(PocketErrorCode.keyEmpty, `key is empty; ${EXPECTED}`);
  const space = text.search(/\s/);
  if (space >= 0) {
    throw new KeyError(
      PocketErrorCode.keyWhitespace,
      `key contains whitespace at position ${space}; ${EXPECTED}`,
    );
  }
  const nonHex = text.search(/[^0-9a-fA-F]/);
  if (nonHex >= 0) {
    throw new KeyError(
      PocketErrorCode.keyNotHex,
      `key has a non-hex character at position ${nonHex}; ${EXPECTED}`,
    );
  }
  if (text.length !== PRIVATE_KEY_HEX_LENGTH && text.length !== SEED_HEX_LENGTH) {
    throw new KeyError(
      PocketErrorCode.keyBadLength,
      `key has ${text.length} hex characters; ${EXPECTED}`,
    );
  }
  if (!isHex(text)) throw new KeyError(PocketErrorCode.keyNotHex, `key is not hex; ${EXPECTED}`);
  const bytes = hexToBytes(text);
  const key = ValidatorKey.fromSeed(bytes.subarray(0, 32));
  if (bytes.length === 64 && !bytesEqual(bytes.subarray(32), key.publicKey)) {
    throw new KeyError(
      PocketErrorCode.keyPublicMismatch,
      "key's second half is not the public key of its first half (seed); the value is corrupt or not a V1 Ed25519 key",
    );
  }
  return key;
}
