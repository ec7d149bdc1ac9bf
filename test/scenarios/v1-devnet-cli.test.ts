// `devnet --fidelity v1 --validators 7` in CLI mode: the manager sends through localnet-cli run as
// `p1` (its v1 mode) with CONFIG_PATH/GENESIS_PATH — the config V1's chart renders, whose
// `p2p.hostname` is "" (charts/pocket/values.yaml:98) — and drives views with `p1 Debug
// TriggerView`, which creates a P2P module from that config first: it makes blocks only because
// the manager sets POCKET_P2P_HOSTNAME=127.0.0.1, as V1's cli-client does
// (build/localnet/manifests/cli-client.yaml:84-86). The suite: support/v1-scenario.ts (the
// four-validator refusals send nothing and run in RPC mode only, v1-devnet.test.ts).
import { v1DevnetSuite } from './support/v1-scenario.ts';

v1DevnetSuite('cli');
