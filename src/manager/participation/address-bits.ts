// Sets of chain addresses kept small: each address the record meets gets a number once (the
// table only grows, bounded by the addresses the chain ever showed), and a set of them is a bitset
// over those numbers — 125 bytes for 1,000 validators instead of 1,000 strings per height.

/** Gives each address a small number, the same for the life of the table. */
export class AddressTable {
  readonly #numbers = new Map<string, number>();
  readonly #addresses: string[] = [];

  /** The number of `address`, given on first sight. */
  numberOf(address: string): number {
    let n = this.#numbers.get(address);
    if (n === undefined) {
      n = this.#addresses.length;
      this.#numbers.set(address, n);
      this.#addresses.push(address);
    }
    return n;
  }

  addressOf(n: number): string {
    const address = this.#addresses[n];
    if (address === undefined) throw new RangeError(`no address numbered ${n}`);
    return address;
  }

  get size(): number {
    return this.#addresses.length;
  }

  /** Every address, by number (a live view: it grows as addresses are numbered). */
  get all(): readonly string[] {
    return this.#addresses;
  }

  /** A set of `addresses` (numbered on first sight). */
  bitsOf(addresses: Iterable<string>): Uint8Array {
    const numbers = [...addresses].map((a) => this.numberOf(a));
    const bits = new Uint8Array(Math.ceil(this.size / 8));
    for (const n of numbers) bits[n >> 3] = (bits[n >> 3] ?? 0) | (1 << (n & 7));
    return bits;
  }

  /** The addresses of a set, in numbering order. */
  addressesOf(bits: Uint8Array): string[] {
    const out: string[] = [];
    for (const n of members(bits)) out.push(this.addressOf(n));
    return out;
  }
}

/** Whether number `n` is in `bits` (a set made before `n` was given holds it not). */
export function hasBit(bits: Uint8Array, n: number): boolean {
  return ((bits[n >> 3] ?? 0) & (1 << (n & 7))) !== 0;
}

/** The numbers in `bits`, ascending. */
export function* members(bits: Uint8Array): Generator<number> {
  for (let byte = 0; byte < bits.length; byte++) {
    const value = bits[byte] ?? 0;
    if (value === 0) continue;
    for (let bit = 0; bit < 8; bit++) if ((value & (1 << bit)) !== 0) yield byte * 8 + bit;
  }
}

/** Two sets hold the same numbers (their lengths may differ: missing bytes are empty). */
export function sameBits(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return false;
  return true;
}

/** A copy of `bits` with `n` added (`on`) or removed, long enough to hold `n`. */
export function withBit(bits: Uint8Array, n: number, on: boolean): Uint8Array {
  const out = new Uint8Array(Math.max(bits.length, (n >> 3) + 1));
  out.set(bits);
  const mask = 1 << (n & 7);
  out[n >> 3] = on ? (out[n >> 3] ?? 0) | mask : (out[n >> 3] ?? 0) & ~mask;
  return out;
}
