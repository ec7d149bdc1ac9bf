// The emulator's objects on disk, as etcd keeps a real cluster's: a snapshot of the store (every
// object, with its uid and resourceVersion, and the global resourceVersion) written behind the
// writes and once more at stop, and read back by an emulator started on the same file — so a
// devnet started with `--resume` finds its StatefulSets, claims (same uids, so the same data
// folders), Secrets and annotations where it left them.
//
// Pods are not brought back: their processes ended with the emulator that ran them, so the
// controllers create them again (same names, new uids) from the objects that own them.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import type { Store } from './store.ts';
import type { KubeObject } from './types.ts';

/** The file's format; a file of another version is refused, never guessed at. */
const VERSION = 1;

export interface StoreSnapshot {
  version: typeof VERSION;
  /** The global resourceVersion when the snapshot was taken. */
  resourceVersion: number;
  objects: { storage: string; object: KubeObject }[];
}

/** The tables whose objects stand for processes that did not survive the emulator. */
const NOT_RESTORED = new Set(['/pods']);

/** A snapshot file that exists but cannot be used; its message says why and what to do. */
export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
}

/** Every object of the store now (the pods aside), and its resourceVersion. */
export function snapshotOf(store: Store): StoreSnapshot {
  const objects = store
    .tables()
    .filter((storage) => !NOT_RESTORED.has(storage))
    .flatMap((storage) => store.list(storage).map((object) => ({ storage, object })));
  return { version: VERSION, resourceVersion: store.resourceVersion, objects };
}

/**
 * The snapshot in `file`, or undefined when there is none. Read at start, before anything else
 * runs (synchronous). A file that is not a snapshot of this version is a SnapshotError.
 */
export function readSnapshot(file: string): StoreSnapshot | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SnapshotError(
      `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SnapshotError(`${file} is not JSON (cut short?)`);
  }
  const snapshot = parsed as Partial<StoreSnapshot> | null;
  if (
    snapshot?.version !== VERSION ||
    !Number.isSafeInteger(snapshot.resourceVersion) ||
    !Array.isArray(snapshot.objects) ||
    !snapshot.objects.every(
      (entry) =>
        typeof entry.storage === 'string' &&
        typeof entry.object.metadata.name === 'string' &&
        !NOT_RESTORED.has(entry.storage),
    )
  )
    throw new SnapshotError(
      `${file} is not a snapshot of this emulator's objects (format ${String(snapshot?.version)}, expected ${VERSION})`,
    );
  return snapshot as StoreSnapshot;
}

/**
 * Keeps `file` equal to the store's objects: written `delayMs` after a write (later writes join
 * that one) and on `stop()`, each time whole, to a file beside it that is then renamed into place
 * (a reader never sees half a file; a crash leaves the last whole one).
 */
export class StorePersistence {
  readonly #store: Store;
  readonly #file: string;
  readonly #delayMs: number;
  #unsubscribe: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  /** The resourceVersion of the last snapshot written. */
  #written = -1;

  constructor(store: Store, file: string, delayMs = 250) {
    this.#store = store;
    this.#file = file;
    this.#delayMs = delayMs;
  }

  start(): void {
    this.#unsubscribe = this.#store.subscribe(() => {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        void this.flush();
      }, this.#delayMs);
    });
    void this.flush();
  }

  /** Writes the store now unless nothing changed since the last write; resolves once on disk. */
  flush(): Promise<void> {
    this.#writing = this.#writing.then(() => this.#write()).catch(() => undefined);
    return this.#writing;
  }

  /** Stops following the store and writes it a last time. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  async #write(): Promise<void> {
    const snapshot = snapshotOf(this.#store);
    if (snapshot.resourceVersion === this.#written) return;
    const aside = `${this.#file}.${randomBytes(4).toString('hex')}`;
    await writeFile(aside, JSON.stringify(snapshot), { mode: 0o600 });
    await rename(aside, this.#file);
    this.#written = snapshot.resourceVersion;
  }
}
