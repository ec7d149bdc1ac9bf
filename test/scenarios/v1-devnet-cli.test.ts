// Issue 13's "Done when" against `devnet --fidelity v1` in CLI mode: the manager sends through
// localnet-cli run as `p1` (its v1 mode) with CONFIG_PATH/GENESIS_PATH, and drives views with
// `p1 Debug TriggerView`, which loads those files first. The suite: support/v1-scenario.ts.
import { v1DevnetSuite } from './support/v1-scenario.ts';

v1DevnetSuite('cli');
