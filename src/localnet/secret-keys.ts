// Reads validator keys from a Kubernetes Secret manifest (V1's `validators-private-keys` shape):
// `stringData` holds the 128-hex values, `data` their base64; ids are the keys ("001"…).
import { parseAllDocuments } from 'yaml';
import { parsePrivateKey, type ValidatorKey } from '../pocket/index.ts';

const ID_RE = /^\d{3}$/;

/** Why a Secret manifest could not be read. Messages name ids, never key material. */
export class SecretKeysError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeysError';
  }
}

/**
 * Parses every key of the first Secret in `text` (YAML, possibly several documents; a Secret
 * named `validators-private-keys` wins when there are several). Returns keys sorted by id.
 * Entries whose name is not a three-digit id are ignored.
 */
export function readKeysSecret(text: string): Map<string, ValidatorKey> {
  const secrets = parseManifest(text).filter(isSecret);
  const secret = secrets.find((s) => s.metadata?.name === 'validators-private-keys') ?? secrets[0];
  if (secret === undefined) throw new SecretKeysError('no Secret found in the manifest');
  const values = new Map<string, string>();
  for (const [id, value] of Object.entries(secret.data ?? {})) {
    if (ID_RE.test(id) && typeof value === 'string') {
      values.set(id, Buffer.from(value, 'base64').toString('utf8').trim());
    }
  }
  for (const [id, value] of Object.entries(secret.stringData ?? {})) {
    if (ID_RE.test(id) && typeof value === 'string') values.set(id, value.trim());
  }
  if (values.size === 0) throw new SecretKeysError('the Secret holds no "NNN" keys');
  const keys = new Map<string, ValidatorKey>();
  for (const id of [...values.keys()].sort()) {
    try {
      keys.set(id, parsePrivateKey(values.get(id)));
    } catch (error: unknown) {
      const reason = error instanceof Error ? error.message : 'invalid';
      throw new SecretKeysError(`key ${id}: ${reason}`);
    }
  }
  return keys;
}

/**
 * The documents of a YAML (or JSON) manifest. A syntax error or an unresolved alias is a
 * `SecretKeysError` naming the error's code and line only: the parser's own message quotes the
 * offending line, which could hold a key.
 */
function parseManifest(text: string): unknown[] {
  const invalid = (error: { code?: unknown; name?: unknown; linePos?: { line: number }[] }) => {
    const what =
      typeof error.code === 'string'
        ? error.code
        : typeof error.name === 'string'
          ? error.name
          : 'error';
    const line = error.linePos?.[0] === undefined ? '' : ` at line ${error.linePos[0].line}`;
    return new SecretKeysError(`the manifest is not valid YAML (${what}${line})`);
  };
  return parseAllDocuments(text).map((doc) => {
    const [first] = doc.errors;
    if (first !== undefined) throw invalid(first);
    try {
      return doc.toJS() as unknown;
    } catch (error: unknown) {
      throw invalid(error as { code?: unknown; name?: unknown });
    }
  });
}

interface SecretLike {
  kind: 'Secret';
  metadata?: { name?: string };
  data?: Record<string, unknown>;
  stringData?: Record<string, unknown>;
}

function isSecret(value: unknown): value is SecretLike {
  return (
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Secret'
  );
}
