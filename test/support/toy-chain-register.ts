// Registers the toy chain (toy-chain-http.ts) with the registry, for a process started as
// `node --import ./test/support/toy-chain-register.ts src/bin/cluster-manager.ts run` with
// CM_CHAIN=toy: the way a chain outside this repository joins `cluster-manager run`
// (src/manager/chain/registry.ts; docs/adr/0031-a-chain-joins-run-by-an-imported-module.md).
import { registerChain } from '../../src/manager/chain/registry.ts';
import { toyChainDefinition } from './toy-chain-http.ts';

registerChain(toyChainDefinition);
