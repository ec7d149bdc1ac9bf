// `cluster-manager keys inspect|generate`: offline tools for validator keys and their Secret. The
// commands are declared here; their work (Pocket keys, YAML) is loaded only when one runs
// (keys-actions.ts), so that every other `cluster-manager` call starts without it.
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import { readSecretArgument } from '../../../../cli/input.ts';
import { CliError, examples, ExitCode, UsageError } from '../../../../cli/program.ts';
import { POCKET_ID_SPEC } from '../id-format.ts';

/** The most keys a generated Secret holds: one per id of Pocket V1's (chain/pocket/id-format.ts). */
const MOST_KEYS = POCKET_ID_SPEC.max - POCKET_ID_SPEC.min + 1;

/** Default name of the keys Secret, as on Pocket's LocalNet. */
export const DEFAULT_KEYS_SECRET = 'validators-private-keys';

export function registerKeysCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description('Inspect and generate validator keys (offline).')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager keys generate --count 8 > keys.yaml', 'a keys Secret of 8 validators'],
        ['cluster-manager keys inspect - < key.hex', 'public key and address of a key'],
      ]),
    );

  keys
    .command('inspect')
    .description(
      'Print the public key and address of a private key. Use `-` to read it from standard input.',
    )
    .argument('<key>', '`-` (standard input) or a file holding the 128-hex key')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager keys inspect - < key.hex', 'from standard input'],
        ['cluster-manager keys inspect ./key.hex', 'from a file (never the key itself)'],
      ]),
    )
    .action(async (source: string) => {
      const { inspectKey } = await import('./keys-actions.ts');
      process.stdout.write(
        `${JSON.stringify(inspectKey(await readSecretArgument(source, 'key')))}\n`,
      );
    });

  keys
    .command('generate')
    .description(
      "Write a Kubernetes Secret manifest of validator keys in the layout of Pocket's LocalNet.",
    )
    .requiredOption('--count <n>', `number of keys, ids "001" onwards (1-${MOST_KEYS})`, parseCount)
    .option('--seed <phrase>', 'derive the keys deterministically from this phrase')
    .option('--name <name>', 'Secret name', DEFAULT_KEYS_SECRET)
    .option('--namespace <ns>', 'Secret namespace (omitted when not given)')
    .option('--out <file>', 'write to this file (mode 0600) instead of standard output')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager keys generate --count 32 --out keys.yaml', '32 fresh keys'],
        ['cluster-manager keys generate --count 4 --seed demo', 'the same 4 keys every time'],
      ]),
    )
    .action(
      async (options: {
        count: number;
        seed?: string;
        name: string;
        namespace?: string;
        out?: string;
      }) => {
        const { generateKeysSecret } = await import('./keys-actions.ts');
        const manifest = generateKeysSecret(options);
        if (options.out === undefined) process.stdout.write(manifest);
        else await writePrivate(options.out, manifest);
      },
    );
}

/**
 * Writes private keys to `path` with mode 0600 — also over an existing file (whose mode
 * `writeFile` would keep: a 0644 keys.yaml stayed readable by all): written aside, then renamed.
 */
async function writePrivate(path: string, text: string): Promise<void> {
  const aside = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(aside, text, { mode: 0o600, flag: 'wx' });
    await rename(aside, path);
  } catch (error: unknown) {
    await rm(aside, { force: true });
    throw new CliError(
      `cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      ExitCode.failed,
    );
  }
}

function parseCount(value: string): number {
  const count = Number(value);
  if (!/^\d+$/.test(value) || count < 1 || count > MOST_KEYS)
    throw new UsageError(
      `--count must be an integer from 1 to ${MOST_KEYS}, got ${JSON.stringify(value)}`,
    );
  return count;
}
