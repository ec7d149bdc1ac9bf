// The node's committed blocks on disk: an append-only log (`blocks.log` in the data dir), one
// checksummed line per committed block or late certificate signature, fsynced before the next
// append. A restart replays it onto the genesis, so the node resumes at its own height. V1 keeps
// a block store too (persistence/blockstore/block_store.go: height → block in a key-value store,
// written by PostgresContext.Commit in persistence/context.go before its SQL state commits).
import { crc32 } from 'node:zlib';
import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { CertSignature, CommittedBlock } from './block.ts';
import { DataDirError, DataDirErrorCode, errorText, fsyncDir } from './data-dir.ts';
import { parseCommittedBlock } from './wire.ts';

export const BLOCK_LOG = 'blocks.log';

/** What the log holds, in order. */
export type StoredRecord =
  | { kind: 'block'; block: Omit<CommittedBlock, 'hash'> }
  | { kind: 'signature'; height: number; signature: CertSignature };

export interface LoadedLog {
  records: StoredRecord[];
  /** Bytes of a torn last line (a crash mid-append) that were cut off; 0 when none. */
  truncatedBytes: number;
}

/**
 * One line is `<crc32 of the JSON, 8 hex> <JSON>\n`. A last line without its newline or with a
 * bad checksum is a torn append and is cut off; a bad line with good lines after it is
 * corruption, which the node refuses to guess about.
 */
function encode(value: object): string {
  const json = JSON.stringify(value);
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

function decode(line: string): unknown {
  const space = line.indexOf(' ');
  if (space !== 8) return undefined;
  const json = line.slice(9);
  if (crc32(json).toString(16).padStart(8, '0') !== line.slice(0, 8)) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

function parseRecord(value: unknown): StoredRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as { b?: unknown; s?: unknown };
  if (record.b !== undefined) {
    const block = parseCommittedBlock(record.b);
    return block === undefined ? undefined : { kind: 'block', block };
  }
  const s = record.s as { height?: unknown; address?: unknown; signature?: unknown } | undefined;
  if (
    s !== undefined &&
    Number.isSafeInteger(s.height) &&
    typeof s.address === 'string' &&
    typeof s.signature === 'string'
  ) {
    return {
      kind: 'signature',
      height: s.height as number,
      signature: { address: s.address, signature: s.signature },
    };
  }
  return undefined;
}

export class BlockStore {
  readonly path: string;
  #fd: number;
  /** Size of the log up to its last whole record. */
  #size: number;
  #broken: string | undefined;

  private constructor(path: string, fd: number, size: number) {
    this.path = path;
    this.#fd = fd;
    this.#size = size;
  }

  /**
   * Opens (creating) the log in `dir` and reads it. A torn tail is cut off here, so the next
   * append starts on a clean line. Throws `DataDirError` (DATA_DIR_CORRUPT) for anything else.
   */
  static open(dir: string): { store: BlockStore; loaded: LoadedLog } {
    const path = join(dir, BLOCK_LOG);
    let fd: number;
    let text: string;
    try {
      fd = openSync(path, 'a+', 0o600);
      text = readFileSync(path, 'utf8');
    } catch (error: unknown) {
      throw new DataDirError(DataDirErrorCode.unusable, path, errorText(error));
    }
    try {
      const loaded = BlockStore.#parse(path, text);
      const size = Buffer.byteLength(text) - loaded.truncatedBytes;
      if (loaded.truncatedBytes > 0) {
        ftruncateSync(fd, size);
        fdatasyncSync(fd);
      }
      fsyncDir(dir);
      return { store: new BlockStore(path, fd, size), loaded };
    } catch (error: unknown) {
      closeSync(fd);
      throw error;
    }
  }

  static #parse(path: string, text: string): LoadedLog {
    const records: StoredRecord[] = [];
    let offset = 0;
    let height = 0;
    while (offset < text.length) {
      const end = text.indexOf('\n', offset);
      const line = end === -1 ? text.slice(offset) : text.slice(offset, end);
      const isLast = end === -1 || end === text.length - 1;
      const record = end === -1 ? undefined : parseRecord(decode(line));
      if (record === undefined) {
        if (isLast) {
          return { records, truncatedBytes: Buffer.byteLength(text.slice(offset)) };
        }
        throw new DataDirError(
          DataDirErrorCode.corrupt,
          path,
          `unreadable record after height ${height} (byte ${Buffer.byteLength(text.slice(0, offset))})`,
        );
      }
      if (record.kind === 'block') {
        const h = record.block.block.header.height;
        if (h !== height + 1) {
          throw new DataDirError(
            DataDirErrorCode.corrupt,
            path,
            `block ${h} follows block ${height}`,
          );
        }
        height = h;
      } else if (record.height < 1 || record.height > height) {
        throw new DataDirError(
          DataDirErrorCode.corrupt,
          path,
          `a signature for height ${record.height} after block ${height}`,
        );
      }
      records.push(record);
      offset = end + 1;
    }
    return { records, truncatedBytes: 0 };
  }

  /** Appends a committed block and makes it durable before returning. */
  appendBlock(committed: CommittedBlock): void {
    this.#append({ b: { block: committed.block, qc: committed.qc } });
  }

  /** Appends a precommit that joined a committed block's certificate after it committed. */
  appendSignature(height: number, signature: CertSignature): void {
    this.#append({ s: { height, ...signature } });
  }

  /** Why appends stopped (a write failed), if they did; the node logs it once. */
  get broken(): string | undefined {
    return this.#broken;
  }

  /**
   * A failed write (disk full, I/O error) cuts the log back to its last whole record and stops
   * appending: what is on disk stays a prefix of the chain, and a restart syncs the rest from
   * peers. Throws the DataDirError once; later appends are skipped silently.
   */
  #append(record: object): void {
    if (this.#broken !== undefined) return;
    const bytes = Buffer.from(encode(record));
    try {
      let written = 0;
      while (written < bytes.length) {
        written += writeSync(this.#fd, bytes, written, bytes.length - written, null);
      }
      fdatasyncSync(this.#fd);
      this.#size += bytes.length;
    } catch (error: unknown) {
      this.#broken = errorText(error);
      try {
        ftruncateSync(this.#fd, this.#size);
      } catch {
        // The next open cuts a torn tail anyway.
      }
      throw new DataDirError(
        DataDirErrorCode.unusable,
        this.path,
        `append failed: ${this.#broken}`,
      );
    }
  }

  /** Empties the log (reset to genesis starts a new history). */
  clear(): void {
    ftruncateSync(this.#fd, 0);
    fdatasyncSync(this.#fd);
    this.#size = 0;
    this.#broken = undefined;
  }

  /** Bytes on disk (for diagnostics and the write-cost benchmark). */
  size(): number {
    return fstatSync(this.#fd).size;
  }

  close(): void {
    if (this.#fd === -1) return;
    closeSync(this.#fd);
    this.#fd = -1;
  }
}
