// Texts the Go node produces that clients may match: `encoding/hex` errors and `time.Time`'s
// String() format.

/**
 * Decodes hex like Go's `hex.DecodeString` (either case). Returns the bytes, or Go's error text:
 * `encoding/hex: invalid byte: U+0067 'g'` or `encoding/hex: odd length hex string`.
 */
export function goHexDecode(text: string): Uint8Array | string {
  const bytes = Buffer.from(text, 'utf8');
  for (const byte of bytes) {
    if (!isHexByte(byte)) return invalidByte(byte);
  }
  if (bytes.length % 2 === 1) return 'encoding/hex: odd length hex string';
  return Uint8Array.from(Buffer.from(text, 'hex'));
}

function isHexByte(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) ||
    (byte >= 0x41 && byte <= 0x46) ||
    (byte >= 0x61 && byte <= 0x66)
  );
}

/** Go's `InvalidByteError`: `%#U` of the byte, with the character when Go deems it printable. */
function invalidByte(byte: number): string {
  const code = `U+${byte.toString(16).toUpperCase().padStart(4, '0')}`;
  const printable = (byte >= 0x20 && byte < 0x7f) || (byte >= 0xa0 && byte !== 0xad);
  return `encoding/hex: invalid byte: ${printable ? `${code} '${String.fromCharCode(byte)}'` : code}`;
}

/** Go's `time.Time.String()` of a UTC instant: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
export function goTimeString(ms: number): string {
  const date = new Date(ms);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const fraction = pad(date.getUTCMilliseconds(), 3).replace(/0+$/, '');
  return (
    `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}` +
    `${fraction === '' ? '' : `.${fraction}`} +0000 UTC`
  );
}
