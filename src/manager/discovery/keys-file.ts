// The keys file of static discovery (`--keys-file`): a Secret manifest as `cluster-manager keys
// generate` writes it (stringData or base64 data, keyed "001"…), or a plain map of id → key.
// Read into the keys' text by id (port.ts's KeySet) for the KeyStore, which checks each key on its own. A file that
// users other than its owner may read or write is refused, as ssh refuses a private key file
// (OpenSSH authfile.c, sshkey_perm_ok: `(st.st_mode & 077) != 0`). No message carries a key.
import { constants } from 'node:fs';
import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import type { IdFormat } from '../model.ts';
import type { KeySet } from './port.ts';
import { DiscoveryFileCode, DiscoveryFileError, isRecord } from './discovery-file-error.ts';

/** Refuses a keys file others may read or write (throws KEYS_FILE_INSECURE). */
export function checkKeysFileMode(path: string, mode: number): void {
  const type = mode & constants.S_IFMT; // 0 when only permission bits are given
  if (type !== 0 && type !== constants.S_IFREG)
    throw new DiscoveryFileError(DiscoveryFileCode.keysInvalid, path, [
      'cannot read it (not a regular file: a directory, a FIFO or a device)',
    ]);
  if ((mode & 0o077) !== 0)
    throw new DiscoveryFileError(DiscoveryFileCode.keysInsecure, path, [
      `users other than its owner may read or write it (mode ${(mode & 0o777).toString(8).padStart(3, '0')}); chmod 600 it`,
    ]);
}

/** Parses the file's text into the keys (id → the key's text), versioned by their digest. */
export function parseKeysFile(path: string, text: string, ids: IdFormat): KeySet {
  let document: unknown;
  try {
    document = parse(text);
  } catch {
    // The parser's message may quote the text around the error: a key. Say where only.
    throw invalid(path, ['not YAML or JSON']);
  }
  if (!isRecord(document))
    throw invalid(path, ['expected a Secret manifest or a map of validator id to key']);
  const keys =
    document.kind === 'Secret' ? fromSecret(path, document) : fromMap(path, document, ids);
  const digest = createHash('sha256').update(JSON.stringify(keys)).digest('hex').slice(0, 16);
  return { keys, version: digest, writtenBy: undefined };
}

/** A Secret: `data` (base64) and `stringData` (text, which wins, as the API server merges them). */
function fromSecret(path: string, secret: Record<string, unknown>): Record<string, string> {
  const problems: string[] = [];
  const data: Record<string, string> = {};
  for (const field of ['data', 'stringData'] as const) {
    const map = secret[field];
    if (map === undefined || map === null) continue;
    if (!isRecord(map)) {
      problems.push(`"${field}" must be a map of id to key`);
      continue;
    }
    for (const [name, value] of Object.entries(map)) {
      if (typeof value !== 'string') {
        problems.push(`${field}["${name}"] must be a string`);
        continue;
      }
      // Other entries of the Secret are not validator keys (the KeyStore skips them too).
      data[name] = field === 'data' ? Buffer.from(value, 'base64').toString('utf8') : value;
    }
  }
  if (problems.length > 0) throw invalid(path, problems);
  return data;
}

/** A plain map: every name must be a validator id ("005", or 5 as YAML reads 005). */
function fromMap(
  path: string,
  map: Record<string, unknown>,
  ids: IdFormat,
): Record<string, string> {
  const problems: string[] = [];
  const data: Record<string, string> = {};
  for (const [name, value] of Object.entries(map)) {
    const id = ids.fromText(name);
    if (id === undefined) {
      problems.push(
        `"${name.slice(0, 40)}" is not a validator id ${ids.range.min}…${ids.range.max}`,
      );
      continue;
    }
    if (data[id] !== undefined) {
      problems.push(`id ${id} is given twice`);
      continue;
    }
    if (typeof value !== 'string') {
      problems.push(`the key of ${id} must be a string (quote it)`);
      continue;
    }
    data[id] = value.trim();
  }
  if (problems.length > 0) throw invalid(path, problems);
  return data;
}

function invalid(path: string, problems: string[]): DiscoveryFileError {
  return new DiscoveryFileError(DiscoveryFileCode.keysInvalid, path, problems);
}
