// Finding private keys where they must never be: log files, argv. Every form a key could take in
// text is searched for: the 128-hex private key, its 64-hex seed half, either case, and the
// base64 the Secret stores it as.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface KeyLeak {
  /** Where it was found (a file path or `argv of pid N`). */
  where: string;
  /** Which key (the Secret's id). */
  id: string;
  /** Which form matched. */
  form: string;
}

export interface Needle {
  id: string;
  form: string;
  text: string;
}

/** The strings that would betray each key (id → 128-hex private key). */
export function keyNeedles(keys: ReadonlyMap<string, string>): Needle[] {
  const needles: Needle[] = [];
  for (const [id, hex] of keys) {
    const lower = hex.toLowerCase();
    needles.push(
      { id, form: 'private key (hex)', text: lower },
      { id, form: 'private key (HEX)', text: lower.toUpperCase() },
      { id, form: 'seed (hex)', text: lower.slice(0, 64) },
      { id, form: 'seed (HEX)', text: lower.slice(0, 64).toUpperCase() },
      { id, form: 'Secret value (base64)', text: Buffer.from(hex).toString('base64') },
    );
  }
  return needles;
}

/** Every needle found in `text`. */
export function findKeys(text: string, needles: readonly Needle[], where: string): KeyLeak[] {
  return needles
    .filter((needle) => text.includes(needle.text))
    .map(({ id, form }) => ({ where, id, form }));
}

/**
 * Scans files (missing ones are skipped) and every `*.log` in the given folders — or, with
 * `recursive`, every file below them.
 */
export async function scanFilesForKeys(
  paths: readonly string[],
  folders: readonly string[],
  needles: readonly Needle[],
  options: { recursive?: boolean } = {},
): Promise<{ leaks: KeyLeak[]; scanned: string[] }> {
  const files = new Set(paths);
  for (const folder of folders) {
    const entries = await readdir(folder, { recursive: options.recursive === true }).catch(
      () => [] as string[],
    );
    for (const entry of entries)
      if (options.recursive === true || entry.endsWith('.log')) files.add(join(folder, entry));
  }
  const leaks: KeyLeak[] = [];
  const scanned: string[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    scanned.push(file);
    leaks.push(...findKeys(text, needles, file));
  }
  return { leaks, scanned };
}
