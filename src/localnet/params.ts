// V1's default chain parameters (build/localnet/manifests/configs.yaml), in V1's genesis order.

/** The `*_owner` value every V1 LocalNet parameter has. */
export const PARAM_OWNER = 'da034209758b78eaea06dd99c07909ab54c99b45';

const VALUES: ReadonlyArray<readonly [string, string | number]> = [
  ['blocks_per_session', 1],
  ['app_minimum_stake', '15000000000'],
  ['app_max_chains', 15],
  ['app_session_tokens_multiplier', 100],
  ['app_unstaking_blocks', 2016],
  ['app_minimum_pause_blocks', 4],
  ['app_max_pause_blocks', 672],
  ['servicer_minimum_stake', '15000000000'],
  ['servicer_max_chains', 15],
  ['servicer_unstaking_blocks', 2016],
  ['servicer_minimum_pause_blocks', 4],
  ['servicer_max_pause_blocks', 672],
  ['servicers_per_session', 24],
  ['fisherman_minimum_stake', '15000000000'],
  ['fisherman_max_chains', 15],
  ['fisherman_unstaking_blocks', 2016],
  ['fisherman_minimum_pause_blocks', 4],
  ['fisherman_max_pause_blocks', 672],
  ['fisherman_per_session', 1],
  ['validator_minimum_stake', '15000000000'],
  ['validator_unstaking_blocks', 2016],
  ['validator_minimum_pause_blocks', 4],
  ['validator_max_pause_blocks', 672],
  ['validator_maximum_missed_blocks', 5],
  ['validator_max_evidence_age_in_blocks', 8],
  ['proposer_percentage_of_fees', 10],
  ['missed_blocks_burn_percentage', 1],
  ['double_sign_burn_percentage', 5],
  ['message_double_sign_fee', '10000'],
  ['message_send_fee', '10000'],
  ['message_stake_fisherman_fee', '10000'],
  ['message_edit_stake_fisherman_fee', '10000'],
  ['message_unstake_fisherman_fee', '10000'],
  ['message_pause_fisherman_fee', '10000'],
  ['message_unpause_fisherman_fee', '10000'],
  ['message_fisherman_pause_servicer_fee', '10000'],
  ['message_test_score_fee', '10000'],
  ['message_prove_test_score_fee', '10000'],
  ['message_stake_app_fee', '10000'],
  ['message_edit_stake_app_fee', '10000'],
  ['message_unstake_app_fee', '10000'],
  ['message_pause_app_fee', '10000'],
  ['message_unpause_app_fee', '10000'],
  ['message_stake_validator_fee', '10000'],
  ['message_edit_stake_validator_fee', '10000'],
  ['message_unstake_validator_fee', '10000'],
  ['message_pause_validator_fee', '10000'],
  ['message_unpause_validator_fee', '10000'],
  ['message_stake_servicer_fee', '10000'],
  ['message_edit_stake_servicer_fee', '10000'],
  ['message_unstake_servicer_fee', '10000'],
  ['message_pause_servicer_fee', '10000'],
  ['message_unpause_servicer_fee', '10000'],
  ['message_change_parameter_fee', '10000'],
];

/** Names whose owner parameter V1 spells differently from `<name>_owner`. */
const OWNER_NAMES: Readonly<Record<string, string>> = {
  app_max_pause_blocks: 'app_max_paused_blocks_owner',
  servicer_max_pause_blocks: 'servicer_max_paused_blocks_owner',
  fisherman_max_pause_blocks: 'fisherman_max_paused_blocks_owner',
  validator_max_pause_blocks: 'validator_max_paused_blocks_owner',
};

/** V1's parameter values plus their `*_owner` entries (acl_owner first), as a genesis holds them. */
export function defaultParams(): Record<string, string | number> {
  const params: Record<string, string | number> = Object.fromEntries(VALUES);
  params.acl_owner = PARAM_OWNER;
  for (const [name] of VALUES) params[OWNER_NAMES[name] ?? `${name}_owner`] = PARAM_OWNER;
  return params;
}
