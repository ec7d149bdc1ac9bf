// Validator keys decoded from the keys Secret as it changes. A malformed entry is isolated: it is
// reported once (until its value changes) and every other key keeps working.
import { createHash } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { isPocketError, parsePrivateKey, type ValidatorKey } from '../../pocket/index.ts';
import type { ValidatorId } from '../model.ts';

export type KeyEntry =
  | { readonly id: ValidatorId; readonly ok: true; readonly key: ValidatorKey }
  | {
      readonly id: ValidatorId;
      readonly ok: false;
      readonly code: string;
      readonly message: string;
    };

/** A key problem that has not been reported yet. */
export interface KeyProblem {
  readonly id: ValidatorId;
  readonly code: string;
  readonly message: string;
}

const ID_RE = /^\d{3}$/;

/** Holds the parsed keys of the current Secret version. */
export class KeyStore {
  #entries = new Map<ValidatorId, KeyEntry>();
  #byAddress = new Map<string, ValidatorId>();
  /** Digest of each value already parsed, so an unchanged value is not parsed or reported twice. */
  #digests = new Map<ValidatorId, string>();
  #secretSeen = false;
  #version: string | undefined;

  /** True once the Secret has been read at least once (it may not exist). */
  get loaded(): boolean {
    return this.#secretSeen;
  }

  get version(): string | undefined {
    return this.#version;
  }

  get(id: ValidatorId): KeyEntry | undefined {
    return this.#entries.get(id);
  }

  idOfAddress(address: string): ValidatorId | undefined {
    return this.#byAddress.get(address);
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
  update(secret: V1Secret | undefined): { changed: ValidatorId[]; newProblems: KeyProblem[] } {
    this.#secretSeen = true;
    this.#version = secret?.metadata?.resourceVersion;
    const data = secret?.data ?? {};
    const changed: ValidatorId[] = [];
    const newProblems: KeyProblem[] = [];
    const next = new Map<ValidatorId, KeyEntry>();
    const digests = new Map<ValidatorId, string>();

    for (const [name, encoded] of Object.entries(data)) {
      if (!ID_RE.test(name)) continue; // other entries of the Secret are not validator keys
      const digest = createHash('sha256').update(encoded).digest('hex');
      digests.set(name, digest);
      const previous = this.#entries.get(name);
      if (previous !== undefined && this.#digests.get(name) === digest) {
        next.set(name, previous);
        continue;
      }
      const entry = parseEntry(name, encoded);
      next.set(name, entry);
      changed.push(name);
      if (!entry.ok) newProblems.push({ id: name, code: entry.code, message: entry.message });
    }
    for (const id of this.#entries.keys()) if (!next.has(id)) changed.push(id);

    this.#entries = next;
    this.#digests = digests;
    this.#byAddress = new Map();
    for (const entry of next.values())
      if (entry.ok) this.#byAddress.set(entry.key.address, entry.id);
    return { changed, newProblems };
  }
}

function parseEntry(id: ValidatorId, encoded: string): KeyEntry {
  const text = Buffer.from(encoded, 'base64').toString('utf8');
  try {
    return { id, ok: true, key: parsePrivateKey(text) };
  } catch (error: unknown) {
    if (isPocketError(error)) return { id, ok: false, code: error.code, message: error.message };
    return { id, ok: false, code: 'KEY_INVALID', message: 'the value could not be read as a key' };
  }
}
