// Public surface of the localnet node part: start a network or a node, build and read genesis
// files and key Secrets. Everything else is internal to the node.
export {
  NetStartError,
  startNet,
  type LocalNet,
  type NetNode,
  type StartNetOptions,
} from './net.ts';
export { startNode, type RunningNode, type StartNodeOptions } from './server.ts';
export { LocalnetNode, type LocalnetNodeOptions, type DebugAction } from './node.ts';
export {
  buildGenesis,
  expandServiceUrl,
  genesisHash,
  parseGenesis,
  DEFAULT_SERVICE_URL_TEMPLATE,
  GenesisError,
  type BuildGenesisOptions,
  type Genesis,
  type GenesisAccount,
  type GenesisActor,
  type ValidatorSlot,
} from './genesis.ts';
export { readKeysSecret, SecretKeysError } from './secret-keys.ts';
export { PacemakerMode, isPacemakerMode } from './pacemaker.ts';
export { Fidelity, fidelityProfile, isFidelity, type FidelityProfile } from './fidelity.ts';
export { RPC_VERSION } from './rpc-server.ts';
export { runP1, type P1Environment } from './cli/p1-program.ts';
