// Strict hex and byte helpers shared by the protocol library (lowercase hex, no 0x prefix).

const HEX_RE = /^[0-9a-fA-F]*$/;

/** True when `text` is an even-length string of hex digits (either case). */
export function isHex(text: string): boolean {
  return text.length % 2 === 0 && HEX_RE.test(text);
}

/** Decodes hex (either case); throws `RangeError` without echoing the input when it is not hex. */
export function hexToBytes(text: string): Uint8Array {
  if (!isHex(text))
    throw new RangeError(`expected an even number of hex digits (got ${text.length} characters)`);
  return Uint8Array.from(Buffer.from(text, 'hex'));
}

/** Encodes bytes as lowercase hex. */
export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Constant-time-agnostic equality for public values (hashes, public keys, addresses). */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
