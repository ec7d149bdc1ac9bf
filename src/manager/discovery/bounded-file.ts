// Reading static discovery's files without trusting what sits at their path: only a regular file
// (after symlinks) of at most MAX_FILE_BYTES is read. A FIFO would block the reader until someone
// writes to it (freezing discovery), and /dev/zero or a huge file would take the heap with it.
import { constants, closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** The largest validators or keys file read (1 MiB: thousands of validators). */
export const MAX_FILE_BYTES = 1024 * 1024;

/** The file at the path is not something to read: its `code` is what `cannot read it (…)` shows. */
export class UnreadableFileError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'UnreadableFileError';
    this.code = code;
  }
}

// O_NONBLOCK: opening a FIFO that replaced the file after a check must not wait for a writer.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

function checkStats(stats: { isFile(): boolean; size: number }): void {
  if (!stats.isFile())
    throw new UnreadableFileError(
      'not a regular file',
      'not a regular file (a FIFO, a device or a directory)',
    );
  if (stats.size > MAX_FILE_BYTES)
    throw new UnreadableFileError(
      `${stats.size} bytes, over the ${MAX_FILE_BYTES}-byte limit`,
      `the file is ${stats.size} bytes; the limit is ${MAX_FILE_BYTES}`,
    );
}

function tooLong(): UnreadableFileError {
  return new UnreadableFileError(
    `over the ${MAX_FILE_BYTES}-byte limit`,
    `the file grew past ${MAX_FILE_BYTES} bytes while it was read`,
  );
}

/** Reads a regular file of at most MAX_FILE_BYTES as UTF-8. */
export async function readBoundedFile(path: string): Promise<string> {
  const handle = await open(path, FLAGS);
  try {
    checkStats(await handle.stat());
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_FILE_BYTES) throw tooLong();
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}

/** The same, synchronously (the start-time check). */
export function readBoundedFileSync(path: string): string {
  const fd = openSync(path, FLAGS);
  try {
    checkStats(fstatSync(fd));
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const bytesRead = readSync(fd, buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_FILE_BYTES) throw tooLong();
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}
