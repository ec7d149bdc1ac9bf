// Issues 13 and 29's "Done when" against `devnet --fidelity v1` in RPC mode (CLI mode:
// v1-devnet-cli.test.ts; the suites and their story: support/v1-scenario.ts). Four genesis
// validators: every scale V1's quorum cannot survive (`scale 5` however asked, `scale 3`, `kubectl
// scale 5`) is refused at once with the arithmetic and nothing reaches a block. Seven: `scale 8`
// stakes 008 once (followed by hash past V1's 135), `scale 9` is refused, `scale 7` unstakes 008.
import { fourGenesisSuite, sevenGenesisSuite } from './support/v1-scenario.ts';

fourGenesisSuite('rpc');
sevenGenesisSuite('rpc');
