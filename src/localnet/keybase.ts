// localnet-cli's keybase: one file per key under `<data_dir>/keys/` (dir 0700, files 0600), named
// by address. Keys are stored unarmoured (V1's debug keybase uses an empty passphrase, which
// protects nothing either); the file mode is the protection. One file per key means concurrent
// imports never overwrite each other.
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePrivateKey, type ValidatorKey } from '../pocket/index.ts';

interface KeyFile {
  address: string;
  public_key: string;
  private_key: string;
}

const ADDRESS_RE = /^[0-9a-f]{40}$/;

export function keybaseDir(dataDir: string): string {
  return join(dataDir, 'keys');
}

/** Stores a key; returns its address. Creates the directory 0700 and the file 0600. */
export function importKey(dataDir: string, key: ValidatorKey): string {
  const dir = keybaseDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  const file: KeyFile = {
    address: key.address,
    public_key: key.publicKeyHex,
    private_key: key.exportPrivateKeyHex(),
  };
  const target = join(dir, `${key.address}.json`);
  const temp = `${target}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(file)}\n`, { mode: 0o600, flag: 'w' });
  chmodSync(temp, 0o600);
  renameSync(temp, target);
  return key.address;
}

/** The key stored for `address` (any case), or undefined. */
export function findKey(dataDir: string, address: string): ValidatorKey | undefined {
  const normalized = address.toLowerCase();
  if (!ADDRESS_RE.test(normalized)) return undefined;
  let text: string;
  try {
    text = readFileSync(join(keybaseDir(dataDir), `${normalized}.json`), 'utf8');
  } catch {
    return undefined;
  }
  const file = JSON.parse(text) as Partial<KeyFile>;
  const key = parsePrivateKey(file.private_key);
  return key.address === normalized ? key : undefined;
}

/** Parses what `Keys Import --import_format raw` reads: hex, optionally quoted, whitespace trimmed. */
export function parseRawKeyInput(text: string): ValidatorKey {
  const trimmed = text.trim();
  const unquoted = /^"[^"]*"$/.test(trimmed) ? trimmed.slice(1, -1).trim() : trimmed;
  return parsePrivateKey(unquoted);
}
