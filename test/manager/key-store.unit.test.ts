import { describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { keyOf } from '../support/plan-fixture.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { ToyChain, toyKey } from '../support/toy-chain.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('KeyStore', () => {
  it('decodes base64 Secret data into keys addressable by id and address', () => {
    const store = new KeyStore(pocketIds, pocketKeys);
    const { changed, newProblems } = store.update(
      keySetOfSecret({
        data: { '001': b64(keyOf('001').exportPrivateKeyHex()), other: b64('x') },
      }),
    );
    expect(changed).toEqual(['001']);
    expect(newProblems).toEqual([]);
    expect(store.get('001')).toMatchObject({ ok: true });
    expect(store.idOfAddress(keyOf('001').address)).toBe('001');
    expect(store.get('other')).toBeUndefined();
  });

  it('reports a malformed key once, until its value changes, and keeps the others', () => {
    const store = new KeyStore(pocketIds, pocketKeys);
    const good = b64(keyOf('002').exportPrivateKeyHex());
    const first = store.update(keySetOfSecret({ data: { '001': b64('nothex'), '002': good } }));
    expect(first.newProblems).toEqual([
      { id: '001', code: 'KEY_NOT_HEX', message: expect.any(String) },
    ]);
    expect(store.get('002')).toMatchObject({ ok: true });
    expect(store.update(keySetOfSecret({ data: { '001': b64('nothex'), '002': good } }))).toEqual({
      changed: [],
      newProblems: [],
    });
    expect(
      store.update(keySetOfSecret({ data: { '001': b64('abc'), '002': good } })).newProblems,
    ).toHaveLength(1);
    const fixed = store.update(
      keySetOfSecret({
        data: { '001': b64(keyOf('001').exportPrivateKeyHex()), '002': good },
      }),
    );
    expect(fixed).toEqual({ changed: ['001'], newProblems: [] });
  });

  it('picks up added and removed keys', () => {
    const store = new KeyStore(pocketIds, pocketKeys);
    store.update(keySetOfSecret({ data: { '001': b64(keyOf('001').exportPrivateKeyHex()) } }));
    const added = store.update(
      keySetOfSecret({
        data: {
          '001': b64(keyOf('001').exportPrivateKeyHex()),
          '003': b64(keyOf('003').exportPrivateKeyHex()),
        },
      }),
    );
    expect(added.changed).toEqual(['003']);
    const removed = store.update(
      keySetOfSecret({ data: { '003': b64(keyOf('003').exportPrivateKeyHex()) } }),
    );
    expect(removed.changed).toEqual(['001']);
    expect(store.get('001')).toBeUndefined();
    expect(store.update(undefined).changed).toEqual(['003']);
    expect(store.loaded).toBe(true);
  });

  it('makes a key shared by two ids a KEY_DUPLICATE on both, attributing its row to the lower id', () => {
    const store = new KeyStore(pocketIds, pocketKeys);
    const one = b64(keyOf('001').exportPrivateKeyHex());
    const five = b64(keyOf('005').exportPrivateKeyHex());
    store.update(keySetOfSecret({ data: { '001': one, '005': five } }));
    const copied = store.update(keySetOfSecret({ data: { '001': one, '005': one } }));
    // 001's value did not change, but its standing did: it is reconciled and reported too.
    expect(copied.changed).toEqual(['001', '005']);
    expect(copied.newProblems).toEqual([
      { id: '001', code: 'KEY_DUPLICATE', message: expect.stringContaining('"005"') },
      { id: '005', code: 'KEY_DUPLICATE', message: expect.stringContaining('"001"') },
    ]);
    expect(store.get('001')).toMatchObject({ ok: false, code: 'KEY_DUPLICATE' });
    expect(store.get('005')).toMatchObject({ ok: false, code: 'KEY_DUPLICATE' });
    expect(store.idOfAddress(keyOf('001').address)).toBe('001');
    expect(store.idOfAddress(keyOf('005').address)).toBeUndefined();
    // Reported once: the same Secret again changes nothing.
    expect(store.update(keySetOfSecret({ data: { '001': one, '005': one } }))).toEqual({
      changed: [],
      newProblems: [],
    });
    // A third copy is a new problem for everyone (each message names the others).
    const three = store.update(keySetOfSecret({ data: { '001': one, '005': one, '007': one } }));
    expect(three.newProblems.map((p) => p.id)).toEqual(['001', '005', '007']);
    // Fixed: both are valid again, and reconciled.
    const fixed = store.update(keySetOfSecret({ data: { '001': one, '005': five } }));
    expect(fixed).toEqual({ changed: ['001', '005', '007'], newProblems: [] });
    expect(store.get('005')).toMatchObject({ ok: true });
  });

  it("remembers the address of an id's last valid key after it goes missing or bad", () => {
    const store = new KeyStore(pocketIds, pocketKeys);
    store.update(keySetOfSecret({ data: { '004': b64(keyOf('004').exportPrivateKeyHex()) } }));
    store.update(
      keySetOfSecret({ data: { '004': b64(`${keyOf('004').exportPrivateKeyHex()}zz`) } }),
    );
    expect(store.get('004')).toMatchObject({ ok: false });
    expect(store.addressOf('004')).toBe(keyOf('004').address);
    store.update(keySetOfSecret({ data: {} }));
    expect(store.get('004')).toBeUndefined();
    expect(store.addressOf('004')).toBe(keyOf('004').address);
    expect(store.addressOf('009')).toBeUndefined();
  });
});

describe('KeyStore over another chain', () => {
  // The store names no chain: ids and keys are the chain port's (the toy's "val-1" ids, "toy key …").
  it("reads ids and keys with the chain port's formats, and names a bad key by the codec's code", () => {
    const port = new ToyChain([]).port();
    const store = new KeyStore(port.ids, port.keys);
    const { changed, newProblems } = store.update(
      keySetOfSecret({
        data: {
          'val-1': b64('toy key alice'),
          'val-2': b64('not a key'),
          '001': b64('toy key bob'),
          'val-01': b64('toy key carol'),
        },
      }),
    );
    expect(changed.sort()).toEqual(['val-1', 'val-2']);
    expect(store.get('val-1')).toMatchObject({ ok: true, key: toyKey('alice') });
    expect(newProblems).toEqual([
      { id: 'val-2', code: 'KEY_INVALID', message: 'not a toy key (toy key <name>)' },
    ]);
    expect(store.get('001')).toBeUndefined(); // not an id of this chain
    expect(store.get('val-01')).toBeUndefined(); // nor is a padded one
  });
});
