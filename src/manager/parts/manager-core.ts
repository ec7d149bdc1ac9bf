// What the parts of one manager share, built once by Manager (manager.ts) and handed to the
// reconcile loop and the read model: the configuration and the services (log, clock, metrics),
// the chain port and the chain view, discovery, the journal and what is kept in it (the action
// book, when keys were seen, the pause), who leads, and the events the readers follow.
import type { EventEmitter } from 'node:events';
import type { ChainView } from '../chain/chain-view.ts';
import type { ChainPort } from '../chain/port.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DiscoverySource } from '../discovery/port.ts';
import type { KeyObservations } from '../keys/key-observations.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { DesiredState } from '../model.ts';
import type { PauseState } from '../pause/pause-state.ts';
import type { ReadModelEvents } from '../read-model.ts';
import type { ActionBook } from '../reconcile/action-book.ts';
import type { JournalBinding } from './journal-binding.ts';
import type { LeaderElection } from './leader-election.ts';

export interface ManagerCore {
  config: Config;
  logger: Logger;
  clock: Clock;
  metrics: Metrics;
  chainPort: ChainPort;
  /** The chain view (its listener calls the loop's onBlocks, onHeight, onTrust, refreshPhases). */
  chain: ChainView;
  /** Where the validators, their keys and Events come from and go (discovery/port.ts). */
  discovery: DiscoverySource;
  journal: JournalBinding;
  book: ActionBook;
  keys: KeyStore;
  keyObservations: KeyObservations;
  pause: PauseState;
  election: LeaderElection;
  /** Where `height`, `trust`, `phase`, `action` and `paused` are told. */
  events: EventEmitter<ReadModelEvents>;
  /** The desired state at the last recompute (parts/desired-intake.ts). */
  desired(): DesiredState;
}
