// Issues 13 and 29's "Done when" against `devnet --fidelity v1` in CLI mode: the manager sends
// through localnet-cli run as `p1` (its v1 mode) with CONFIG_PATH/GENESIS_PATH, and drives views
// with `p1 Debug TriggerView`, which loads those files first. Seven genesis validators, so that
// transactions are really sent: `scale 8` stakes 008 once, `scale 9` is refused, `scale 7`
// unstakes 008 once (support/v1-scenario.ts; the four-validator refusals send nothing and run in
// RPC mode, v1-devnet.test.ts).
import { sevenGenesisSuite } from './support/v1-scenario.ts';

sevenGenesisSuite('cli');
