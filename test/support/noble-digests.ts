// Independent SHA3-256 and SHA-256 from @noble/hashes, to check the library's digests (which run
// on node:crypto, OpenSSL).
import { sha256 } from '@noble/hashes/sha2.js';
import { sha3_256 } from '@noble/hashes/sha3.js';
import { bytesToHex } from '../../src/pocket/bytes.ts';

export function nobleSha3Hex(data: Uint8Array): string {
  return bytesToHex(sha3_256(data));
}

export function nobleSha256(data: Uint8Array): Uint8Array {
  return sha256(data);
}
