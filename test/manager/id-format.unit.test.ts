// A chain's ids read off its data (src/manager/id-format.ts): Pocket V1's three digits read as
// they always were (the reading before ids became data, kept here as the reference), and a chain
// whose ids carry a prefix and no padding ("val-5") read the same way by the same code.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { idFormatOf } from '../../src/manager/id-format.ts';

/** Pocket's ids as chain/pocket/id-format.ts wrote them by hand before (commit 5f5ff16). */
const before = {
  fromNumber: (n: number) =>
    Number.isInteger(n) && n >= 1 && n <= 999 ? String(n).padStart(3, '0') : undefined,
  fromText: (text: string) =>
    /^\d{1,3}$/.test(text) ? before.fromNumber(Number(text)) : undefined,
  isId: (name: string) => /^\d{3}$/.test(name),
};

describe('idFormatOf', () => {
  it("reads Pocket V1's ids exactly as the hand-written format did", () => {
    const text = fc.oneof(
      fc.stringMatching(/^[0-9]{0,5}$/),
      fc.string({ maxLength: 6 }),
      fc.integer({ min: -5, max: 1_200 }).map(String),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(pocketIds.fromText(t)).toBe(before.fromText(t));
        expect(pocketIds.isId(t)).toBe(before.isId(t));
      }),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -3, max: 1_100 }), fc.double()), (n) => {
        expect(pocketIds.fromNumber(n)).toBe(before.fromNumber(n));
      }),
    );
    expect(pocketIds.example).toBe('005');
    expect(pocketIds.range).toEqual({ min: 1, max: 999 });
  });

  it('reads a prefixed, unpadded format: "4", "04" and "val-4" name val-4', () => {
    const ids = idFormatOf({ prefix: 'val-', width: 0, min: 1, max: 64 });
    expect(ids.fromNumber(4)).toBe('val-4');
    expect(['4', '04', 'val-4', 'val-04'].map((t) => ids.fromText(t))).toEqual([
      'val-4',
      'val-4',
      'val-4',
      'val-4',
    ]);
    expect(
      ['', 'val-', 'val-65', '0', '065', 'val-4x', 'VAL-4', 'x-4', '004'].map((t) =>
        ids.fromText(t),
      ),
    ).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(ids.isId('val-4')).toBe(true);
    expect(ids.isId('val-04')).toBe(false);
    expect(ids.isId('4')).toBe(false);
    expect(ids.example).toBe('val-5');
    expect(ids.fromNumber(65)).toBeUndefined();
  });

  it('every id of the range reads back from its number written by a person', () => {
    const specs = fc.record({
      prefix: fc.constantFrom('', 'val-', 'node.', 'v'),
      width: fc.integer({ min: 0, max: 5 }),
      min: fc.integer({ min: 0, max: 50 }),
      span: fc.integer({ min: 0, max: 5_000 }),
    });
    fc.assert(
      fc.property(specs, fc.nat(), ({ prefix, width, min, span }, pick) => {
        const ids = idFormatOf({ prefix, width, min, max: min + span });
        const n = min + (pick % (span + 1));
        const id = ids.fromNumber(n);
        expect(id).toBeDefined();
        expect(ids.isId(id!)).toBe(true);
        expect(ids.fromText(id!)).toBe(id);
        expect(ids.fromText(String(n))).toBe(id);
        expect(ids.fromNumber(min + span + 1)).toBeUndefined();
      }),
    );
  });

  it('refuses a spec that names no id, by what is wrong', () => {
    expect(() => idFormatOf({ prefix: '', width: 3, min: 5, max: 4 })).toThrow(/min <= max/);
    expect(() => idFormatOf({ prefix: 'a b', width: 0, min: 1, max: 4 })).toThrow(/prefix/);
    expect(() => idFormatOf({ prefix: '', width: -1, min: 1, max: 4 })).toThrow(/width/);
  });
});
