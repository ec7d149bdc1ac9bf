// The `localnet-node` program: run, genesis, net.
import type { Command } from 'commander';
import { createProgram } from '../../cli/program.ts';
import { genesisCommand } from './genesis-command.ts';
import { netCommand } from './net-command.ts';
import { runCommand } from './run-command.ts';

export function createNodeProgram(): Command {
  return createProgram(
    'localnet-node',
    'A Pocket V1 wire-compatible localnet node with multi-node BFT consensus.',
  )
    .addCommand(runCommand())
    .addCommand(genesisCommand())
    .addCommand(netCommand());
}
