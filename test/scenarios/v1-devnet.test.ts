// Issue 13's "Done when", against `devnet --fidelity v1` in RPC mode (CLI mode:
// v1-devnet-cli.test.ts; the suite is support/v1-scenario.ts): the nodes behave as V1's Go
// code does (no state sync for late joiners, every row ever staked in the quorum, no debug RPC
// routes, the mempool query's 135 while anything is pending), the manager runs with
// CM_CHAIN_PROFILE=v1, reads the chain at validator-001, and drives views on the manual pacemaker
// V1's way (a DebugMessage to each validator). With four genesis validators: `scale 5` stakes 005
// once and the chain keeps committing with 005 silent; `scale 7` stakes nothing that would halt
// the chain and answers at once with NO_STATE_SYNC; `scale 4` unstakes 005 once and the chain
// keeps committing. Everything is asserted on the chain (heights, committed transactions, signers).
import { v1DevnetSuite } from './support/v1-scenario.ts';

v1DevnetSuite('rpc');
