#!/usr/bin/env node
// Entry point of `localnet-node`: run a node, write a genesis, or start a local network.
import { runProgram } from '../cli/program.ts';
import { createNodeProgram } from '../localnet/cli/node-program.ts';

await runProgram(createNodeProgram(), process.argv);
