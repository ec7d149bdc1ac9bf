// Pocket V1 as a selectable chain (`CM_CHAIN=pocket-v1`, the default): its own settings, named
// `CM_POCKET_V1_…` / `--pocket-v1-…`, each keeping the name it had before chains were selectable
// as an alias (CM_TX_MODE, CM_CLI_PATH, CM_STAKE_AMOUNT…); its ids, its error codes, and its port.
import type { Static, TObject } from 'typebox';
import { defineChain } from '../definition.ts';
import { amount, duration, list, maybe, oneOf, path } from '../../settings.ts';
import { PocketProfile } from './capabilities.ts';
import { POCKET_ID_SPEC } from './id-format.ts';
import { pocketChain } from './pocket-chain.ts';
import { PocketErrors } from './pocket-errors.ts';
import { pocketStake, UPOKT } from './pocket-stake.ts';

/** How Pocket V1's transactions go out: signed here and broadcast, or through the node's CLI. */
export const TxMode = { rpc: 'rpc', cli: 'cli' } as const;
export type TxMode = (typeof TxMode)[keyof typeof TxMode];

const settings = {
  profile: oneOf([PocketProfile.intended, PocketProfile.v1] as const, {
    env: 'CM_POCKET_V1_PROFILE',
    flag: 'pocket-v1-profile',
    alias: { env: 'CM_CHAIN_PROFILE', flag: 'chain-profile' },
    default: 'intended',
    description:
      'What the chain can do. intended: late joiners sync and vote, an unstaked row leaves the quorum, views by the debug RPC route. v1: Pocket V1 as its code runs (no state sync for late joiners, every row ever staked counts in the quorum, views by a debug message to each validator).',
  }),
  txMode: oneOf([TxMode.rpc, TxMode.cli] as const, {
    env: 'CM_POCKET_V1_TX_MODE',
    flag: 'pocket-v1-tx-mode',
    alias: { env: 'CM_TX_MODE', flag: 'tx-mode' },
    default: 'rpc',
    description: 'Send transactions by signing them here (rpc) or through the node CLI (cli).',
  }),
  cliPath: maybe(
    path({
      env: 'CM_POCKET_V1_CLI_PATH',
      flag: 'pocket-v1-cli-path',
      alias: { env: 'CM_CLI_PATH', flag: 'cli-path' },
      absolute: true,
      description: 'Absolute path of the node CLI (p1 or localnet-cli); required in cli mode.',
    }),
  ),
  cliTimeoutMs: duration({
    env: 'CM_POCKET_V1_CLI_TIMEOUT',
    flag: 'pocket-v1-cli-timeout',
    alias: { env: 'CM_CLI_TIMEOUT', flag: 'cli-timeout' },
    default: '30s',
    description: 'Time limit of one CLI call; it is then terminated (SIGKILL 2 s later).',
  }),
  cliConfigPath: maybe(
    path({
      env: 'CM_POCKET_V1_CLI_CONFIG_PATH',
      flag: 'pocket-v1-cli-config-path',
      alias: { env: 'CM_CLI_CONFIG_PATH', flag: 'cli-config-path' },
      absolute: true,
      description:
        "Node config file given to the CLI as CONFIG_PATH; p1's Debug commands (TriggerView) exit 1 without it.",
    }),
  ),
  cliGenesisPath: maybe(
    path({
      env: 'CM_POCKET_V1_CLI_GENESIS_PATH',
      flag: 'pocket-v1-cli-genesis-path',
      alias: { env: 'CM_CLI_GENESIS_PATH', flag: 'cli-genesis-path' },
      absolute: true,
      description:
        "Genesis file given to the CLI as GENESIS_PATH; p1's Debug commands (TriggerView) exit 1 without it.",
    }),
  ),
  stakeAmount: amount({
    env: 'CM_POCKET_V1_STAKE_AMOUNT',
    flag: 'pocket-v1-stake-amount',
    alias: { env: 'CM_STAKE_AMOUNT', flag: 'stake-amount' },
    denomination: UPOKT,
    default: '150000000001',
    description: `Stake amount in ${UPOKT} (1 POKT = 10^6 ${UPOKT}), bare or followed by "${UPOKT}".`,
  }),
  relayChains: list({
    env: 'CM_POCKET_V1_RELAY_CHAINS',
    flag: 'pocket-v1-relay-chains',
    alias: { env: 'CM_STAKE_CHAINS', flag: 'stake-chains' },
    default: '0001',
    description: 'Comma-separated relay chain ids put in stake transactions.',
  }),
};

/** The `pocket-v1` chain's settings as its definition reads them (`Config.chainSettings`). */
export type PocketV1Settings = Static<TObject<typeof settings>>;

/** `chainSettings` of a configuration whose chain is `pocket-v1`, typed (for tests and tools). */
export function pocketV1Settings(
  chainSettings: Readonly<Record<string, unknown>>,
): PocketV1Settings {
  return chainSettings as PocketV1Settings;
}

export const pocketV1 = defineChain({
  name: 'pocket-v1',
  summary:
    'Pocket Network V1 (pokt-network/pocket): its RPC for reads, transactions signed here or sent with its CLI (p1).',
  settings,
  problems: (values, refused) =>
    values.txMode === TxMode.cli && values.cliPath === undefined && !refused.has('cliPath')
      ? [
          'CM_POCKET_V1_CLI_PATH (or CM_CLI_PATH) is required when CM_POCKET_V1_TX_MODE (or CM_TX_MODE) is "cli" (absolute path of the node CLI)',
        ]
      : [],
  ids: POCKET_ID_SPEC,
  errors: PocketErrors,
  port: (rpcUrl, values) =>
    pocketChain({
      rpcUrl,
      profile: values.profile,
      stake: pocketStake(values.stakeAmount, values.relayChains),
      cli:
        values.txMode === TxMode.cli && values.cliPath !== undefined
          ? {
              path: values.cliPath,
              timeoutMs: values.cliTimeoutMs,
              configPath: values.cliConfigPath,
              genesisPath: values.cliGenesisPath,
            }
          : undefined,
    }),
});
