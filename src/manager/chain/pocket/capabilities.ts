// What the chain can do, as data the planner and the adapters read (docs/design.md §The chain port):
// never guessed from answers, taken from the configured profile (CM_POCKET_V1_PROFILE).

import type { ChainCapabilities } from '../../model.ts';

/** Which Pocket V1 the manager talks to, as far as its capabilities go. */
export const PocketProfile = { intended: 'intended', v1: 'v1' } as const;
export type PocketProfile = (typeof PocketProfile)[keyof typeof PocketProfile];

/**
 * How a view is triggered on a manual pacemaker in RPC mode: a debug route of the node's RPC
 * (`POST /v1/debug/trigger_view`), or V1's DebugMessage to each validator of the address book.
 * In CLI mode the CLI does it (`p1 Debug TriggerView`).
 */
export type PocketViewTrigger = 'rpc-debug-route' | 'p2p-debug-message';

/**
 * The profiles. `intended` is Pocket V1 as designed (and the stand-in's default). `v1` is V1 as
 * its code runs at 58c9b650:
 * - no state sync: a node that was not a genesis validator stays at its height and never votes
 *   (state_sync/module.go:47-55, consensus/module.go:158-169);
 * - quorum over every validator row ever staked, unstaked ones included (consensus/helpers.go:
 *   128-134, persistence/types/actor_shared_sql.go:87-94);
 * - the leader's own vote never counts: it sends it to itself with `sendToLeader`
 *   (consensus/hotstuff_leader.go:96-102, 147-153, 198-204) through RainTree's `sendInternal`,
 *   which returns without sending when the address is its own (p2p/raintree/router.go:172-179),
 *   while the threshold is still `> 2/3 × len(validators)` (consensus/helpers.go:119-134);
 * - no debug RPC routes: a view is triggered by a DebugMessage sent to each validator over P2P
 *   (app/client/cli/debug.go), which the stand-in takes at `POST /p2p/v1/debug-message`.
 */
const PROFILES: Readonly<
  Record<
    PocketProfile,
    { readonly capabilities: ChainCapabilities; readonly viewTrigger: PocketViewTrigger }
  >
> = {
  intended: {
    capabilities: {
      profile: 'intended',
      lateJoinersVote: true,
      unstakeLeavesQuorum: true,
      leaderVoteCounts: true,
    },
    viewTrigger: 'rpc-debug-route',
  },
  v1: {
    capabilities: {
      profile: 'v1',
      lateJoinersVote: false,
      unstakeLeavesQuorum: false,
      leaderVoteCounts: false,
    },
    viewTrigger: 'p2p-debug-message',
  },
};

export function capabilitiesOf(profile: PocketProfile): ChainCapabilities {
  return PROFILES[profile].capabilities;
}

/** How the RPC sender of `profile` triggers a view. */
export function viewTriggerOf(profile: PocketProfile): PocketViewTrigger {
  return PROFILES[profile].viewTrigger;
}

/** The capabilities the planner assumes when none are given (the intended chain). */
export const INTENDED_CAPABILITIES: ChainCapabilities = PROFILES.intended.capabilities;
