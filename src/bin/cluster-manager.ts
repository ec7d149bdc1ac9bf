#!/usr/bin/env node
// Entry point of `cluster-manager`: wires the commands of each part into one program.
import { createProgram, runProgram } from '../cli/program.ts';

const program = createProgram(
  'cluster-manager',
  "Keeps a localnet chain's staked validators in step with its Kubernetes StatefulSet.",
);

await runProgram(program, process.argv);
