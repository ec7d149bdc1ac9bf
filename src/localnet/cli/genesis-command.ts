// `localnet-node genesis`: a V1-shaped genesis JSON from a keys Secret manifest.
import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { UsageError } from '../../cli/program.ts';
import { buildGenesis, DEFAULT_SERVICE_URL_TEMPLATE } from '../genesis.ts';
import { readKeysFile } from './keys-file.ts';

interface GenesisFlags {
  keys: string;
  validators: string;
  serviceUrlTemplate: string;
  unstakingBlocks?: string;
  stakeAmount?: string;
  chainId?: string;
  genesisTime?: string;
  out?: string;
}

function wholeNumber(name: string, value: string, minimum: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < minimum)
    throw new UsageError(`${name} must be a whole number ≥ ${minimum}`);
  return n;
}

function parseTime(value: string): Date {
  const time = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(time.getTime())) {
    throw new UsageError(`--genesis-time must be an RFC 3339 time such as 2022-09-19T18:05:02Z`);
  }
  return time;
}

export function genesisCommand(): Command {
  return new Command('genesis')
    .description(
      'Write a genesis JSON in V1 shape: every key of the Secret funded, the first N staked.',
    )
    .requiredOption(
      '--keys <secret.yaml>',
      'Secret manifest with the validator keys ("001": <128 hex>)',
    )
    .requiredOption('--validators <n>', 'how many of the first ids are staked at genesis')
    .option(
      '--service-url-template <template>',
      'service_url of each validator; {id}, {index}, {ordinal}',
      DEFAULT_SERVICE_URL_TEMPLATE,
    )
    .option('--unstaking-blocks <n>', 'validator_unstaking_blocks (default 2016)')
    .option('--stake-amount <upokt>', 'stake of each genesis validator (default 1000000000000)')
    .option('--chain-id <id>', 'chain_id (default testnet)')
    .option(
      '--genesis-time <iso>',
      'genesis time (RFC 3339); fixed for reproducible genesis files (default: now, a new chain)',
    )
    .option('--out <file>', 'write here instead of stdout')
    .action(async (flags: GenesisFlags) => {
      const keys = await readKeysFile(flags.keys);
      const genesis = buildGenesis({
        keys,
        validators: wholeNumber('--validators', flags.validators, 1),
        serviceUrl: flags.serviceUrlTemplate,
        ...(flags.unstakingBlocks === undefined
          ? {}
          : { unstakingBlocks: wholeNumber('--unstaking-blocks', flags.unstakingBlocks, 0) }),
        ...(flags.stakeAmount === undefined ? {} : { stakeAmount: flags.stakeAmount }),
        ...(flags.chainId === undefined ? {} : { chainId: flags.chainId }),
        ...(flags.genesisTime === undefined ? {} : { genesisTime: parseTime(flags.genesisTime) }),
      });
      const json = `${JSON.stringify(genesis, null, 2)}\n`;
      if (flags.out === undefined) process.stdout.write(json);
      else writeFileSync(flags.out, json);
    });
}
