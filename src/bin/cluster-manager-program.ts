// The `cluster-manager` program: every part's commands wired into one commander tree (the entry
// point runs it; tests walk it for help texts, `--json` flags and completion).
import type { Command } from 'commander';
import type { Setting } from '../manager/config.ts';
import { createProgram, examples } from '../cli/program.ts';
import { registerDevnetCommand } from '../devnet/command.ts';
import { registerAwaitDepartureCommand } from '../manager/cli/await-departure.ts';
import { registerDebugCommands } from '../manager/cli/debug-commands.ts';
import { registerKeysCommands } from '../manager/chain/pocket/cli/keys-commands.ts';
import { registerRunCommand } from '../manager/cli/run-command.ts';
import { registerTxCommands } from '../manager/chain/pocket/cli/tx-commands.ts';
import { VERSION } from '../manager/version.ts';
import { registerEmulatorCommand } from './emulator-command.ts';

/** `runSettings`: the flags of `run` (config.ts's allSettings(); run-command.ts says when none). */
export function buildClusterManagerProgram(runSettings: readonly Setting[]): Command {
  const program = createProgram(
    'cluster-manager',
    "Keeps a localnet chain's staked validators in step with its Kubernetes StatefulSet.",
    VERSION,
  );
  registerRunCommand(program, runSettings);
  registerDebugCommands(program);
  registerAwaitDepartureCommand(program);
  registerDevnetCommand(program);
  registerEmulatorCommand(program);
  registerKeysCommands(program);
  registerTxCommands(program);
  program.addHelpText(
    'after',
    examples([
      ['npm start', 'a devnet on this machine (cluster-manager devnet)'],
      ['npx cluster-manager scale 6 --wait active', 'in a second terminal: it finds ./.devnet'],
      ['npx cluster-manager status', 'the chain, the pause, every validator'],
      ['npx cluster-manager logs 005 -f', "a validator's node log"],
      ['cluster-manager run', 'the service (CM_* env: docs/configuration.md)'],
    ]),
  );
  return program;
}
