// What a chain declares to be selectable by `CM_CHAIN` (chain/registry.ts): its name, its own
// settings (namespaced `CM_<NAME>_…`, `--<name>-…`, older names kept as aliases), its id format,
// the error codes only it raises, and how to build its port from a chain RPC URL and those
// settings. Everything the core needs of a chain is data here or a member of the port.
import { Type, type Static, type TObject, type TProperties } from 'typebox';
import type { DeclaredError } from '../errors.ts';
import type { IdFormatSpec } from '../model.ts';
import { settingsOf, type Setting } from '../settings.ts';
import type { ChainPort } from './port.ts';

/** A selectable chain, as the registry holds it. */
export interface ChainDefinition {
  /** What `CM_CHAIN` names it: lowercase letters, digits and dashes (`pocket-v1`). */
  readonly name: string;
  /** One line for `--help` and docs/configuration.md. */
  readonly summary: string;
  /** Its settings, in order: each env `CM_<NAME>_…` and flag `--<name>-…`. */
  readonly settings: readonly Setting[];
  /** The schema its settings' values satisfy (checked after reading, as the core's). */
  readonly schema: TObject;
  /** Problems only seen together (e.g. a path required by one value of another setting); `refused` had their own. */
  problems(values: Readonly<Record<string, unknown>>, refused: ReadonlySet<string>): string[];
  /** How its validator ids are written (data: the debug CLI reads it from `GET /v1/chain`). */
  readonly ids: IdFormatSpec;
  /** The error codes only this chain raises, beside the core's catalogue. */
  readonly errors: readonly DeclaredError[];
  /** Its port, for the chain RPC `rpcUrl` and its settings' values. */
  port(rpcUrl: string, values: Readonly<Record<string, unknown>>): ChainPort;
}

/** What a chain writes to define itself; `settings` are declared with settings.ts's helpers. */
export interface ChainDeclaration<P extends TProperties> {
  readonly name: string;
  readonly summary: string;
  readonly settings: P;
  readonly problems?: (values: Static<TObject<P>>, refused: ReadonlySet<string>) => string[];
  readonly ids: IdFormatSpec;
  readonly errors: Readonly<Record<string, DeclaredError>>;
  readonly port: (rpcUrl: string, values: Static<TObject<P>>) => ChainPort;
}

/** The prefix of a chain's variables: `pocket-v1` → `CM_POCKET_V1_`. */
export function envPrefixOf(name: string): string {
  return `CM_${name.toUpperCase().replaceAll('-', '_')}_`;
}

/**
 * A chain's definition from its declaration; throws when a setting is not in the chain's
 * namespace, so two chains (or a chain and the core) cannot claim the same variable.
 */
export function defineChain<P extends TProperties>(
  declaration: ChainDeclaration<P>,
): ChainDefinition {
  const { name } = declaration;
  if (!/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/.test(name))
    throw new RangeError(`a chain's name is lowercase letters, digits and dashes, got ${name}`);
  const settings = settingsOf(declaration.settings);
  for (const setting of settings) {
    if (!setting.env.startsWith(envPrefixOf(name)) || !setting.flag.startsWith(`${name}-`))
      throw new RangeError(
        `chain ${name}: setting ${setting.env} (--${setting.flag}) is not named ${envPrefixOf(name)}… (--${name}-…)`,
      );
  }
  type Values = Static<TObject<P>>;
  return {
    name,
    summary: declaration.summary,
    settings,
    schema: Type.Object(declaration.settings),
    problems: (values, refused) => declaration.problems?.(values as Values, refused) ?? [],
    ids: declaration.ids,
    errors: Object.values(declaration.errors),
    port: (rpcUrl, values) => declaration.port(rpcUrl, values as Values),
  };
}
