// localnet-cli `Validator Stake|EditStake|Unstake|Unpause`: sign with the keybase's key,
// broadcast, print p1's `HTTP status code: N` and body.
import type { Command } from 'commander';
import {
  editStakeMessage,
  signTransaction,
  stakeMessage,
  unpauseMessage,
  unstakeMessage,
  type PocketMessage,
  type ValidatorKey,
} from '../../pocket/index.ts';
import { findKey } from '../keybase.ts';
import { command, exactArgs, type CommandContext, type P1Environment } from './p1-context.ts';
import { P1Error, printBroadcast, request } from './p1-io.ts';

/** p1's recommendation below which Stake and EditStake ask for confirmation (uPOKT). */
const STAKING_RECOMMENDATION = 15_100_000_000n;

export function validatorCommand(context: CommandContext): Command {
  const lookup = (address: string): ValidatorKey => {
    const key = findKey(context.dataDir(), address);
    if (key === undefined) throw new P1Error(`no key found with address: ${address}`);
    return key;
  };
  const broadcast = async (key: ValidatorKey, message: PocketMessage) => {
    const tx = signTransaction({ key, message });
    const answer = await request('POST', `${context.remote()}/v1/client/broadcast_tx_sync`, {
      body: { address: key.address, raw_hex_bytes: tx.hex },
    });
    printBroadcast(context.environment.output, answer);
  };
  const stakeLike = (name: 'Stake' | 'EditStake') =>
    command(name, [name.toLowerCase()], `${name} <fromAddr> <amount> <relayChainIDs> <serviceURI>`)
      .argument('[args...]')
      .option('--pwd <passphrase>', 'a non-empty value also skips the low-amount confirmation')
      .option('--keybase <type>', 'accepted for compatibility (file only)')
      .action(async (args: string[], flags: { pwd?: string }) => {
        exactArgs(args, 4);
        const [fromAddr, amount, rawChains, serviceUrl] = args as [string, string, string, string];
        const key = lookup(fromAddr);
        await confirmAmount(context.environment, amount, flags.pwd ?? '');
        const chains = rawChains.replace(/[^,a-fA-F0-9]+/g, '').split(',');
        await broadcast(
          key,
          name === 'Stake'
            ? stakeMessage({
                publicKey: key.publicKey,
                amount,
                chains,
                serviceUrl,
                outputAddress: key.addressBytes,
                signer: key.addressBytes,
              })
            : editStakeMessage({
                address: Uint8Array.from(Buffer.from(fromAddr, 'hex')),
                amount,
                chains,
                serviceUrl,
                signer: key.addressBytes,
              }),
        );
      });
  const addressOnly = (name: 'Unstake' | 'Unpause') =>
    command(name, [name.toLowerCase()], `${name} <fromAddr>`)
      .argument('[args...]')
      .option('--pwd <passphrase>', 'accepted for compatibility')
      .option('--keybase <type>', 'accepted for compatibility (file only)')
      .action(async (args: string[]) => {
        exactArgs(args, 1);
        const key = lookup(args[0] ?? '');
        const fields = { address: key.addressBytes, signer: key.addressBytes };
        await broadcast(key, name === 'Unstake' ? unstakeMessage(fields) : unpauseMessage(fields));
      });
  return command('Validator', ['validator', 'ACTOR_TYPE_VAL'], 'Validator actor specific commands')
    .addCommand(stakeLike('Stake'))
    .addCommand(stakeLike('EditStake'))
    .addCommand(addressOnly('Unstake'))
    .addCommand(addressOnly('Unpause'));
}

/**
 * p1's `validateStakeAmount`: below the recommendation it asks y/n on stdin, whatever
 * `--non_interactive` says; a non-empty `--pwd` skips the question. EOF or "no" aborts.
 */
export async function confirmAmount(
  environment: P1Environment,
  amount: string,
  pwd: string,
): Promise<void> {
  if (!/^[+-]?\d+$/.test(amount)) {
    throw new P1Error(`error converting string to big int: ${JSON.stringify(amount)}`);
  }
  if (BigInt(amount) >= STAKING_RECOMMENDATION || pwd.trim() !== '') return;
  const { out } = environment.output;
  out(
    `The amount you are staking for is below the recommendation of ${STAKING_RECOMMENDATION / 1_000_000n} POKT, would you still like to continue? y|n\n`,
  );
  for (;;) {
    out('yes | no\n');
    const line = await environment.readLine();
    if (line === undefined) {
      out('Error reading string:  EOF\n');
      throw new P1Error('aborted');
    }
    const answer = line.trim().toLowerCase();
    if (answer === 'y' || answer === 'yes') return;
    if (answer === 'n' || answer === 'no') throw new P1Error('aborted');
  }
}
