// Shared pieces of localnet-cli's commands: their context (environment, remote URL, data dir),
// cobra's argument-count check and command construction.
import { Command } from 'commander';
import type { DevnetEndpoints } from './devnet-file.ts';
import { P1Error, type Output } from './p1-io.ts';

export interface P1Environment {
  env: NodeJS.ProcessEnv;
  output: Output;
  /** Reads one line of stdin for p1's y/n prompt; `undefined` at EOF. */
  readLine: () => Promise<string | undefined>;
  /** Where `.devnet/devnet.json` is looked for (default: the process's working folder). */
  cwd?: string;
}

export interface CommandContext {
  environment: P1Environment;
  remote: () => string;
  dataDir: () => string;
  /** The devnet next to the CLI (`--devnet DIR`, default `.devnet`), if any. */
  devnet: () => DevnetEndpoints;
}

/** cobra's `ExactArgs(n)`. */
export function exactArgs(args: readonly string[], n: number): void {
  if (args.length !== n) throw new P1Error(`accepts ${n} arg(s), received ${args.length}`);
}

export function command(name: string, aliases: string[], description: string): Command {
  return new Command(name).aliases(aliases).description(description);
}
