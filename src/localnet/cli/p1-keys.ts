// localnet-cli `Keys Import`: a raw key from a file or stdin (never argv) into the keybase.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ValidatorKey } from '../../pocket/index.ts';
import { importKey, parseRawKeyInput } from '../keybase.ts';
import { command, type CommandContext } from './p1-context.ts';
import { P1Error } from './p1-io.ts';

export function keysCommand(context: CommandContext): Command {
  const importCommand = command(
    'Import',
    ['import'],
    'Imports a key from a file (--input_file, "-" for stdin) into the keybase',
  )
    .argument('[privateKeyString]')
    .option('--input_file <file>', 'file holding the key (hex); "-" reads stdin')
    .option('--import_format <format>', 'raw (json is not supported here)', 'raw')
    .option('--pwd <passphrase>', 'accepted for compatibility (keys are stored unarmoured, 0600)')
    .option('--hint <hint>', 'accepted for compatibility')
    .action(
      (positional: string | undefined, flags: { input_file?: string; import_format: string }) => {
        if (positional !== undefined) {
          throw new P1Error(
            'a private key argument would be visible in the process list; use --input_file <file> (or - for stdin)',
          );
        }
        if (flags.input_file === undefined) throw new P1Error('no input file or argument provided');
        const format = flags.import_format.toLowerCase();
        if (format === 'json') {
          throw new P1Error(
            'import format json (an armoured key) is not supported by localnet-cli; use raw',
          );
        }
        if (format !== 'raw')
          throw new P1Error(`invalid import format: got ${flags.import_format}, want [raw]/[json]`);
        let text: string;
        try {
          text = readFileSync(flags.input_file === '-' ? 0 : flags.input_file, 'utf8');
        } catch {
          throw new P1Error(`open ${flags.input_file}: no such file or directory`);
        }
        let key: ValidatorKey;
        try {
          key = parseRawKeyInput(text);
        } catch (error: unknown) {
          throw new P1Error(error instanceof Error ? error.message : 'invalid private key');
        }
        const address = importKey(context.dataDir(), key);
        context.environment.output.out(`Key imported 📥: ${address}\n`);
      },
    );
  return command('Keys', ['keys'], 'Key specific commands').addCommand(importCommand);
}
