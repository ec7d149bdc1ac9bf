// Validator keys decoded from the keys Secret as it changes. A malformed entry is isolated: it is
// reported once (until its value changes) and every other key keeps working. One key under two
// ids is a key problem of every id that shares it (KEY_DUPLICATE): none of them is acted on.
//
// A valid key the Secret no longer holds (rotated, moved to another id, removed) is kept *in
// memory only* — never written anywhere — as long as its address may still be a staked row: the
// manager unstakes that old address with it before the pod restarts on the new key
// (docs/adr/0029). A manager started after the change never saw it: that row is orphaned.
import { createHash } from 'node:crypto';
import type { KeyCodec } from '../chain/port.ts';
import type { KeySet } from '../discovery/port.ts';
import type { ChainKey, IdFormat, KeyEntry as ModelKeyEntry, ValidatorId } from '../model.ts';

/** One id's key as the Secret holds it: a Pocket key, or why not. */
export type KeyEntry = ModelKeyEntry;

/** The code of a key shared by two or more ids. */
export const KEY_DUPLICATE = 'KEY_DUPLICATE';

/** A key problem that has not been reported yet. */
export interface KeyProblem {
  readonly id: ValidatorId;
  readonly code: string;
  readonly message: string;
}

/** Holds the parsed keys of the current Secret version. */
export class KeyStore {
  /** Which entries of the keys source are validator keys (the chain port's id format). */
  readonly #ids: IdFormat;
  #entries = new Map<ValidatorId, KeyEntry>();
  /** Each value parsed on its own, before duplicates are looked for (reused while unchanged). */
  #parsed = new Map<ValidatorId, KeyEntry>();
  #byAddress = new Map<string, ValidatorId>();
  /** The address each id's key last had while it was valid (kept when the key goes bad or away). */
  readonly #lastAddress = new Map<ValidatorId, string>();
  /** Digest of each value already parsed, so an unchanged value is not parsed or reported twice. */
  #digests = new Map<ValidatorId, string>();
  #secretSeen = false;
  #present = false;
  #version: string | undefined;
  /** Valid keys the Secret held before and holds no more, by address, with the id that had each. */
  readonly #retired = new Map<string, { readonly id: ValidatorId; readonly key: ChainKey }>();

  readonly #codec: KeyCodec;
  constructor(ids: IdFormat, codec: KeyCodec) {
    this.#ids = ids;
    this.#codec = codec;
  }

  /** True once the Secret has been read at least once (it may not exist). */
  get loaded(): boolean {
    return this.#secretSeen;
  }

  /**
   * The keys source was read and holds no Secret (deleted, or never created): every id's key is
   * missing, while the keys this process read before are still held in memory.
   */
  get absent(): boolean {
    return this.#secretSeen && !this.#present;
  }

  get version(): string | undefined {
    return this.#version;
  }

  get(id: ValidatorId): KeyEntry | undefined {
    return this.#entries.get(id);
  }

  /**
   * The id whose key has this address. For a key shared by several ids, the lowest of them: its
   * on-chain row is attributed (not reported as unmanaged), and every sharing id is a key problem.
   */
  idOfAddress(address: string): ValidatorId | undefined {
    return this.#byAddress.get(address);
  }

  /**
   * The address of `id`'s key now, or the one it had when last valid (this process only):
   * with it, a validator whose key went missing or bad can still be seen on chain.
   */
  addressOf(id: ValidatorId): string | undefined {
    const entry = this.#entries.get(id);
    if (entry?.ok === true) return entry.key.address;
    return entry?.address ?? this.#lastAddress.get(id);
  }

