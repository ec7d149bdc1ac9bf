// The work of `cluster-manager keys` (keys-commands.ts declares the commands): parsing and
// generating Pocket V1 keys and rendering their Secret.
import { stringify } from 'yaml';
import { UsageError } from '../../../../cli/program.ts';
import {
  generateKeys,
  isPocketError,
  parsePrivateKey,
  type ValidatorKey,
} from '../../../../pocket/index.ts';

/** `keys inspect`: the public key and address of a private key. */
export function inspectKey(text: string): { publicKey: string; address: string } {
  const key = parseKey(text);
  return { publicKey: key.publicKeyHex, address: key.address };
}

/** `keys generate`: a Secret manifest of `count` keys (deterministic with a seed). */
export function generateKeysSecret(options: {
  count: number;
  seed?: string | undefined;
  name: string;
  namespace?: string | undefined;
}): string {
  return renderKeysSecret({
    keys: generateKeys({ count: options.count, seed: options.seed }),
    name: options.name,
    namespace: options.namespace,
  });
}

/** Parses a key for a command, turning a malformed key into a usage error (exit 2). */
export function parseKey(text: string): ValidatorKey {
  try {
    return parsePrivateKey(text);
  } catch (error: unknown) {
    if (isPocketError(error)) throw new UsageError(`${error.code}: ${error.message}`);
    throw error;
  }
}

export interface KeysSecretOptions {
  keys: ReadonlyMap<string, ValidatorKey>;
  name: string;
  namespace?: string | undefined;
}

/**
 * Renders the Secret as Pocket's LocalNet writes it: `stringData` keyed "001"…, 128-hex values,
 * each line followed by the address and public key in a comment.
 */
export function renderKeysSecret(options: KeysSecretOptions): string {
  const metadata = {
    name: options.name,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  };
  const head = stringify({ apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque' });
  const lines = [...options.keys].map(
    ([id, key]) => `  "${id}": ${key.exportPrivateKeyHex()} # ${key.address} (${key.publicKeyHex})`,
  );
  return `${head}stringData:\n${lines.join('\n')}\n`;
}
