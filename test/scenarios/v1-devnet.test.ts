// `devnet --fidelity v1` in RPC mode (CLI mode: v1-devnet-cli.test.ts; the suites are
// support/v1-scenario.ts): the nodes behave as V1's Go code does — the leader of a round never
// counts its own vote, late joiners never vote, every row ever staked counts toward the quorum,
// no debug RPC routes, the mempool query's 135 while anything is pending — and the manager runs
// with CM_POCKET_V1_PROFILE=v1, reads the chain at validator-001, and drives views on the manual
// pacemaker V1's way (a DebugMessage to each validator). Four genesis validators survive no late
// joiner: every scale V1 cannot survive (`scale 5` however asked, `scale 3`, `kubectl scale 5`) is
// refused at once with the arithmetic and nothing reaches a block. Seven survive one: `scale 8`
// stakes 008 once and the chain keeps committing with 008 silent; `scale 9` is refused; `scale 7`
// unstakes 008 once and the chain keeps committing. Everything is asserted on the chain.
import { fourGenesisSuite, v1DevnetSuite } from './support/v1-scenario.ts';

fourGenesisSuite('rpc');
v1DevnetSuite('rpc');
