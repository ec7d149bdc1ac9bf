// A node's data dir (`--data-dir`, a StatefulSet volume per ordinal): which chain it belongs to
// (`chain.json`), and what happens to a folder left by another chain (set aside, never mixed).
// Layout: chain.json, vote-guard.json (vote-guard.ts), blocks.log (block-store.ts),
// other-chains/<time>-<genesis hash prefix>/ (folders set aside). Everything is written with
// write-to-temp, fsync, rename, so a crash leaves the old file or the new one.
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

/** Named failures of a data dir; the node stops with the code and the path (exit 2). */
export const DataDirErrorCode = {
  /** The block log does not parse or does not replay onto the genesis: move it aside or delete it. */
  corrupt: 'DATA_DIR_CORRUPT',
  /** The folder cannot be created, read or written. */
  unusable: 'DATA_DIR_UNUSABLE',
} as const;
export type DataDirErrorCode = (typeof DataDirErrorCode)[keyof typeof DataDirErrorCode];

export class DataDirError extends Error {
  readonly code: DataDirErrorCode;
  readonly path: string;
  constructor(code: DataDirErrorCode, path: string, detail: string) {
    super(`${code}: ${path}: ${detail}`);
    this.name = 'DataDirError';
    this.code = code;
    this.path = path;
  }
}

/** The code logged when a folder of another chain is set aside (a warning, not a failure). */
export const OTHER_CHAIN = 'DATA_DIR_OTHER_CHAIN';

const CHAIN_FILE = 'chain.json';
export const OTHER_CHAINS_DIR = 'other-chains';
/** Folders of earlier chains kept; older ones are removed (a genesis change per `tilt up`). */
const KEEP_OTHER_CHAINS = 3;

interface ChainFile {
  format: 1;
  genesisHash: string;
  chainId: string;
}

export interface OpenedDataDir {
  dir: string;
  /** Where a folder of another chain was moved, when one was. */
  setAside: { from: string; to: string } | undefined;
}

/**
 * Opens `dir` for the chain `genesisHash`: creates it (0700) if needed; a folder written for
 * another genesis is moved whole to `other-chains/` first (its guard and blocks mean nothing to
 * this chain, and mixing them would look like a fork), then `chain.json` names this chain.
 */
export function openDataDir(
  dir: string,
  genesis: { hash: string; chainId: string },
): OpenedDataDir {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error: unknown) {
    throw new DataDirError(DataDirErrorCode.unusable, dir, errorText(error));
  }
  const current = readChainFile(dir);
  let setAside: OpenedDataDir['setAside'];
  // Data without a chain file (a guard from before chain.json existed) is kept: the guard checks
  // its own chain field, and a block log replays from this genesis or fails by name.
  if (current !== undefined && current.genesisHash !== genesis.hash) {
    setAside = setAsideFolder(dir, current.genesisHash);
  }
  if (current?.genesisHash !== genesis.hash) {
    writeFileAtomic(
      join(dir, CHAIN_FILE),
      `${JSON.stringify({ format: 1, genesisHash: genesis.hash, chainId: genesis.chainId } satisfies ChainFile)}\n`,
    );
  }
  return { dir, setAside };
}

function readChainFile(dir: string): ChainFile | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, CHAIN_FILE), 'utf8');
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new DataDirError(DataDirErrorCode.unusable, join(dir, CHAIN_FILE), errorText(error));
  }
  try {
    const parsed = JSON.parse(text) as Partial<ChainFile>;
    if (typeof parsed.genesisHash === 'string' && parsed.genesisHash !== '') {
      return { format: 1, genesisHash: parsed.genesisHash, chainId: String(parsed.chainId) };
    }
  } catch {
    // fall through: an unreadable chain file is a corrupt folder
  }
  throw new DataDirError(
    DataDirErrorCode.corrupt,
    join(dir, CHAIN_FILE),
    'not a chain file written by localnet-node',
  );
}

/** Moves every entry but `other-chains/` into `other-chains/<time>-<hash16>/`; keeps the last 3. */
function setAsideFolder(dir: string, oldHash: string): { from: string; to: string } {
  const parent = join(dir, OTHER_CHAINS_DIR);
  // Named by time first, so that sorting the names sorts them oldest first.
  const target = join(
    parent,
    `${new Date().toISOString().replaceAll(':', '')}-${oldHash.slice(0, 16)}`,
  );
  try {
    mkdirSync(target, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(dir)) {
      if (name !== OTHER_CHAINS_DIR) renameSync(join(dir, name), join(target, name));
    }
    const kept = readdirSync(parent).sort();
    for (const old of kept.slice(0, Math.max(0, kept.length - KEEP_OTHER_CHAINS))) {
      rmSync(join(parent, old), { recursive: true, force: true });
    }
    fsyncDir(dir);
  } catch (error: unknown) {
    throw new DataDirError(DataDirErrorCode.unusable, dir, `cannot set aside: ${errorText(error)}`);
  }
  return { from: dir, to: target };
}

/** Write-then-rename with fsync of the file and its folder: the old content or the new, whole. */
export function writeFileAtomic(path: string, content: string): void {
  const temp = `${path}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

/** Makes a rename or a new file in `dir` durable (the folder entry itself is fsynced). */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a folder; the rename itself is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function errorText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code === undefined ? message : `${code} (${message})`;
}
