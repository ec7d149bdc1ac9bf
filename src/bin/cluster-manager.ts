#!/usr/bin/env node
// Entry point of `cluster-manager`: wires the commands of each part into one program.
import { createProgram, runProgram } from '../cli/program.ts';
import { registerDevnetCommand } from '../devnet/command.ts';
import { registerAwaitDepartureCommand } from '../manager/cli/await-departure.ts';
import { registerDebugCommands } from '../manager/cli/debug-commands.ts';
import { registerKeysCommands } from '../manager/cli/keys-commands.ts';
import { registerTxCommands } from '../manager/cli/tx-commands.ts';
import { registerRunCommand } from '../manager/cli/run-command.ts';
import { registerEmulatorCommand } from './emulator-command.ts';

const program = createProgram(
  'cluster-manager',
  "Keeps a localnet chain's staked validators in step with its Kubernetes StatefulSet.",
);
registerRunCommand(program);
registerDebugCommands(program);
registerAwaitDepartureCommand(program);
registerDevnetCommand(program);
registerEmulatorCommand(program);
registerKeysCommands(program);
registerTxCommands(program);

await runProgram(program, process.argv);
