// The chains `CM_CHAIN` can select, by name. Pocket V1 is built in; another chain registers its
// definition (chain/definition.ts) before the configuration is read — a program embedding the
// manager calls `registerChain`, and `cluster-manager run` takes one from a module it is started
// with (`node --import ./my-chain.ts …`, the way the system tests register their toy chain).
import type { ChainDefinition } from './definition.ts';
import { pocketV1 } from './pocket/definition.ts';

/** The chain `CM_CHAIN` selects when it is unset. */
export const DEFAULT_CHAIN = 'pocket-v1';

/** The chains every build has (documented in docs/configuration.md). */
export const BUILT_IN_CHAINS: readonly ChainDefinition[] = [pocketV1];

const chains = new Map<string, ChainDefinition>(
  BUILT_IN_CHAINS.map((chain) => [chain.name, chain]),
);

/**
 * Adds a chain; a name or a variable already taken by another chain is refused. Answers how to
 * take it out again (a test that registers a chain leaves the registry as it found it).
 */
export function registerChain(definition: ChainDefinition): () => void {
  if (chains.has(definition.name))
    throw new RangeError(`a chain named ${definition.name} is already registered`);
  const taken = new Set(
    [...chains.values()].flatMap((chain) =>
      chain.settings.flatMap((s) => [s.env, s.alias?.env]).filter((env) => env !== undefined),
    ),
  );
  for (const setting of definition.settings)
    for (const env of [setting.env, setting.alias?.env])
      if (env !== undefined && taken.has(env))
        throw new RangeError(`chain ${definition.name}: ${env} is another chain's setting`);
  chains.set(definition.name, definition);
  return () => {
    if (chains.get(definition.name) === definition) chains.delete(definition.name);
  };
}

/** The chain registered under `name`, if any. */
export function chainNamed(name: string): ChainDefinition | undefined {
  return chains.get(name);
}

/** Every registered chain, built in first. */
export function knownChains(): readonly ChainDefinition[] {
  return [...chains.values()];
}