  /** Every id whose key has this address (several for a duplicate), sorted. */
  idsOfAddress(address: string): ValidatorId[] {
    const first = this.#byAddress.get(address);
    if (first === undefined) return [];
    const entry = this.#entries.get(first);
    if (entry === undefined || entry.ok) return [first];
    return [...this.#entries.values()]
      .filter((e) => !e.ok && e.address === address)
      .map((e) => e.id)
      .sort();
  }

  /**
   * The id whose key had this address before the Secret changed, while the manager still holds
   * that key in memory (keys rotated, moved or removed since this process read them).
   */
  heldFor(address: string): ValidatorId | undefined {
    return this.#retired.get(address)?.id;
  }

  /**
   * A key with this address to sign with: the Secret's (under any id, a shared one included), or
   * one held in memory since the Secret dropped it. Undefined: nobody holds it (orphaned).
   */
  signingKey(address: string): ChainKey | undefined {
    const first = this.#byAddress.get(address);
    const entry = first === undefined ? undefined : this.#entries.get(first);
    if (entry?.ok === true) return entry.key;
    const parsed = first === undefined ? undefined : this.#parsed.get(first);
    if (parsed?.ok === true && parsed.key.address === address) return parsed.key;
    return this.#retired.get(address)?.key;
  }

  /** Addresses whose key is held in memory only, with the id that had each. */
  held(): ReadonlyMap<string, ValidatorId> {
    return new Map([...this.#retired].map(([address, { id }]) => [address, id]));
  }

  /** Forgets a key held in memory (its row is out of the set, and no node signs with it). */
  release(address: string): void {
    this.#retired.delete(address);
  }

  entries(): IterableIterator<KeyEntry> {
    return this.#entries.values();
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Replaces the keys with the Secret's contents (undefined = Secret absent). Returns the ids whose
   * key changed (to reconcile them) and the problems that are new since the last update.
   */
  update(set: KeySet | undefined): { changed: ValidatorId[]; newProblems: KeyProblem[] } {
    this.#secretSeen = true;
    this.#present = set !== undefined;
    this.#version = set?.version;
    const data = set?.keys ?? {};
    const parsed = new Map<ValidatorId, KeyEntry>();
    const digests = new Map<ValidatorId, string>();

    for (const [name, text] of Object.entries(data)) {
      if (!this.#ids.isId(name)) continue; // other entries of the Secret are not validator keys
      const digest = createHash('sha256').update(text).digest('hex');
      digests.set(name, digest);
      const previous = this.#parsed.get(name);
      parsed.set(
        name,
        previous !== undefined && this.#digests.get(name) === digest
          ? previous
          : parseEntry(this.#codec, name, text),
      );
    }

    const next = markDuplicates(parsed);
    const changed: ValidatorId[] = [];
    const newProblems: KeyProblem[] = [];
    for (const [id, entry] of next) {
      const before = this.#entries.get(id);
      const sameValue = before !== undefined && this.#digests.get(id) === digests.get(id);
      if (sameValue && sameStanding(before, entry)) {
        next.set(id, before); // unchanged: keep the object, report nothing again
        continue;
      }
      changed.push(id);
      if (!entry.ok) newProblems.push({ id, code: entry.code, message: entry.message });
    }
    for (const id of this.#entries.keys()) if (!next.has(id)) changed.push(id);
    this.#retire(parsed);

    this.#entries = next;
    this.#parsed = parsed;
    this.#digests = digests;
    this.#byAddress = new Map();
    for (const entry of [...next.values()].sort((a, b) => a.id.localeCompare(b.id))) {
      const address = entry.ok ? entry.key.address : entry.address;
      if (address !== undefined) this.#lastAddress.set(entry.id, address);
      if (address !== undefined && !this.#byAddress.has(address))
        this.#byAddress.set(address, entry.id);
    }
    changed.sort();
    return { changed, newProblems };
  }

  /** Keeps in memory every valid key the new Secret no longer holds; forgets those it holds again. */
  #retire(parsed: ReadonlyMap<ValidatorId, KeyEntry>): void {
    const present = new Set<string>();
    for (const entry of parsed.values()) if (entry.ok) present.add(entry.key.address);
    for (const [id, entry] of this.#parsed)
      if (entry.ok && !present.has(entry.key.address))
        this.#retired.set(entry.key.address, { id, key: entry.key });
    for (const address of present) this.#retired.delete(address);
  }
}

/** Every valid key whose address is shared by several ids becomes a KEY_DUPLICATE on each. */
function markDuplicates(parsed: ReadonlyMap<ValidatorId, KeyEntry>): Map<ValidatorId, KeyEntry> {
  const idsByAddress = new Map<string, ValidatorId[]>();
  for (const entry of parsed.values()) {
    if (!entry.ok) continue;
    const ids = idsByAddress.get(entry.key.address) ?? [];
    ids.push(entry.id);
    idsByAddress.set(entry.key.address, ids);
  }
  const next = new Map(parsed);
  for (const [address, ids] of idsByAddress) {
    if (ids.length < 2) continue;
    ids.sort();
    for (const id of ids) {
      const others = ids.filter((other) => other !== id).map((other) => `"${other}"`);
      next.set(id, {
        id,
        ok: false,
        code: KEY_DUPLICATE,
        message: `the same key as ${others.join(', ')}; none of them is acted on until each id has its own key`,
        address,
      });
    }
  }
  return next;
}

/** Same outcome for an unchanged value: still valid, or the same problem with the same text. */
function sameStanding(a: KeyEntry, b: KeyEntry): boolean {
  if (a.ok || b.ok) return a.ok === b.ok;
  return a.code === b.code && a.message === b.message;
}

function parseEntry(codec: KeyCodec, id: ValidatorId, text: string): KeyEntry {
  try {
    return { id, ok: true, key: codec.parse(text) };
  } catch (error: unknown) {
    // The codec's named errors carry a code and a message that quotes no key (port.ts).
    const code = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
    if (typeof code === 'string' && error instanceof Error)
      return { id, ok: false, code, message: error.message };
    return { id, ok: false, code: 'KEY_INVALID', message: 'the value could not be read as a key' };
  }
}
