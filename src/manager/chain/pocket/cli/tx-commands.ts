// `cluster-manager tx build|decode`: offline tools to make and read V1 transactions. The commands
// are declared here; their work (protobuf, signing) is loaded only when one runs (tx-actions.ts).
import type { Command } from 'commander';
import { readStdin, readSecretArgument, stripFinalNewline } from '../../../../cli/input.ts';
import { examples, UsageError } from '../../../../cli/program.ts';
import { isHex } from '../../../../pocket/bytes.ts';
import { isValidNonce } from '../../../../pocket/nonce.ts';

/** Stake amount (uPOKT) used when none is given: what Pocket's own cluster-manager stakes. */
export const DEFAULT_STAKE_AMOUNT = '150000000001';
export const DEFAULT_CHAINS = '0001';

interface BuildOptions {
  key: string;
  amount: string;
  chains: string;
  serviceUrl?: string;
  nonce?: string;
}

export function registerTxCommands(program: Command): void {
  const tx = program
    .command('tx')
    .description('Build and decode Pocket V1 transactions (offline).')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager tx build unstake --key - < key.hex', 'a signed unstake, as hex'],
        ['cluster-manager tx decode <hex>', 'what a transaction holds'],
      ]),
    );

  tx.command('build')
    .description(
      "Sign a stake or unstake transaction and print it as hex (the broadcast's raw_hex_bytes).",
    )
    .argument('<kind>', 'stake or unstake')
    .requiredOption(
      '--key <source>',
      '`-` to read the private key from standard input, or a file holding it',
    )
    .option('--amount <upokt>', 'stake amount in uPOKT (stake only)', DEFAULT_STAKE_AMOUNT)
    .option('--chains <ids>', 'comma-separated relay chain ids (stake only)', DEFAULT_CHAINS)
    .option('--service-url <host:port>', "the validator's service URL (stake only; required)")
    .option('--nonce <uint64>', 'decimal nonce (random when omitted)')
    .addHelpText(
      'after',
      examples([
        [
          'cluster-manager tx build stake --key - --service-url 10.0.0.5:42069 < key.hex',
          'a stake',
        ],
        ['cluster-manager tx build unstake --key ./key.hex', 'an unstake'],
      ]),
    )
    .action(async (kind: string, options: BuildOptions) => {
      if (kind !== 'stake' && kind !== 'unstake')
        throw new UsageError(`<kind> must be stake or unstake, got ${JSON.stringify(kind)}`);
      if (options.nonce !== undefined && !isValidNonce(options.nonce)) {
        throw new UsageError(
          `--nonce must be a decimal uint64, got ${JSON.stringify(options.nonce)}`,
        );
      }
      // The key is read and parsed before the stake's checks, as before: a key typed on the
      // command line, or a malformed one, is refused first.
      const { buildTransaction, parseKey } = await import('./tx-actions.ts');
      const key = parseKey(await readSecretArgument(options.key, 'key'));
      if (kind === 'stake') {
        if (options.serviceUrl === undefined || options.serviceUrl === '')
          throw new UsageError('stake needs --service-url <host:port>');
        if (!/^[1-9]\d*$/.test(options.amount))
          throw new UsageError(
            `--amount must be a positive integer of uPOKT, got ${JSON.stringify(options.amount)}`,
          );
      }
      const hex = buildTransaction(kind, options, key);
      process.stdout.write(`${hex}\n`);
    });

  tx.command('decode')
    .description(
      'Print a transaction (hex) as JSON: type, message, nonce, signer, signature validity, hash.',
    )
    .argument('<hex>', 'the transaction as hex, or `-` to read it from standard input')
    .addHelpText(
      'after',
      examples([
        ['cluster-manager tx decode 0a4c0a…', 'from the command line'],
        ['cluster-manager tx build unstake --key k.hex | cluster-manager tx decode -', 'piped'],
      ]),
    )
    .action(async (source: string) => {
      const text = source === '-' ? stripFinalNewline(await readStdin()).trim() : source;
      if (text === '' || !isHex(text))
        throw new UsageError('expected the transaction as an even number of hex digits');
      const { decodeTransaction } = await import('./tx-actions.ts');
      process.stdout.write(`${JSON.stringify(decodeTransaction(text), null, 2)}\n`);
    });
}
