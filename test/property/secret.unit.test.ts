// Bad input, property-based: whatever the keys Secret holds, the manager's key store and the
// node's Secret reader never crash; each entry is a key or a named problem; a bad entry never
// spoils a good one; a problem is reported once until its value changes.
import fc from 'fast-check';
import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { readKeysSecret, SecretKeysError } from '../../src/localnet/index.ts';
import { generateKeys, PocketErrorCode } from '../../src/pocket/index.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const KEYS = [...generateKeys({ count: 5, seed: 'property-secret' }).values()];
const CODES = new Set<string>([...Object.values(PocketErrorCode), 'KEY_INVALID', 'KEY_DUPLICATE']);
const b64 = (text: string): string => Buffer.from(text).toString('base64');

const id = fc.integer({ min: 1, max: 999 }).map((n) => String(n).padStart(3, '0'));
const junkName = fc.oneof(fc.string(), fc.constantFrom('01', '1000', 'abc', '00a', ' 001', '001 '));
const junkValue = fc.oneof(
  fc.string().map(b64),
  fc.string(), // not even base64
  fc.constantFrom('', '====', b64(''), b64(' '), b64(`${KEYS[0]?.exportPrivateKeyHex() ?? ''}\n`)),
  fc.uint8Array({ maxLength: 80 }).map((bytes) => Buffer.from(bytes).toString('base64')),
);

/** A Secret with some good keys (distinct ids) and arbitrary junk around them. */
const secret = fc
  .record({
    good: fc.uniqueArray(fc.tuple(id, fc.nat(KEYS.length - 1)), {
      maxLength: 5,
      selector: ([name]) => name,
    }),
    junk: fc.array(fc.tuple(fc.oneof(id, junkName), junkValue), { maxLength: 8 }),
  })
  .map(({ good, junk }) => {
    const data: Record<string, string> = {};
    for (const [name, value] of junk) data[name] = value;
    for (const [name, k] of good) data[name] = b64(KEYS[k]?.exportPrivateKeyHex() ?? '');
    return { data, good: new Map(good.map(([name, k]) => [name, KEYS[k]?.address ?? ''])) };
  });

describe('the keys Secret (property)', () => {
  it('the key store turns any Secret into keys and named problems, and keeps good keys good', () => {
    fc.assert(
      fc.property(secret, ({ data, good }) => {
        const store = new KeyStore(pocketIds, pocketKeys);
        const body: V1Secret = { metadata: { name: 'validators-private-keys' }, data };
        const first = store.update(keySetOfSecret(body));
        for (const [name, entry] of Object.entries(data)) {
          const parsed = store.get(name);
          if (!/^\d{3}$/.test(name)) {
            expect(parsed).toBeUndefined();
            continue;
          }
          expect(parsed).toBeDefined();
          if (parsed?.ok === false) {
            expect(CODES.has(parsed.code)).toBe(true);
            const value = Buffer.from(entry, 'base64').toString('utf8');
            if (value.length >= 16) expect(parsed.message).not.toContain(value);
          }
        }
        const shared = new Set(
          [...good.values()].filter((a, i, all) => all.indexOf(a) !== all.lastIndexOf(a)),
        );
        for (const [name, address] of good) {
          const parsed = store.get(name);
          // One key under two ids is a problem of both (KEY_DUPLICATE), never a good key.
          if (shared.has(address))
            expect(parsed?.ok === false && parsed.code).toBe('KEY_DUPLICATE');
          else expect(parsed?.ok === true && parsed.key.address).toBe(address);
          expect(store.idOfAddress(address)).toBeDefined();
        }
        expect(first.newProblems.every((p) => store.get(p.id)?.ok === false)).toBe(true);
        // The same Secret again: nothing changed, nothing reported twice.
        expect(store.update(keySetOfSecret(body))).toEqual({ changed: [], newProblems: [] });
      }),
      { numRuns: 500 },
    );
  });

  it('the node reads any Secret manifest into keys or a SecretKeysError', () => {
    const yamlish = fc
      .array(fc.constantFrom(...'*&!{}[]:-|>%@`\'" \n\tak0'), { maxLength: 30 })
      .map((chars) => chars.join(''));
    const manifest = fc.oneof(
      fc.string(),
      yamlish,
      secret.map(({ data }) =>
        JSON.stringify({ kind: 'Secret', metadata: { name: 'validators-private-keys' }, data }),
      ),
      fc.anything().map((value) => {
        try {
          return JSON.stringify({ kind: 'Secret', data: value, stringData: value });
        } catch {
          return '';
        }
      }),
    );
    fc.assert(
      fc.property(manifest, (text) => {
        try {
          const keys = readKeysSecret(text);
          expect(keys.size).toBeGreaterThan(0);
        } catch (error: unknown) {
          if (!(error instanceof SecretKeysError))
            throw new Error(`readKeysSecret crashed with ${String(error)}`, { cause: error });
        }
      }),
      { numRuns: 500 },
    );
  });
});
